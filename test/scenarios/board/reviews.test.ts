// Reviews across three daemons: a request naming two reviewers, their
// approvals, and a retraction with a counterexample. The approval count is a
// view folded from the shared record, so every peer shows the same count at
// every step, and a reviewer's retraction replaces its own earlier approval.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Daemon } from '../../../src/daemon/daemon.js'
import { MemoryCluster, addrsOf, livePeerIds, waitForTaskEverywhere } from './helpers.js'
import { waitFor } from '../../helpers/wait-for.js'
import { meshStatus } from '../../../src/api/mesh-handlers.js'

const TARGET = 'commit:3f2a9c1'

/** The review of TARGET as each daemon sees it. */
function reviews(nodes: Daemon[]): Array<ReturnType<Daemon['boardService']['board']['review']>> {
  return nodes.map(d => d.boardService.board.review(TARGET))
}

async function waitForApprovals(nodes: Daemon[], approvals: number, what: string): Promise<void> {
  await waitFor(() => reviews(nodes).every(r => r?.approvals === approvals), {
    what: `${approvals} approvals of ${TARGET} on every peer (${what})`
  })
}

describe('reviews on three peers', () => {
  const cluster = new MemoryCluster()
  let author: Daemon
  let reviewerB: Daemon
  let reviewerC: Daemon
  let nodes: Daemon[] = []

  beforeAll(async () => {
    author = await cluster.start()
    reviewerB = await cluster.start({ peers: addrsOf(author) })
    reviewerC = await cluster.start({ peers: addrsOf(reviewerB) })
    nodes = [author, reviewerB, reviewerC]
    await waitFor(() => nodes.every(d => livePeerIds(d).length >= 2), { what: 'three peers live on each' })
  }, 60_000)

  afterAll(async () => {
    await cluster.cleanup()
  }, 30_000)

  it('shows a request with its reviewers and no approvals on every peer', async () => {
    await author.boardService.requestReview(TARGET, [reviewerB.peerId, reviewerC.peerId], 'please check the merge')
    await waitFor(() => reviews(nodes).every(r => r?.requestedBy === author.peerId), { what: 'the request on every peer' })
    for (const r of reviews(nodes)) {
      expect(r).toMatchObject({ target: TARGET, requestedBy: author.peerId, note: 'please check the merge', approvals: 0, rejections: 0 })
      expect(r?.reviewers).toEqual([reviewerB.peerId, reviewerC.peerId].sort())
    }
  })

  it('counts two approvals on every peer', async () => {
    await reviewerB.boardService.verdict(TARGET, 'approve', 'tests pass here')
    await reviewerC.boardService.verdict(TARGET, 'approve', '')
    await waitForApprovals(nodes, 2, 'after both approve')
  })

  it('drops to one approval on every peer when a reviewer retracts', async () => {
    await reviewerB.boardService.verdict(TARGET, 'retract', 'counterexample: parse("") throws')
    await waitForApprovals(nodes, 1, 'after b retracts')
    for (const r of reviews(nodes)) {
      const byB = r?.verdicts.find(v => v.reviewer === reviewerB.peerId)
      expect(byB).toMatchObject({ verdict: 'retract', evidence: 'counterexample: parse("") throws' })
      expect(r?.verdicts.find(v => v.reviewer === reviewerC.peerId)?.verdict).toBe('approve')
    }
  })

  it('does not let a retraction by someone who never approved take away another approval', async () => {
    await author.boardService.verdict(TARGET, 'retract', 'nothing to retract')
    await waitFor(() => reviews(nodes).every(r => r?.verdicts.some(v => v.reviewer === author.peerId && v.verdict === 'retract')), {
      what: "the author's retraction on every peer"
    })
    for (const r of reviews(nodes)) expect(r?.approvals).toBe(1)
  })

  it('counts the approval again when the reviewer approves after retracting', async () => {
    await reviewerB.boardService.verdict(TARGET, 'approve', 'fixed in the next commit')
    await waitForApprovals(nodes, 2, 'after b approves again')
    // Every peer holds the same entries, so every peer shows the same view.
    const [first, ...rest] = reviews(nodes)
    for (const r of rest) expect(r).toEqual(first)
  })

  it('has status say a review is worth asking only while some agent would have nothing to claim', async () => {
    const free = async (d: Daemon): Promise<[number, boolean]> => {
      const s = await meshStatus(d)
      return [s.agentsFree, s.reviewersFree]
    }
    const task = (id: string): { id: string; title: string; description: string; deps: string[]; scope: string[]; priority: number } => ({
      id,
      title: id,
      description: '',
      deps: [],
      scope: [`src/${id}/**`],
      priority: 0
    })
    // One ready task, three agents with nothing at work: two would have nothing to claim.
    await author.boardService.addTasks([task('r1')])
    await waitForTaskEverywhere(nodes, 'r1')
    for (const d of nodes) expect(await free(d)).toEqual([3, true])
    // Three ready for three: every agent has a task to take.
    await author.boardService.addTasks([task('r2'), task('r3')])
    await waitForTaskEverywhere(nodes, 'r3')
    for (const d of nodes) expect(await free(d)).toEqual([3, false])
    // b holds r2: two ready, two free.
    expect((await reviewerB.boardService.claim('r2', [])).outcome).toBe('HELD')
    await waitFor(() => nodes.every(d => d.boardService.board.holder('r2')?.holder === reviewerB.peerId), {
      what: "b's claim on every board"
    })
    for (const d of nodes) expect(await free(d)).toEqual([2, false])
    // c takes r1 and finishes it: one ready, two free.
    expect((await reviewerC.boardService.claim('r1', [])).outcome).toBe('HELD')
    await reviewerC.boardService.done('r1', '', [], 'nothing to change')
    await waitFor(() => nodes.every(d => d.boardService.board.doneRecord('r1') !== undefined), { what: 'r1 done on every board' })
    for (const d of nodes) expect(await free(d)).toEqual([2, true])
  })
})
