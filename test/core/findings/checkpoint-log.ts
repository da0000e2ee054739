// A log of findings for the checkpoint tests: generated steps, the log they
// make, and everything a reader of an index sees of it.
import fc from 'fast-check'
import { beforeAll } from 'vitest'
import { MemoryArchive } from '../../../src/core/log/accepted-entries.js'
import { LogState } from '../../../src/core/log/log-state.js'
import type { FindingQuery, FindingsIndex, FindingsIndexInit } from '../../../src/core/findings/findings-index.js'
import type { StoredEntry } from '../../../src/core/log/ingest-result.js'
import { makeIdentities, type TestIdentity } from '../../helpers/identity.js'

let ids: TestIdentity[] = []
/** Call at the top of a test file: makes the identities the logs are signed by. */
export function useIdentities(): void {
  beforeAll(async () => {
    ids = await makeIdentities(3)
  })
}

const WORDS = [
  'lease',
  'gossip',
  'vector',
  'timeout',
  'cursor',
  'Parser',
  'quorum',
  'digest',
  'backoff',
  'leases',
  'gosip',
  'réseau',
  'élan'
]
const KINDS = ['discovery', 'failure', 'bug', 'decision', 'note']

export interface Step {
  author: number
  finding: boolean
  kind: number
  words: number[]
  path: number
  tag: number
  supersedes: number
}

export const step = fc.record({
  author: fc.nat(2),
  finding: fc.nat(3).map(n => n > 0),
  kind: fc.nat(KINDS.length - 1),
  words: fc.array(fc.nat(WORDS.length - 1), { minLength: 1, maxLength: 6 }),
  path: fc.nat(5),
  tag: fc.nat(4),
  supersedes: fc.integer({ min: -3, max: 40 })
})

/** A log of the steps' entries (findings, and goals between them), in an archive. */
export function buildLog(steps: Step[]): { log: LogState; entries: StoredEntry[] } {
  const log = new LogState({ archive: new MemoryArchive() })
  const findings: StoredEntry[] = []
  const entries: StoredEntry[] = []
  steps.forEach((s, i) => {
    const who = ids[s.author].signer
    const time = 1000 + ((i * 7) % 13)
    const e = s.finding
      ? log.append(
          who,
          'finding',
          {
            kind: KINDS[s.kind],
            text: s.words.map(w => WORDS[w]).join(' ') + ` n${i}`,
            paths: s.path === 0 ? [] : [`src/p${s.path}/f.ts`],
            tags: s.tag === 0 ? [] : [`t${s.tag}`],
            supersedes: s.supersedes >= 0 && s.supersedes < findings.length ? findings[s.supersedes].id : ''
          },
          time
        )
      : log.append(who, 'goal', { text: `goal ${i}` }, time)
    if (s.finding) findings.push(e)
    entries.push(e)
  })
  return { log, entries }
}

const QUERIES: FindingQuery[] = [
  { query: 'lease' },
  { query: 'gossip vector' },
  { query: 'leas' },
  { query: 'gosip' },
  { query: 'parser timeout quorum' },
  { query: 'réseau' },
  { limit: 50 },
  { kind: 'failure', limit: 50 },
  { tag: 't2', limit: 50 },
  { pathPrefix: 'src/p3', limit: 50 },
  { query: 'lease', author: '' },
  { query: 'digest', since: 1003, until: 1010 }
]

/** Everything a reader of the index sees. */
export function answers(index: FindingsIndex, entries: StoredEntry[]): unknown {
  return {
    size: index.size,
    counts: [...index.countsByKind()].sort(),
    searches: QUERIES.map(q => index.search(q).map(h => [h.id, h.score, h.superseded])),
    failuresFirst: index.page({ query: 'lease gossip', limit: 30, offset: 2 }, { failuresFirst: true }).hits.map(h => h.id),
    byAuthor: index.search({ author: ids[1].id, limit: 100 }).map(h => h.id),
    members: entries.map(e => [index.has(e.id), index.isSuperseded(e.id)])
  }
}

export function sourceOf(log: LogState): FindingsIndexInit {
  return { source: { entryAt: c => log.atCursor(c), cursorOf: id => log.cursorOf(id) } }
}
