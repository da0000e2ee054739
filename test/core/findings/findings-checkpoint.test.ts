// A findings index restored from its checkpoint, with the findings after the
// checkpoint's cursor added on top, answers every search as the index built
// from the whole log does; a corrupt checkpoint, or one of another log, is
// refused and changes nothing.
import { beforeAll, describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { MemoryArchive } from '../../../src/core/log/accepted-entries.js'
import { LogState } from '../../../src/core/log/log-state.js'
import { FindingsIndex, type FindingQuery, type FindingsIndexInit } from '../../../src/core/findings/findings-index.js'
import { decodeFindingsCheckpoint, encodeFindingsCheckpoint } from '../../../src/core/findings/findings-checkpoint.js'
import { FailedPreconditionError, InvalidArgumentError } from '../../../src/core/errors.js'
import type { StoredEntry } from '../../../src/core/log/ingest-result.js'
import { makeIdentities, type TestIdentity } from '../log/identities.js'

let ids: TestIdentity[]
beforeAll(async () => { ids = await makeIdentities(3) })

const WORDS = ['lease', 'gossip', 'vector', 'timeout', 'cursor', 'Parser', 'quorum', 'digest', 'backoff', 'leases', 'gosip', 'réseau', 'élan']
const KINDS = ['discovery', 'failure', 'bug', 'decision', 'note']

interface Step { author: number, finding: boolean, kind: number, words: number[], path: number, tag: number, supersedes: number }

const step = fc.record({
  author: fc.nat(2),
  finding: fc.nat(3).map(n => n > 0),
  kind: fc.nat(KINDS.length - 1),
  words: fc.array(fc.nat(WORDS.length - 1), { minLength: 1, maxLength: 6 }),
  path: fc.nat(5),
  tag: fc.nat(4),
  supersedes: fc.integer({ min: -3, max: 40 })
})

/** A log of the steps' entries (findings, and goals between them), in an archive. */
function buildLog (steps: Step[]): { log: LogState, entries: StoredEntry[] } {
  const log = new LogState({ archive: new MemoryArchive() })
  const findings: StoredEntry[] = []
  const entries: StoredEntry[] = []
  steps.forEach((s, i) => {
    const who = ids[s.author].signer
    const time = 1000 + (i * 7) % 13
    const e = s.finding
      ? log.append(who, 'finding', {
        kind: KINDS[s.kind],
        text: s.words.map(w => WORDS[w]).join(' ') + ` n${i}`,
        paths: s.path === 0 ? [] : [`src/p${s.path}/f.ts`],
        tags: s.tag === 0 ? [] : [`t${s.tag}`],
        supersedes: s.supersedes >= 0 && s.supersedes < findings.length ? findings[s.supersedes].id : ''
      }, time)
      : log.append(who, 'goal', { text: `goal ${i}` }, time)
    if (s.finding) findings.push(e)
    entries.push(e)
  })
  return { log, entries }
}

const QUERIES: FindingQuery[] = [
  { query: 'lease' }, { query: 'gossip vector' }, { query: 'leas' }, { query: 'gosip' }, { query: 'parser timeout quorum' },
  { query: 'réseau' }, { limit: 50 }, { kind: 'failure', limit: 50 }, { tag: 't2', limit: 50 }, { pathPrefix: 'src/p3', limit: 50 },
  { query: 'lease', author: '' }, { query: 'digest', since: 1003, until: 1010 }
]

/** Everything a reader of the index sees. */
function answers (index: FindingsIndex, entries: StoredEntry[]): unknown {
  return {
    size: index.size,
    counts: [...index.countsByKind()].sort(),
    searches: QUERIES.map(q => index.search(q).map(h => [h.id, h.score, h.superseded])),
    failuresFirst: index.page({ query: 'lease gossip', limit: 30, offset: 2 }, { failuresFirst: true }).hits.map(h => h.id),
    byAuthor: index.search({ author: ids[1].id, limit: 100 }).map(h => h.id),
    members: entries.map(e => [index.has(e.id), index.isSuperseded(e.id)])
  }
}

function sourceOf (log: LogState): FindingsIndexInit {
  return { source: { entryAt: c => log.atCursor(c), cursorOf: id => log.cursorOf(id) } }
}

describe('a findings index checkpoint', () => {
  it('restored, with the findings after it added, answers as the index of the whole log (any log, any cut, small segments)', () => {
    fc.assert(fc.property(fc.array(step, { minLength: 1, maxLength: 60 }), fc.nat(), fc.integer({ min: 1, max: 9 }), (steps, cutAt, segmentDocs) => {
      const { log, entries } = buildLog(steps)
      const init = { ...sourceOf(log), segmentDocs }
      const whole = FindingsIndex.fromEntries(entries, init)
      const cut = cutAt % (entries.length + 1)
      // taken while the index holds findings past the cut (accepted, not yet on disk)
      const snap = whole.snapshot(cut)
      expect(snap).toBeDefined()
      const restored = FindingsIndex.fromSnapshot(decodeFindingsCheckpoint(encodeFindingsCheckpoint(snap!)), init, log)
      for (const e of entries) if (e.cursor > cut) restored.add(e)
      expect(answers(restored, entries)).toEqual(answers(whole, entries))
    }), { numRuns: 120 })
  })

  it('is refused when corrupt, of another log, or past the log', () => {
    const steps: Step[] = Array.from({ length: 30 }, (_, i) => ({ author: i % 3, finding: i % 4 !== 0, kind: i % 5, words: [i % 13, (i * 3) % 13], path: i % 6, tag: i % 5, supersedes: i % 7 === 0 ? i % 5 : -1 }))
    const { log, entries } = buildLog(steps)
    const init = sourceOf(log)
    const bytes = encodeFindingsCheckpoint(FindingsIndex.fromEntries(entries, init).snapshot(log.cursor)!)
    expect(FindingsIndex.fromSnapshot(decodeFindingsCheckpoint(bytes), init, log).size).toBe(entries.filter(e => e.entry.kind === 'finding').length)

    for (const at of [0, 9, 40, Math.floor(bytes.length / 2), bytes.length - 1]) {
      const bad = Uint8Array.from(bytes)
      bad[at] ^= 0x20
      expect(() => decodeFindingsCheckpoint(bad)).toThrow(InvalidArgumentError)
    }
    expect(() => decodeFindingsCheckpoint(bytes.subarray(0, bytes.length - 8))).toThrow(InvalidArgumentError)

    // another log with the same shape: other ids
    const other = buildLog(steps.map(s => ({ ...s, author: (s.author + 1) % 3 })))
    expect(() => FindingsIndex.fromSnapshot(decodeFindingsCheckpoint(bytes), sourceOf(other.log), other.log)).toThrow(FailedPreconditionError)
    // a log that holds fewer entries than the checkpoint covers
    const shorter = buildLog(steps.slice(0, 20))
    expect(() => FindingsIndex.fromSnapshot(decodeFindingsCheckpoint(bytes), sourceOf(shorter.log), shorter.log)).toThrow(FailedPreconditionError)
  })
})
