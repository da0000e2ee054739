import { describe, expect, it } from 'vitest'
import { claimOutcome } from '../../../src/core/board/settle.js'
import { ClaimAgent } from '../../../src/sim/faults/claim-agent.js'
import { addTasks, createSwarm, holderTable, runUntil } from './board-node-swarm.js'

// Every agent grabs a task at (nearly) the same moment over a network with
// random per-link latency. After the settle window each agent checks HELD or
// LOST; the losers release and pick another ready task.

function herd(seed: number, agents: number, tasks: number, opts: { spread?: number; settleK?: number } = {}) {
  // Each node pings a random peer once a heartbeat period: the round trip
  // (two legs, timed on the node's own clock) feeds its settle window.
  const swarm = createSwarm(
    seed,
    agents,
    { minLatencyMs: 5, maxLatencyMs: 40, jitterMs: 5 },
    {
      heartbeatMs: 2_500,
      leaseMs: 10_000,
      settle: { k: opts.settleK ?? 3, minMs: 0, maxMs: 5_000, defaultMs: 500 }
    }
  )
  const ids = addTasks(swarm.nodes[0], tasks)
  swarm.network.run(2_600)
  const claimers = swarm.nodes.map(node => new ClaimAgent({ node, network: swarm.network, rng: swarm.rng.fork(), spread: opts.spread }))
  for (const a of claimers) a.start(swarm.rng.between(0, 20))
  runUntil(swarm.network, () => claimers.every(a => a.state === 'holding' || a.state === 'idle'))
  return { ...swarm, ids, claimers }
}

function believers(claimers: ClaimAgent[]): Map<string, string[]> {
  const byTask = new Map<string, string[]>()
  for (const a of claimers) {
    if (a.holding === undefined) continue
    byTask.set(a.holding.task, [...(byTask.get(a.holding.task) ?? []), a.name])
  }
  return byTask
}

describe('thundering herd, simulated', () => {
  it.each([1])(
    '200 agents, 100 tasks (seed %i): one holder per task, the same on every node, and it is the agent that believes HELD',
    seed => {
      const { nodes, ids, claimers } = herd(seed, 200, 100)

      const table = holderTable(nodes[0])
      expect(Object.keys(table).sort()).toEqual(ids)
      for (const node of nodes) expect(holderTable(node)).toEqual(table)

      const holders = Object.values(table).map(h => h.split('@')[0])
      expect(new Set(holders).size).toBe(ids.length) // an agent holds at most one task

      const believed = believers(claimers)
      for (const id of ids) {
        expect(believed.get(id)).toHaveLength(1)
        const [agent] = believed.get(id) as string[]
        expect(table[id]).toBe(`${agent}@1`)
      }
      expect(claimers.filter(a => a.state === 'holding')).toHaveLength(100)
      expect(claimers.filter(a => a.state === 'idle')).toHaveLength(100)
      // there was a race to win: some agents lost at least once
      expect(claimers.some(a => a.lost.size > 0)).toBe(true)
    }
  )

  it('200 agents on one task: exactly one HELD, every other LOST, every node names the same winner', () => {
    const { nodes, claimers, ids } = herd(7, 200, 1, { spread: 1 })
    const winners = claimers.filter(a => a.state === 'holding')
    expect(winners).toHaveLength(1)
    const winner = winners[0].name
    for (const node of nodes) expect(node.board.holder(ids[0])?.holder).toBe(winner)
    for (const a of claimers) {
      if (a.name === winner || a.claims === 0) continue
      expect(claimOutcome(nodes.find(n => n.name === a.name)!.board, ids[0], a.name, 1)).toMatchObject({ outcome: 'LOST', winner })
    }
    expect(claimers.filter(a => a.claims > 0).length).toBeGreaterThan(1)
  })

  it('the check can fail: with a settle window shorter than the gossip latency, two agents believe they hold one task', () => {
    const { claimers } = herd(1, 100, 50, { settleK: 0.05 })
    const believed = believers(claimers)
    expect([...believed.values()].some(agents => agents.length > 1)).toBe(true)
  })
})
