// The settle window comes from round trips timed on each daemon's own clock,
// so a peer's clock being off changes nothing. Two daemons whose wall clocks
// are two hours apart (one an hour behind, one an hour ahead): each still
// gets samples, and none of them carries the skew. When the samples came from
// the sender's clock (now - sentAt), the daemon behind dropped every sample
// (all negative) and the one ahead saw two hours of "latency".
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MemoryCluster, addrsOf } from '../scenarios/board/helpers.js'
import { waitFor } from '../helpers/wait-for.js'
import type { Daemon } from '../../src/daemon/daemon.js'

const HOUR = 3_600_000
const cluster = new MemoryCluster()
let behind: Daemon
let ahead: Daemon

beforeAll(async () => {
  behind = await cluster.start({ name: 'behind' }, { wallClock: () => Date.now() - HOUR })
  ahead = await cluster.start({ name: 'ahead', peers: addrsOf(behind) }, { wallClock: () => Date.now() + HOUR })
  await waitFor(() => behind.presence.isLive(ahead.peerId) && ahead.presence.isLive(behind.peerId), {
    what: 'the two daemons to see each other'
  })
})

afterAll(async () => {
  await cluster.cleanup()
})

describe('the settle window with skewed clocks', () => {
  it("is fed by round trips on each daemon's own clock: every daemon has samples, and none carries the skew", async () => {
    // entries and heartbeats go both ways, with the skewed times in them
    await behind.boardService.addTask({ id: 'skew', title: 'skew', description: '', deps: [], scope: [], priority: 0 })
    await waitFor(() => ahead.boardService.board.task('skew', ahead.boardService.now()), { what: 'the task on the daemon ahead' })
    for (const d of [behind, ahead]) {
      await waitFor(() => d.boardService.settle.sampleCount >= 3, { what: `three round-trip samples on ${d.name}` })
      // a round trip over the memory transport is nowhere near an hour
      expect(d.boardService.settle.p99()).toBeLessThan(HOUR / 60)
    }
  })

  it("entries still carry each author's own wall clock, for the record", () => {
    const entry = ahead.logService.state.afterCursor(0).find(e => e.entry.kind === 'task')
    expect(entry?.entry.author).toBe(behind.peerId)
    expect(entry?.entry.time).toBeLessThan(Date.now() - HOUR / 2)
  })
})
