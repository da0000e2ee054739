// A late joiner is sent each entry once. Anti-entropy moves entries both ways
// in one exchange, so a second exchange running at the same time between the
// same two daemons (each side starting one on connect, or a periodic round
// landing during a long catch-up) only sends the same entries again.
import { afterAll, describe, expect, it } from 'vitest'
import { addrsOf, InProcessDaemons, seedLog, counterValue } from './helpers.js'
import { waitFor } from '../../helpers/wait-for.js'

const ENTRIES = 3000

describe('a late joiner', () => {
  const daemons = new InProcessDaemons()
  afterAll(async () => {
    await daemons.cleanup()
  }, 60_000)

  it('catches up with each entry sent to it once', async () => {
    const holder = await daemons.start({ name: 'holder' }, async dir => await seedLog(dir, { entries: ENTRIES, authors: 10 }))
    expect(holder.logService.state.size).toBe(ENTRIES)
    const logBytes = holder.logService.state.afterCursor(0).reduce((n, e) => n + e.bytes.byteLength, 0)

    const joiner = await daemons.start({ name: 'joiner', peers: addrsOf(holder) })
    await waitFor(() => Buffer.compare(joiner.logService.digest(), holder.logService.digest()) === 0, {
      what: 'the joiner to hold the whole log',
      timeoutMs: 60_000
    })
    // Let an exchange still running finish and be counted: a daemon runs one
    // exchange with a peer at a time, so the second to complete from here
    // began after any running one ended. (Periodic rounds go on, but with
    // equal digests they carry no entries.)
    const rounds = await counterValue(joiner.metrics.syncRounds)
    await waitFor(async () => (await counterValue(joiner.metrics.syncRounds)) >= rounds + 2, { what: 'two more exchanges to complete' })

    expect(joiner.logService.state.size).toBe(ENTRIES)
    expect(joiner.logService.state.duplicates).toBe(0)
    const received = await counterValue(joiner.metrics.syncBytes, { direction: 'received' })
    // framing costs a few bytes per entry; a second copy would double it
    expect(received).toBeLessThan(logBytes * 1.1)
  }, 90_000)
})
