// The simulator's board node passes the claim protocol's compliance suite, in
// virtual time over a simulated network with per-link latency.
import type { ClaimVerdict } from '../../../src/core/board/claim-protocol.js'
import { TaskSpec } from '../../../src/gen/agency/v1/log.js'
import type { SimBoardNode } from '../../../src/sim/faults/board-node.js'
import { claimProtocolCompliance, type ClaimCluster, type ClaimNode } from '../../core/board/claim-protocol.compliance.js'
import { createSwarm } from './board-node-swarm.js'

const NET = { minLatencyMs: 5, maxLatencyMs: 40, jitterMs: 5 }
const STEP_MS = 50
const MAX_MS = 120_000

async function startSimCluster(n: number): Promise<ClaimCluster> {
  const { network, nodes } = createSwarm(7, n, NET, {
    heartbeatMs: 1_000,
    leaseMs: 10_000,
    syncEveryMs: 500,
    settle: { minMs: 0, defaultMs: 300 }
  })
  network.run(2_000)

  /** Moves virtual time on until `check` holds. */
  const runUntil = (what: string, check: () => boolean): void => {
    const deadline = network.now + MAX_MS
    while (!check()) {
      if (network.now >= deadline) throw new Error(`not ${what} after ${MAX_MS} ms of virtual time`)
      network.run(network.now + STEP_MS)
    }
  }

  // Claims made in the same turn of the event loop are made at the same
  // virtual moment: time moves on only once they are all issued.
  const waiting: Array<{ settled: () => boolean }> = []
  let pumping = false
  let failure: Error | undefined
  const pump = (): void => {
    if (pumping) return
    pumping = true
    setImmediate(() => {
      pumping = false
      try {
        runUntil('every claim answered', () => waiting.every(w => w.settled()))
      } catch (err) {
        failure = err as Error
      } finally {
        waiting.splice(0)
      }
    })
  }

  const claimNode = (node: SimBoardNode): ClaimNode => {
    const verdicts: ClaimVerdict[] = []
    node.listen({
      verdict: v => {
        verdicts.push(v)
      }
    })
    return {
      id: node.name,
      claim: async task => {
        const ticket = node.claim(task)
        const answer = (): ClaimVerdict | undefined => verdicts.find(v => v.task === task && v.epoch === ticket.epoch)
        if (answer() === undefined) {
          waiting.push({ settled: () => answer() !== undefined })
          pump()
          await new Promise(resolve => setImmediate(resolve))
        }
        const v = answer()
        if (v === undefined) throw failure ?? new Error(`no answer to the claim of ${task}`)
        return v
      },
      release: async (task, note) => {
        node.release(task, note)
      },
      view: task => node.board.task(task, node.now)
    }
  }

  return {
    nodes: nodes.map(claimNode),
    addTask: async id => {
      nodes[0].append('task', TaskSpec.fromPartial({ id, title: id }))
      runUntil(`task ${id} on every node`, () => nodes.every(x => x.board.task(id, x.now) !== undefined))
    },
    until: async (what, check) => {
      runUntil(what, check)
    },
    stop: async () => {}
  }
}

claimProtocolCompliance("the simulator's board node", startSimCluster)
