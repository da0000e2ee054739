import { describe, expect, it, beforeAll } from 'vitest'
import { LogState } from '../../../src/core/log/log-state.js'
import { makeIdentities, type TestIdentity } from '../../helpers/identity.js'
import { chain } from './chains.js'

let ids: TestIdentity[]
beforeAll(async () => {
  ids = await makeIdentities(4)
})

describe('the pending set is bounded', () => {
  it('per author: beyond the bound the oldest arrival is dropped, reported and counted', () => {
    const [a] = ids
    const feed = chain(a.signer, 50)
    const log = new LogState({ maxPendingPerAuthor: 10 })
    const dropped: number[] = []
    for (const e of feed.slice(1)) {
      const r = log.ingest(e)
      expect(r.status).toBe('pending')
      if (r.status === 'pending') dropped.push(...r.pendingRemoved.map(p => p.entry.seq))
      expect(log.pendingCount).toBeLessThanOrEqual(10)
    }
    expect(dropped).toEqual(Array.from({ length: 39 }, (_, i) => i + 2))
    expect(log.pendingDropped).toBe(39)
    expect(log.pendingEntries().map(p => p.entry.seq)).toEqual(Array.from({ length: 10 }, (_, i) => i + 41))

    // the gap fills: only seq 1 follows at once; sync brings the dropped ones back and unblocks the rest
    const r1 = log.ingest(feed[0])
    expect(r1.status === 'accepted' && r1.accepted.length).toBe(1)
    expect(log.vector().get(a.id)).toBe(1)
    const r = log.ingestBatch(feed.slice(1, 40))
    expect(r.accepted.map(s => s.entry.seq)).toEqual(Array.from({ length: 49 }, (_, i) => i + 2))
    expect(log.pendingCount).toBe(0)
  })

  it('in total, across authors, and in bytes', () => {
    const log = new LogState({ maxPendingTotal: 8, maxPendingPerAuthor: 100 })
    for (const id of ids) {
      for (const e of chain(id.signer, 6).slice(1)) {
        log.ingest(e)
        expect(log.pendingCount).toBeLessThanOrEqual(8)
      }
    }
    expect(log.pendingCount).toBe(8)
    expect(log.pendingDropped).toBe(12)

    const feed = chain(ids[0].signer, 30)
    const small = new LogState({ maxEntryBytes: 1000, maxPendingBytes: 1000 })
    for (const e of feed.slice(1)) {
      small.ingest(e)
      const bytes = small.pendingEntries().reduce((n, p) => n + p.bytes.byteLength, 0)
      expect(bytes).toBeLessThanOrEqual(1000)
    }
    expect(small.pendingDropped).toBeGreaterThan(0)
  })

  it('a pending entry that arrives again is a duplicate, not a second waiting copy', () => {
    const [, e2] = chain(ids[0].signer, 2)
    const log = new LogState()
    expect(log.ingest(e2).status).toBe('pending')
    expect(log.ingest(e2).status).toBe('duplicate')
    expect(log.ingestBatch([e2, e2]).duplicates).toBe(2)
    expect(log.pendingCount).toBe(1)
  })
})
