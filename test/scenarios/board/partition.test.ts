// A partition, over the memory transport: six daemons that all know a task
// are cut into two halves of three, and each half claims the task and is told
// HELD. When the halves are joined again, every node shows the same holder
// (the holder rule over both claims), and the losing daemon tells its agent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { peerIdFromString } from '@libp2p/peer-id'
import type { Daemon } from '../../../src/daemon/daemon.js'
import type { ClaimAnswer } from '../../../src/daemon/board-service.js'
import { compareOrder } from '../../../src/core/board/index.js'
import { Claim } from '../../../src/gen/agency/v1/log.js'
import { EventRecorder, MemoryCluster, connected, detailOf, keepLinked, livePeerIds, waitForTaskEverywhere, link } from './helpers.js'
import { waitFor } from '../../helpers/wait-for.js'

const TASK = 'split-brain'

/** This node's claim entries on TASK, in the board's order. */
function claimsOn(d: Daemon): Array<{ id: string; author: string; seq: number; lamport: number; epoch: number }> {
  return d.logService.state
    .afterCursor(0)
    .filter(e => e.entry.kind === 'claim')
    .map(e => ({
      id: e.id,
      author: e.entry.author,
      seq: e.entry.seq,
      lamport: e.entry.lamport,
      epoch: Claim.decode(e.entry.body).epoch,
      task: Claim.decode(e.entry.body).task
    }))
    .filter(c => c.task === TASK)
    .sort(compareOrder)
}

describe('claims on both sides of a partition', () => {
  const cluster = new MemoryCluster()
  let left: Daemon[] = []
  let right: Daemon[] = []
  const all: Daemon[] = []
  const events = new Map<Daemon, EventRecorder>()
  let leftAnswer: ClaimAnswer
  let rightAnswer: ClaimAnswer

  // Links of each half, then the bridge that the test cuts and the one that heals.
  const links: Array<[Daemon, Daemon]> = []

  beforeAll(async () => {
    // Leases of a few seconds: long enough that a busy event loop does not let a
    // live peer's lapse, short enough that the halves soon see each other gone.
    for (let i = 0; i < 6; i++) all.push(await cluster.start({ liveTimeoutMs: 6000 }))
    for (const d of all) d.dialer.stop()
    left = all.slice(0, 3)
    right = all.slice(3)
    for (const d of all) events.set(d, new EventRecorder(d))
    // Each half is a triangle; one bridge joins them.
    for (const half of [left, right]) {
      links.push([half[1], half[0]], [half[2], half[0]], [half[2], half[1]])
    }
    await keepLinked(links)
    await link(right[0], left[0])
    await waitFor(() => all.every(d => livePeerIds(d).length === 5), { what: 'all six live on each' })
    await left[0].boardService.addTask({
      id: TASK,
      title: 'both halves want this',
      description: '',
      deps: [],
      scope: ['src/split/**'],
      priority: 0
    })
    await waitForTaskEverywhere(all, TASK)
  }, 60_000)

  afterAll(async () => {
    for (const r of events.values()) r.stop()
    await cluster.cleanup()
  }, 30_000)

  it('cuts the mesh in two', async () => {
    await left[0].node.hangUp(peerIdFromString(right[0].peerId))
    await waitFor(() => left.every(l => right.every(r => !connected(l, r) && !connected(r, l))), { what: 'no link across the halves' })
    // Each side's leases on the other side run out: the halves are really apart.
    await waitFor(
      async () => {
        await keepLinked(links)
        return all.every(d => livePeerIds(d).length === 2)
      },
      { what: 'each half to see only itself live', timeoutMs: 60_000 }
    )
  })

  it('answers HELD on both sides', async () => {
    ;[leftAnswer, rightAnswer] = await Promise.all([
      left[1].boardService.claim(TASK, ['src/split/left.ts']),
      right[1].boardService.claim(TASK, ['src/split/right.ts'])
    ])
    expect(leftAnswer).toMatchObject({ outcome: 'HELD', epoch: 1, winner: left[1].peerId })
    expect(rightAnswer).toMatchObject({ outcome: 'HELD', epoch: 1, winner: right[1].peerId })
    await waitFor(
      () =>
        left.every(d => d.boardService.board.holder(TASK)?.holder === left[1].peerId) &&
        right.every(d => d.boardService.board.holder(TASK)?.holder === right[1].peerId),
      { what: 'each half to agree on its own holder' }
    )
    // Still apart: neither side has the other's claim.
    for (const d of all) expect(claimsOn(d)).toHaveLength(1)
  }, 30_000)

  it('shows one holder everywhere once the halves are joined, and tells the loser', async () => {
    links.push([right[2], left[2]])
    await waitFor(
      async () => {
        await keepLinked(links)
        return all.every(d => claimsOn(d).length === 2)
      },
      { what: 'both claims on every node', timeoutMs: 60_000 }
    )
    // The holder rule, over both claims: the smallest (lamport, author) at epoch 1.
    const [first, second] = claimsOn(left[0])
    const winner = all.find(d => d.peerId === first.author) as Daemon
    const loser = all.find(d => d.peerId === second.author) as Daemon
    expect([winner.peerId, loser.peerId].sort()).toEqual([left[1].peerId, right[1].peerId].sort())
    for (const d of all) {
      expect(claimsOn(d)).toEqual([first, second])
      expect(d.boardService.board.holder(TASK)).toMatchObject({ holder: winner.peerId, epoch: 1 })
    }
    // The far half had seen the winner go quiet in the split: its lease there
    // is back with the winner's next heartbeat across the healed link.
    await waitFor(
      async () => {
        await keepLinked(links)
        return all.every(d => d.boardService.task(TASK).state === 'claimed')
      },
      { what: 'the task claimed by the winner on every node', timeoutMs: 60_000 }
    )
    for (const d of all) expect(d.boardService.task(TASK)).toMatchObject({ state: 'claimed', holder: winner.peerId, epoch: 1 })

    // The loser's daemon tells its agent, naming the winner; nobody else hears of a loss.
    const told = await waitFor(() => events.get(loser)?.ofType('claim_lost', 'claim_superseded')[0], {
      what: 'a lost-claim event on the loser'
    })
    expect(told).toMatchObject({ task: TASK, peerId: winner.peerId })
    expect(detailOf(told)).toMatchObject({ epoch: 1, winner: winner.peerId })
    for (const d of all.filter(x => x !== loser)) expect(events.get(d)?.ofType('claim_lost', 'claim_superseded')).toEqual([])
    // And its status no longer lists the claim; the winner's does.
    expect(loser.selfView().claims).toEqual([])
    expect(winner.selfView().claims).toEqual([{ task: TASK, epoch: 1 }])
  }, 60_000)

  it('leaves no stale claim behind: when the winner releases, the loser does not become the holder', async () => {
    const [first, second] = claimsOn(left[0])
    const winner = all.find(d => d.peerId === first.author) as Daemon
    const loser = all.find(d => d.peerId === second.author) as Daemon
    await winner.boardService.release(TASK, 'giving it back', '')
    await waitFor(
      async () => {
        await keepLinked(links)
        return all.every(d => d.boardService.board.claimStatus(TASK, winner.peerId, 1) === 'released')
      },
      { what: 'the release on every node', timeoutMs: 60_000 }
    )
    // The loser was told it lost. Were its claim still standing, it would now
    // hold the task by the holder rule without knowing it, and its heartbeat
    // would keep the lease alive: a lock held by an agent doing other work.
    const nobody = (): boolean => all.every(d => d.boardService.board.holder(TASK) === undefined)
    await waitFor(nobody, { what: 'nobody to hold the task on any node', timeoutMs: 10_000 }).catch(() => {})
    expect(all.map(d => d.boardService.board.holder(TASK)?.holder ?? 'nobody')).toEqual(all.map(() => 'nobody'))
    for (const d of all) expect(d.boardService.task(TASK).state).toBe('open')
    expect(loser.selfView().claims).toEqual([])
  }, 60_000)
})
