// A claim's answer waits for its entry to be on disk (the synced pending
// write) and published, not for the entry's accepted record, which the store
// writes in order behind the peers' entries being stored (in a burst of
// claims, one per peer). The record still follows, and a restart finds the
// claim.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MemoryCluster } from '../scenarios/board/helpers.js'
import type { Daemon } from '../../src/daemon/daemon.js'
import type { NewTask } from '../../src/core/board/index.js'

const cluster = new MemoryCluster()
let d: Daemon

const task = (id: string): NewTask => ({ id, title: id, description: '', deps: [], scope: [`${id}/**`], priority: 0 })

beforeAll(async () => {
  d = await cluster.start({ settle: { fixedMs: 300 } })
  await d.addTasks([task('held-record')])
})

afterAll(async () => {
  await cluster.cleanup()
})

describe('a claim whose accepted record is not yet written', () => {
  it('is answered HELD; the record follows, and a restart finds the claim', async () => {
    const log = d.store.log
    const put = log.putAccepted.bind(log)
    let release = (): void => {}
    const gate = new Promise<void>(resolve => {
      release = resolve
    })
    let heldWrites = 0
    log.putAccepted = async (records, opts) => {
      heldWrites++
      await gate
      await put(records, opts)
    }
    try {
      const answer = await d.claimTask('held-record', [], false)
      expect(answer).toMatchObject({ outcome: 'HELD', epoch: 1 })
      // the claim's record was queued and is still held back
      expect(heldWrites).toBe(1)
      expect(log.lastCursor()).toBe(1)
    } finally {
      // a failed test's daemon must still stop (its store waits for the held write)
      release()
      log.putAccepted = put
    }
    const again = await cluster.restart(d)
    expect(again.boardService.board.holder('held-record')).toMatchObject({ holder: again.peerId, epoch: 1 })
    expect(await again.claimTask('held-record', [], false)).toMatchObject({ outcome: 'HELD', epoch: 1, settleMs: 0 })
    expect(again.logService.state.afterCursor(0).filter(e => e.entry.kind === 'claim')).toHaveLength(1)
  })
})
