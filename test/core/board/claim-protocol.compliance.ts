// The claim protocol's compliance suite: what every runner of the core claim
// protocol (core/board/claim-protocol) must show, whatever carries its
// entries and keeps its time. agentd's board service runs it over libp2p on
// real timers (test/scenarios/board/claim-protocol-compliance.test.ts), the
// simulator's board node over a simulated network in virtual time
// (test/sim/faults/board-node-compliance.test.ts); both pass these same tests.
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { ClaimVerdict } from '../../../src/core/board/claim-protocol.js'
import { FailedPreconditionError, NotFoundError } from '../../../src/core/errors.js'

/** The answer to a claim, as the protocol's verdict has it (a runner may say more). */
export type ClaimAnswer = Pick<ClaimVerdict, 'task' | 'epoch' | 'winner' | 'handoff'> & { outcome: string }

/** One claimant, as its agent sees it. */
export interface ClaimNode {
  /** the id the board names it by (holder, winner) */
  readonly id: string
  /** Claims `task`; resolves with the protocol's answer once its settle window is over. Throws like `agency claim`. */
  claim: (task: string) => Promise<ClaimAnswer>
  /** Gives a held task back with hand-off notes. */
  release: (task: string, note: string) => Promise<void>
  /** The task on this node's own board: its holder and epoch, or undefined while the node does not know it. */
  view: (task: string) => { state: string; holder?: string; epoch: number } | undefined
}

export interface ClaimCluster {
  readonly nodes: readonly ClaimNode[]
  /** Writes task `id` on the first node and returns once every node knows it. */
  addTask: (id: string) => Promise<void>
  /** Returns once `check` holds (the runner's time moving on meanwhile); fails if it never does. */
  until: (what: string, check: () => boolean) => Promise<void>
  stop: () => Promise<void>
}

/** Starts `n` connected nodes with no tasks. */
export type ClaimClusterFactory = (n: number) => Promise<ClaimCluster>

/** Registers the suite under `runner` (a describe block of its own). */
export function claimProtocolCompliance(runner: string, start: ClaimClusterFactory, timeoutMs = 60_000): void {
  describe(`claim protocol compliance: ${runner}`, () => {
    let cluster: ClaimCluster
    beforeEach(async () => {
      cluster = await start(3)
    }, timeoutMs)
    afterEach(async () => {
      await cluster?.stop()
    }, timeoutMs)

    const everyNodeShows = async (task: string, holder: string, epoch: number): Promise<void> => {
      await cluster.until(`every node to show ${holder} holding ${task} at epoch ${epoch}`, () =>
        cluster.nodes.every(n => {
          const v = n.view(task)
          return v?.state === 'claimed' && v.holder === holder && v.epoch === epoch
        })
      )
    }

    it(
      'answers a lone claim HELD at epoch 1, and every node comes to show the claimant as holder',
      async () => {
        await cluster.addTask('lone')
        const [a] = cluster.nodes
        expect(await a.claim('lone')).toMatchObject({ outcome: 'HELD', task: 'lone', epoch: 1, winner: a.id })
        await everyNodeShows('lone', a.id, 1)
      },
      timeoutMs
    )

    it(
      'answers claims made at once on two nodes with exactly one HELD; the other is LOST and names the winner',
      async () => {
        await cluster.addTask('contested')
        const [a, b] = cluster.nodes
        const answers = await Promise.all([a.claim('contested'), b.claim('contested')])
        const held = answers.filter(x => x.outcome === 'HELD')
        expect(held).toHaveLength(1)
        const winner = held[0].winner
        expect([a.id, b.id]).toContain(winner)
        expect(answers.find(x => x.outcome === 'LOST')).toMatchObject({ task: 'contested', winner })
        await everyNodeShows('contested', winner, held[0].epoch)
      },
      timeoutMs
    )

    it(
      'refuses to claim a task another node holds, and a task nobody added',
      async () => {
        await cluster.addTask('taken')
        const [a, b] = cluster.nodes
        await a.claim('taken')
        await everyNodeShows('taken', a.id, 1)
        await expect(b.claim('taken')).rejects.toBeInstanceOf(FailedPreconditionError)
        await expect(b.claim('no-such-task')).rejects.toBeInstanceOf(NotFoundError)
      },
      timeoutMs
    )

    it(
      'after a release, the next claim is HELD at the next epoch and carries the hand-off notes',
      async () => {
        await cluster.addTask('handed')
        const [a, b] = cluster.nodes
        await a.claim('handed')
        await a.release('handed', 'parser done; printer next')
        await cluster.until('every node to see the release', () => cluster.nodes.every(n => n.view('handed')?.state === 'open'))
        expect(await b.claim('handed')).toMatchObject({ outcome: 'HELD', epoch: 2, winner: b.id, handoff: 'parser done; printer next' })
        await everyNodeShows('handed', b.id, 2)
      },
      timeoutMs
    )
  })
}
