// A claim retried while it settles (the CLI or an MCP client calling again
// after a timeout) is answered from the claim already made, at the end of its
// settle window: never HELD before the window of the original claim has passed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MemoryCluster } from '../scenarios/board/helpers.js'
import { waitFor } from '../helpers/wait-for.js'
import type { Daemon } from '../../src/daemon/daemon.js'
import type { NewTask } from '../../src/core/board/index.js'

const WINDOW_MS = 1_500
const cluster = new MemoryCluster()
let d: Daemon

const task = (id: string): NewTask => ({ id, title: id, description: '', deps: [], scope: [`${id}/**`], priority: 0 })

beforeAll(async () => {
  d = await cluster.start({ settle: { fixedMs: WINDOW_MS } })
  await d.addTasks([task('first-try'), task('no-wait')])
})

afterAll(async () => {
  await cluster.cleanup()
})

/** Once this daemon's claim entry is on its board: the claim is in its settle window. */
async function settling(id: string): Promise<void> {
  await waitFor(() => d.boardService.board.holder(id)?.holder === d.peerId, { what: `the claim on ${id} on the board` })
}

describe('a claim retried during its settle window', () => {
  it('waits for the answer of the claim already made, and gets the same one', async () => {
    const order: string[] = []
    const first = d.claimTask('first-try', [], false).then(a => {
      order.push('first')
      return a
    })
    await settling('first-try')
    const retry = await d.claimTask('first-try', [], false)
    order.push('retry')
    const answer = await first
    expect(order).toEqual(['first', 'retry'])
    expect(answer).toMatchObject({ outcome: 'HELD', epoch: 1, settleMs: WINDOW_MS })
    expect(retry).toEqual(answer)
    // one claim entry, not two
    expect(d.logService.state.afterCursor(0).filter(e => e.entry.kind === 'claim')).toHaveLength(1)
  })

  it('after a PENDING answer, a waiting retry is answered when the window ends; once settled, at once', async () => {
    const pending = await d.claimTask('no-wait', [], true)
    expect(pending).toMatchObject({ outcome: 'PENDING', epoch: 1 })
    await settling('no-wait')
    const retry = await d.claimTask('no-wait', [], false)
    expect(retry).toMatchObject({ outcome: 'HELD', epoch: 1, settleMs: WINDOW_MS })
    const later = await d.claimTask('no-wait', [], false)
    expect(later).toMatchObject({ outcome: 'HELD', epoch: 1, settleMs: 0 })
  })
})
