import { describe, expect, it, beforeAll } from 'vitest'
import { LogState } from '../../../src/core/log/log-state.js'
import { FindingsIndex } from '../../../src/core/findings/findings-index.js'
import { InvalidArgumentError } from '../../../src/core/errors.js'
import type { StoredEntry } from '../../../src/core/log/ingest-result.js'
import { makeIdentities, type TestIdentity } from '../../helpers/identity.js'
import { rng } from '../log/scenario.js'

let a: TestIdentity
let b: TestIdentity
beforeAll(async () => {
  ;[a, b] = await makeIdentities(2)
})

interface F {
  kind?: string
  text: string
  paths?: string[]
  tags?: string[]
  supersedes?: string
}

function record(log: LogState, who: TestIdentity, f: F, time: number): StoredEntry {
  return log.append(
    who.signer,
    'finding',
    { kind: f.kind ?? 'note', text: f.text, paths: f.paths ?? [], tags: f.tags ?? [], supersedes: f.supersedes ?? '' },
    time
  )
}

describe('FindingsIndex', () => {
  it('indexes finding entries only, once each', () => {
    const log = new LogState()
    const f = record(log, a, { text: 'gossip drops messages over 1 MiB' }, 1)
    const goal = log.append(a.signer, 'goal', { text: 'gossip everything' }, 2)
    const index = new FindingsIndex()
    expect(index.add(f)).toBe(true)
    expect(index.add(f)).toBe(false)
    expect(index.add(goal)).toBe(false)
    expect(index.size).toBe(1)
    expect(index.search({ query: 'gossip' }).map(h => h.id)).toEqual([f.id])
    expect(FindingsIndex.fromEntries(log.ordered()).size).toBe(1)
  })

  it('searches text, paths and tags, with prefix and fuzzy matching of words', () => {
    const log = new LogState()
    const bp = record(
      log,
      a,
      { text: 'yamux backpressure stalls the sync stream', paths: ['src/mesh/sync-protocol.ts'], tags: ['perf'] },
      1
    )
    const pb = record(log, a, { text: 'protobuf decoder rejects unknown fields', paths: ['src/store/codec.ts'], tags: ['api'] }, 2)
    const index = FindingsIndex.fromEntries(log.ordered())
    expect(index.search({ query: 'backpress' })[0]?.id).toBe(bp.id)
    expect(index.search({ query: 'protobof' })[0]?.id).toBe(pb.id)
    expect(index.search({ query: 'codec' })[0]?.id).toBe(pb.id)
    expect(index.search({ query: 'sync-protocol' })[0]?.id).toBe(bp.id)
    expect(index.search({ query: 'perf' })[0]?.id).toBe(bp.id)
    expect(index.search({ query: 'kubernetes' })).toEqual([])
  })

  it('filters by kind, path prefix, tag, author and time, and limits', () => {
    const log = new LogState()
    const f1 = record(
      log,
      a,
      { kind: 'failure', text: 'retry loop on lease expiry', paths: ['src/core/board/lease.ts'], tags: ['claims'] },
      1000
    )
    const f2 = record(
      log,
      b,
      { kind: 'bug', text: 'lease expiry uses wall clock', paths: ['./src/core/board/clock.ts'], tags: ['claims', 'time'] },
      2000
    )
    const f3 = record(
      log,
      a,
      { kind: 'decision', text: 'lease period is three heartbeats', paths: ['src/mesh/presence.ts'], tags: ['api'] },
      3000
    )
    const index = FindingsIndex.fromEntries(log.ordered())
    const ids = (q: Parameters<FindingsIndex['search']>[0]) =>
      index
        .search(q)
        .map(h => h.id)
        .sort()
    expect(ids({ query: 'lease' })).toEqual([f1.id, f2.id, f3.id].sort())
    expect(ids({ query: 'lease', kind: 'bug' })).toEqual([f2.id])
    expect(ids({ query: 'lease', pathPrefix: 'src/core/board' })).toEqual([f1.id, f2.id].sort())
    expect(ids({ query: 'lease', pathPrefix: './src/mesh/' })).toEqual([f3.id])
    expect(ids({ query: 'lease', tag: 'claims' })).toEqual([f1.id, f2.id].sort())
    expect(ids({ query: 'lease', author: b.id })).toEqual([f2.id])
    expect(ids({ query: 'lease', since: 2000 })).toEqual([f2.id, f3.id].sort())
    expect(ids({ query: 'lease', until: 2000 })).toEqual([f1.id, f2.id].sort())
    expect(ids({ query: 'lease', since: 1500, until: 2500 })).toEqual([f2.id])
    expect(index.search({ query: 'lease', limit: 2 })).toHaveLength(2)
    // without words: every finding that passes the filters, newest first
    expect(index.search({}).map(h => h.id)).toEqual([f3.id, f2.id, f1.id])
    expect(index.search({ tag: 'claims' }).map(h => h.id)).toEqual([f2.id, f1.id])
    expect(index.search({ query: '  ', author: a.id }).map(h => h.id)).toEqual([f3.id, f1.id])
  })

  it('flags superseded findings and ranks them after the others', () => {
    const log = new LogState()
    const old = record(log, a, { kind: 'decision', text: 'sync batches hold 500 entries entries entries' }, 1)
    const other = record(log, b, { text: 'sync batches are framed with varints' }, 2)
    const newer = record(log, a, { kind: 'decision', text: 'sync batches hold 1000 entries', supersedes: old.id }, 3)
    const index = FindingsIndex.fromEntries(log.ordered())
    const hits = index.search({ query: 'sync batches entries' })
    expect(hits.map(h => h.id)).toEqual([newer.id, other.id, old.id])
    expect(hits.map(h => h.superseded)).toEqual([false, false, true])
    expect(index.isSuperseded(old.id)).toBe(true)
    // the superseding finding may arrive first; the flag does not depend on order
    const reversed = FindingsIndex.fromEntries([...log.ordered()].reverse())
    expect(reversed.search({ query: 'sync batches entries' }).map(h => [h.id, h.superseded])).toEqual(hits.map(h => [h.id, h.superseded]))
  })

  it('refuses bad queries with a named error', () => {
    const index = new FindingsIndex()
    expect(() => index.search({ limit: -1 })).toThrow(InvalidArgumentError)
    expect(() => index.search({ limit: 5000 })).toThrow(InvalidArgumentError)
    expect(() => index.search({ since: 1.5 })).toThrow(InvalidArgumentError)
    expect(() => index.search({ query: 'x'.repeat(2000) })).toThrow(InvalidArgumentError)
    expect(index.search({ limit: 0 })).toEqual([])
  })
})

describe('relevance', () => {
  const WORDS = [
    'cache',
    'decoder',
    'stream',
    'memory',
    'leak',
    'yamux',
    'backpressure',
    'protobuf',
    'gossip',
    'peer',
    'sync',
    'batch',
    'lease',
    'claim',
    'timeout',
    'retry',
    'vector',
    'digest',
    'leveldb',
    'compaction',
    'test',
    'flaky',
    'signature',
    'verify',
    'queue',
    'worker',
    'socket',
    'reset',
    'buffer',
    'frame',
    'length',
    'prefix'
  ]
  const PATHS = ['src/mesh/sync.ts', 'src/mesh/gossip.ts', 'src/store/log-store.ts', 'src/core/log/entry.ts', 'src/api/server.ts']
  const FAILURES = [
    {
      text: 'Tried caching the protobuf decoder per stream: it leaks memory under yamux backpressure',
      query: 'protobuf decoder leaks memory'
    },
    { text: 'Retrying the LevelDB compaction on timeout corrupts the version vector digest', query: 'leveldb compaction corrupts' },
    { text: 'Verifying every signature inside the gossip worker queue starves the socket', query: 'signature gossip worker starves' }
  ]

  it('a few words of a recorded failure find it first among 200 other findings', () => {
    const random = rng(42)
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]
    const log = new LogState()
    for (let i = 0; i < 200; i++) {
      const text = Array.from({ length: 6 + Math.floor(random() * 10) }, () => pick(WORDS)).join(' ')
      record(
        log,
        i % 2 === 0 ? a : b,
        { kind: pick(['discovery', 'bug', 'note', 'failure']), text, paths: [pick(PATHS)], tags: [pick(['perf', 'api'])] },
        1000 + i
      )
    }
    const recorded = FAILURES.map((f, i) => record(log, a, { kind: 'failure', text: f.text, paths: [pick(PATHS)] }, 5000 + i))
    for (let i = 0; i < 100; i++) {
      record(log, b, { text: Array.from({ length: 8 }, () => pick(WORDS)).join(' ') }, 6000 + i)
    }
    const index = FindingsIndex.fromEntries(log.ordered())
    expect(index.size).toBe(303)
    FAILURES.forEach((f, i) => {
      const hits = index.search({ query: f.query, limit: 5 })
      expect(hits[0]?.id).toBe(recorded[i].id)
      expect(hits[0].score).toBeGreaterThan(hits[1]?.score ?? 0)
    })
  })
})

describe('the compact index', () => {
  const WORDS = [
    'lease',
    'leases',
    'leasing',
    'gossip',
    'gossipsub',
    'vector',
    'vectors',
    'digest',
    'decoder',
    'decodes',
    'backpressure',
    'backoff',
    'protobuf',
    'parser',
    'parsers',
    'timeout',
    'timeouts',
    'cursor',
    'cursors',
    'quorum'
  ]
  const QUERIES = [
    'lease',
    'leas',
    'gossip vector',
    'decoder',
    'decodr',
    'backpresure',
    'parser timeout',
    'cursr',
    'protobuf quorum digest',
    'zzz'
  ]

  it('answers the same whatever the segment size and the order findings arrive in', () => {
    const random = rng(7)
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]
    const log = new LogState()
    for (let i = 0; i < 150; i++) {
      const text = Array.from({ length: 3 + Math.floor(random() * 9) }, () => pick(WORDS)).join(' ')
      record(
        log,
        i % 3 === 0 ? a : b,
        { kind: pick(['discovery', 'bug', 'note', 'failure']), text, paths: [`src/${pick(WORDS)}/${pick(WORDS)}.ts`], tags: [pick(WORDS)] },
        1000 + Math.floor(i / 2)
      )
    }
    const one = FindingsIndex.fromEntries(log.ordered())
    const small = FindingsIndex.fromEntries(log.ordered(), { segmentDocs: 7 })
    const reversed = FindingsIndex.fromEntries([...log.ordered()].reverse(), { segmentDocs: 11 })
    for (const query of QUERIES) {
      for (const q of [{ query }, { query, kind: 'bug' }, { query, pathPrefix: 'src/lease' }, { query, tag: 'gossip', limit: 5 }]) {
        const expected = one.search({ ...q, limit: q.limit ?? 100 }).map(h => [h.id, h.score])
        expect(small.search({ ...q, limit: q.limit ?? 100 }).map(h => [h.id, h.score])).toEqual(expected)
        expect(reversed.search({ ...q, limit: q.limit ?? 100 }).map(h => [h.id, h.score])).toEqual(expected)
      }
    }
    expect(one.search({ query: 'zzz' })).toEqual([])
    // a prefix and a misspelling still find their word
    expect(one.search({ query: 'backpresure' }).length).toBeGreaterThan(0)
    expect(one.search({ query: 'leas' }).length).toBeGreaterThan(0)
  })

  it('reads its hits from the log when given one, keeping no entries', () => {
    const log = new LogState()
    const f1 = record(log, a, { text: 'sync batches stall under backpressure' }, 1)
    log.append(a.signer, 'goal', { text: 'ship it' }, 2)
    const f2 = record(log, b, { text: 'backpressure comes from yamux windows', supersedes: f1.id }, 3)
    const index = FindingsIndex.fromEntries(log.iterateAfter(0), {
      source: { entryAt: c => log.atCursor(c), cursorOf: id => log.cursorOf(id) }
    })
    const hits = index.search({ query: 'backpressure' })
    expect(hits.map(h => h.id)).toEqual([f2.id, f1.id])
    expect(hits.map(h => h.superseded)).toEqual([false, true])
    expect(hits[1].finding.text).toBe('sync batches stall under backpressure')
    expect(index.has(f2.id)).toBe(true)
    expect(index.get(f1.id)?.entry.id).toBe(f1.id)
  })
})
