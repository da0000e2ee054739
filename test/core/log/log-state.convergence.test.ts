// Property: whatever order entries arrive in (shuffled, duplicated, gaps
// filled late, some in batches, some as raw bytes), every replica ends with
// the same version vector, the same total order and the same search results.
import { describe, expect, it, beforeAll } from 'vitest'
import fc from 'fast-check'
import { LogState } from '../../../src/core/log/log-state.js'
import { encodeEntry } from '../../../src/core/log/entry.js'
import type { StoredEntry } from '../../../src/core/log/ingest-result.js'
import { FindingsIndex, type FindingQuery } from '../../../src/core/findings/findings-index.js'
import { makeIdentities, type TestIdentity } from '../../helpers/identity.js'
import { deliveryArb, deliveryPlan, playSwarm, rng, shuffle, swarmArb, type Delivery } from './scenario.js'
import type { Entry } from '../../../src/gen/agency/v1/log.js'

let ids: TestIdentity[]
beforeAll(async () => {
  ids = await makeIdentities(5)
})

const QUERIES: FindingQuery[] = [
  { query: 'cache decoder leak', limit: 50 },
  { query: 'yamux backpressure', limit: 50 },
  { query: 'protobuf', kind: 'failure', limit: 50 },
  { query: 'stream', pathPrefix: 'src/mesh', limit: 50 },
  { tag: 'perf', limit: 50 },
  { query: 'lease timeout retry', limit: 3 }
]

interface Replica {
  log: LogState
  index: FindingsIndex
}

function deliver(entries: Entry[], d: Delivery): Replica {
  const log = new LogState()
  const index = new FindingsIndex()
  const random = rng(d.seed ^ 0x5bd1e995)
  const take = (accepted: StoredEntry[]): void => {
    for (const s of accepted) index.add(s)
  }
  for (const chunk of deliveryPlan(entries, d)) {
    if (chunk.batch) {
      take(log.ingestBatch(chunk.entries).accepted)
      continue
    }
    for (const e of chunk.entries) {
      const r = random() < 0.3 ? log.ingestBytes(encodeEntry(e)) : log.ingest(e)
      if (r.status === 'accepted') take(r.accepted)
    }
  }
  return { log, index }
}

function searchView(index: FindingsIndex): unknown {
  return QUERIES.map(q => index.search(q).map(h => [h.id, h.score, h.superseded]))
}

describe('convergence of replicas', () => {
  it('every delivery order ends in the same log and the same search results', () => {
    fc.assert(
      fc.property(swarmArb, fc.array(deliveryArb, { minLength: 3, maxLength: 4 }), (swarm, deliveries) => {
        const written = playSwarm(ids, swarm)
        const expectedVector = new Map<string, number>()
        for (const e of written) expectedVector.set(e.author, Math.max(expectedVector.get(e.author) ?? 0, e.seq))

        const replicas = deliveries.map(d => deliver(written, d))
        const first = replicas[0]
        for (const { log, index } of replicas) {
          expect(log.vector()).toEqual(expectedVector)
          expect(log.size).toBe(written.length)
          expect(log.pendingCount).toBe(0)
          expect(Object.values(log.rejected).every(n => n === 0)).toBe(true)
          expect(log.ordered().map(s => s.id)).toEqual(first.log.ordered().map(s => s.id))
          expect(searchView(index)).toEqual(searchView(first.index))
          // an index rebuilt from the log at start answers the same
          expect(searchView(FindingsIndex.fromEntries(log.ordered()))).toEqual(searchView(index))
        }
      }),
      { numRuns: 60 }
    )
  })

  it('with lossy delivery and a tiny pending set, anti-entropy still brings every replica to the whole log', () => {
    const limits = { maxPendingPerAuthor: 2, maxPendingTotal: 4 }
    fc.assert(
      fc.property(
        swarmArb,
        fc.array(fc.record({ seed: fc.integer(), loss: fc.double({ min: 0, max: 0.6, noNaN: true }) }), { minLength: 2, maxLength: 4 }),
        (swarm, plans) => {
          const written = playSwarm(ids, swarm)
          const reference = new LogState()
          reference.ingestBatch(written)
          expect(reference.size).toBe(written.length)

          // the authors themselves take part in anti-entropy, each holding its own feed
          const peers = ids.slice(0, swarm.authors).map(id => {
            const own = new LogState()
            own.ingestBatch(written.filter(e => e.author === id.id))
            return own
          })
          for (const plan of plans) {
            const random = rng(plan.seed)
            const log = new LogState(limits)
            const mirror = new Set<string>() // what a store would keep of the pending set
            for (const e of shuffle(written, random)) {
              if (random() < plan.loss) continue
              const r = log.ingest(e)
              if (r.status === 'pending') mirror.add(r.id)
              if (r.status === 'pending' || r.status === 'accepted') for (const p of r.pendingRemoved) mirror.delete(p.id)
              expect(log.pendingCount).toBeLessThanOrEqual(limits.maxPendingTotal)
              expect(maxPerAuthor(log)).toBeLessThanOrEqual(limits.maxPendingPerAuthor)
              expect(new Set(log.pendingEntries().map(p => p.id))).toEqual(mirror)
            }
            peers.push(log)
          }

          for (let changed = true; changed;) {
            changed = false
            for (const from of peers) {
              for (const to of peers) {
                if (from === to) continue
                const r = to.ingestBatch(from.entriesAfter(to.vector(), 7).map(s => s.entry))
                if (r.accepted.length > 0) changed = true
              }
            }
          }
          for (const log of peers) {
            expect(log.vector()).toEqual(reference.vector())
            expect(log.ordered().map(s => s.id)).toEqual(reference.ordered().map(s => s.id))
          }
        }
      ),
      { numRuns: 40 }
    )
  })
})

function maxPerAuthor(log: LogState): number {
  const counts = new Map<string, number>()
  for (const p of log.pendingEntries()) counts.set(p.entry.author, (counts.get(p.entry.author) ?? 0) + 1)
  return Math.max(0, ...counts.values())
}
