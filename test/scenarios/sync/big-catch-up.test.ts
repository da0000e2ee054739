// One anti-entropy exchange carries a whole log far larger than the 4 MiB
// read buffer of a libp2p stream: the receiver stores batch after batch while
// the sender waits for it (backpressure), instead of the stream overflowing
// and the exchange being aborted part way.
import { afterAll, describe, expect, it } from 'vitest'
import { InProcessDaemons, seedLog } from './helpers.js'

const ENTRIES = 6000
/** about 1.5 KiB per entry: over 8 MiB in all, twice what a stream buffers */
const PADDING = 1100

describe('a large catch-up', () => {
  const daemons = new InProcessDaemons()
  afterAll(async () => {
    await daemons.cleanup()
  }, 60_000)

  it('completes in a single exchange', async () => {
    // No periodic rounds: the only exchange is the one this test starts.
    const quiet = { syncIntervalMs: 3_600_000 }
    const holder = await daemons.start(
      { name: 'holder', ...quiet },
      async dir => await seedLog(dir, { entries: ENTRIES, authors: 10, padding: PADDING })
    )
    const logBytes = holder.logService.state.afterCursor(0).reduce((n, e) => n + e.bytes.byteLength, 0)
    expect(logBytes).toBeGreaterThan(2 * 4 * 1024 * 1024)
    const joiner = await daemons.start({ name: 'joiner', ...quiet })
    await joiner.node.peerStore.merge(holder.node.peerId, { multiaddrs: holder.node.getMultiaddrs() })

    expect(await joiner.logService.syncWith(holder.node.peerId)).toBe(true)
    expect(joiner.logService.state.size).toBe(ENTRIES)
    expect(Buffer.compare(joiner.logService.digest(), holder.logService.digest())).toBe(0)
  }, 120_000)
})
