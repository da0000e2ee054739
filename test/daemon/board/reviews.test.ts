// Reviews across three daemons: a request naming two reviewers, their
// approvals, and a retraction with a counterexample. The approval count is a
// view folded from the shared record, so every peer shows the same count at
// every step, and a reviewer's retraction replaces its own earlier approval.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Daemon } from '../../../src/daemon/daemon.js'
import { MemoryCluster, addrsOf, livePeerIds, waitFor } from './helpers.js'

const TARGET = 'commit:3f2a9c1'

/** The review of TARGET as each daemon sees it. */
function reviews (nodes: Daemon[]): Array<ReturnType<Daemon['boardService']['board']['review']>> {
  return nodes.map(d => d.boardService.board.review(TARGET))
}

async function waitForApprovals (nodes: Daemon[], approvals: number, what: string): Promise<void> {
  await waitFor(`${approvals} approvals of ${TARGET} on every peer (${what})`, () =>
    reviews(nodes).every(r => r?.approvals === approvals))
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
    await waitFor('three peers live on each', () => nodes.every(d => livePeerIds(d).length >= 2))
  }, 60_000)

  afterAll(async () => { await cluster.cleanup() }, 30_000)

  it('shows a request with its reviewers and no approvals on every peer', async () => {
    await author.boardService.requestReview(TARGET, [reviewerB.peerId, reviewerC.peerId], 'please check the merge')
    await waitFor('the request on every peer', () => reviews(nodes).every(r => r?.requestedBy === author.peerId))
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
    await waitFor('the author\'s retraction on every peer', () =>
      reviews(nodes).every(r => r?.verdicts.some(v => v.reviewer === author.peerId && v.verdict === 'retract')))
    for (const r of reviews(nodes)) expect(r?.approvals).toBe(1)
  })

  it('counts the approval again when the reviewer approves after retracting', async () => {
    await reviewerB.boardService.verdict(TARGET, 'approve', 'fixed in the next commit')
    await waitForApprovals(nodes, 2, 'after b approves again')
    // Every peer holds the same entries, so every peer shows the same view.
    const [first, ...rest] = reviews(nodes)
    for (const r of rest) expect(r).toEqual(first)
  })
})
