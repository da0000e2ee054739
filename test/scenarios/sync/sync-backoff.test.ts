// Anti-entropy slows down while there is nothing to repair, and speeds up
// again the moment something is missing.
import { afterAll, describe, expect, it } from 'vitest'
import { MAX_SYNC_BACKOFF_DOUBLINGS, syncPeriodMs } from '../../../src/core/log/sync-backoff.js'
import { InProcessDaemons, addrsOf } from './helpers.js'
import { waitFor } from '../../helpers/wait-for.js'

describe('the anti-entropy period', () => {
  it('doubles per quiet round, up to eight times the interval', () => {
    expect([0, 1, 2, 3, 4, 50].map(q => syncPeriodMs(3000, q))).toEqual([3000, 6000, 12000, 24000, 24000, 24000])
    expect(2 ** MAX_SYNC_BACKOFF_DOUBLINGS).toBe(8)
  })
})

describe('two daemons with the same log', () => {
  const daemons = new InProcessDaemons()
  afterAll(async () => {
    await daemons.cleanup()
  }, 60_000)

  it('back off while in step, and still repair an entry that gossip did not bring', async () => {
    const timing = { syncIntervalMs: 100 }
    const a = await daemons.start({ name: 'a', ...timing })
    const b = await daemons.start({ name: 'b', peers: addrsOf(a), ...timing })
    await waitFor(() => a.logService.syncPeriodMs() === 800 && b.logService.syncPeriodMs() === 800, {
      what: 'both to back off fully',
      timeoutMs: 30_000
    })

    // b stops listening to gossip, misses an entry, and listens again.
    b.gossip.stop()
    await waitFor(() => a.gossip.subscribers() === 0, { what: 'a to lose b as a gossip subscriber', timeoutMs: 30_000 })
    const missed = await a.logService.append('finding', { kind: 'note', text: 'missed by b' })
    b.gossip.start()
    await waitFor(() => a.gossip.subscribers() === 1, { what: 'a to see b on the topic again', timeoutMs: 30_000 })
    // The next entry reaches b with a gap: b goes back to the full pace and repairs.
    await a.logService.append('finding', { kind: 'note', text: 'after the gap' })
    await waitFor(() => b.logService.state.get(missed.id) != null && b.logService.state.size === a.logService.state.size, {
      what: 'b to have the missed entry and the one after it',
      timeoutMs: 30_000
    })
    expect(Buffer.compare(b.logService.digest(), a.logService.digest())).toBe(0)
  }, 90_000)
})
