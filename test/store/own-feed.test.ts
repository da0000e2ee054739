// Crash after crash while own entries are being appended and a peer pulls the
// log as fast as it can: the peer never holds an own entry the writer's disk
// lacks, so the restarted writer never forks its feed, and nothing the writer
// acknowledged is lost. The writer is agentd's own log service on a real
// LevelDB; a crash freezes every write that has not reached LevelDB yet (as
// SIGKILL would) and the store is reopened from what did.
import { setImmediate as tick } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LogState } from '../../src/core/log/log-state.js'
import { LogService } from '../../src/daemon/log-service.js'
import { EventBus } from '../../src/daemon/event-bus.js'
import { createMetrics } from '../../src/metrics/metrics.js'
import { componentLogger } from '../../src/logger.js'
import type { MeshLibp2p } from '../../src/mesh/node.js'
import { openLevelDb, type LevelDb } from '../../src/store/level-db.js'
import { LogStore } from '../../src/store/log-store.js'
import type { AgencyStore } from '../../src/store/open-store.js'
import { makeIdentity, type TestIdentity } from '../helpers/identity.js'
import { seededRandom } from '../helpers/trust.js'
import { tempDirs } from './helpers.js'

const CYCLES = 200
const seed = Number(process.env.AGENCY_CRASH_SEED ?? Date.now() % 1_000_000)

const dirs = tempDirs()
afterAll(async () => {
  await dirs.cleanup()
})
let writer: TestIdentity
beforeAll(async () => {
  writer = await makeIdentity()
})

/** A LevelDB whose writes can be cut off at once: what LevelDB already has stays, the rest never lands. */
function crashable(db: LevelDb): { db: LevelDb; crash: () => Promise<void> } {
  let crashed = false
  const inFlight = new Set<Promise<unknown>>()
  const batch = (...args: unknown[]): Promise<unknown> => {
    if (crashed) return new Promise(() => {})
    const p = (db.batch as (...a: unknown[]) => Promise<unknown>)(...args)
    inFlight.add(p)
    void p.finally(() => inFlight.delete(p)).catch(() => {})
    return p.then(v => (crashed ? new Promise(() => {}) : v))
  }
  const wrapped = new Proxy(db, {
    get(target, prop) {
      if (prop === 'batch') return batch
      const v = Reflect.get(target, prop, target)
      return typeof v === 'function' ? v.bind(target) : v
    }
  })
  return {
    db: wrapped,
    crash: async () => {
      crashed = true
      await Promise.allSettled([...inFlight])
      await db.close()
    }
  }
}

async function startWriter(dir: string): Promise<{ log: LogService; crash: () => Promise<void> }> {
  const real = await openLevelDb(dir)
  const { db, crash } = crashable(real)
  const store = { log: await LogStore.open(db), dataDir: dir } as unknown as AgencyStore
  const log = new LogService({
    store,
    signer: writer.signer,
    node: {} as MeshLibp2p, // never started: the test moves entries between the two logs itself
    metrics: createMetrics({ version: 'test', swarm: 'test', processMetrics: false }),
    events: new EventBus(),
    logger: componentLogger('own-feed-test'),
    syncIntervalMs: 1000,
    ownHeadWaitMs: 0 // the test asks the peer for the head itself, when the peer is reachable
  })
  await log.restore()
  return { log, crash }
}

describe('own entries across crashes', () => {
  it(`${CYCLES} crash-restart cycles with racing appends and a peer pulling: no fork, no acknowledged entry lost (seed ${seed})`, async () => {
    const random = seededRandom(seed)
    const dir = await dirs.make()
    const peer = new LogState()
    const acked = new Set<string>()
    let pulls = 0

    for (let cycle = 0; cycle < CYCLES; cycle++) {
      const { log, crash } = await startWriter(dir)
      // After a restart the writer learns its feed's head from the peer, when the peer can be reached.
      if (random() < 0.5)
        await log.ingestBatch(
          peer.entriesAfter(log.state.vector()).map(e => e.entry),
          'peer'
        )

      let crashed = false
      const writers = Array.from({ length: 3 }, async (_, k) => {
        for (let i = 0; !crashed; i++) {
          const e = await log.append('finding', { kind: 'note', text: `cycle ${cycle} writer ${k} note ${i}` })
          if (!crashed) acked.add(e.id)
        }
      })
      // The peer pulls what the writer's log serves, every turn of the event loop (what sync serves).
      const puller = (async () => {
        while (!crashed) {
          peer.ingestBatch(log.state.entriesAfter(peer.vector()).map(e => e.entry))
          pulls++
          await tick()
        }
      })()
      // Crash after a few acknowledged appends and a random number of turns: appends are in every stage of their way to disk.
      const before = acked.size
      const wanted = Math.floor(random() * 3)
      while (acked.size < before + wanted) await tick()
      const turns = Math.floor(random() * 20)
      for (let t = 0; t < turns; t++) await tick()
      crashed = true
      await crash()
      await puller
      void Promise.allSettled(writers) // frozen appends never settle; they die with the process's old store

      expect(peer.forks, `cycle ${cycle} (seed ${seed})`).toEqual([])
      expect(peer.rejected.bad_prev, `cycle ${cycle} (seed ${seed})`).toBe(0)
    }

    const { log, crash } = await startWriter(dir)
    await log.ingestBatch(
      peer.entriesAfter(log.state.vector()).map(e => e.entry),
      'peer'
    )
    peer.ingestBatch(log.state.entriesAfter(peer.vector()).map(e => e.entry))
    const missing = [...acked].filter(id => log.state.get(id) === undefined)
    expect(missing, `acknowledged entries lost (seed ${seed})`).toEqual([])
    expect(acked.size).toBeGreaterThan(CYCLES / 2)
    expect(pulls).toBeGreaterThan(CYCLES)
    // One feed, whole, the same on both sides.
    const feed = (s: LogState): string[] => s.entriesAfter(new Map()).map(e => e.id)
    expect(feed(peer)).toEqual(feed(log.state))
    expect(log.state.vector().get(writer.id)).toBe(log.state.size)
    expect(peer.forks).toEqual([])
    await crash()
  }, 300_000)
})
