import { describe, expect, it } from 'vitest'
import { AgencySwarm } from '../../../../src/sim/swarm-model/strategies/agency.js'
import type { Replica } from '../../../../src/sim/swarm-model/replica.js'
import { createProject } from '../../../../src/sim/swarm-model/workload.js'

const MIN = 60_000
const project = createProject(4, { tasks: 120, layers: 3, tasksPerArea: 30 })

/** What a replica's board says about every task: state, holder, epoch, who finished it. */
function boardState(r: Replica, now: number): string[] {
  return r.board
    .tasks(now)
    .map(t => `${t.id} ${t.state === 'expired' ? 'claimed' : t.state} ${t.holder ?? '-'}@${t.epoch} ${t.doneBy ?? '-'}`)
}

function expectConverged(swarm: AgencySwarm): void {
  const now = swarm.scheduler.now
  for (const r of swarm.replicas) r.drain(now)
  const [first, ...rest] = swarm.replicas
  const want = boardState(first, now)
  for (const r of rest) {
    expect(r.digest).toBe(first.digest)
    expect(r.heldIndices()).toEqual(first.heldIndices())
    expect(boardState(r, now)).toEqual(want)
  }
}

describe('partition and heal, simulated', () => {
  it('both halves keep working while split; after healing every replica holds the same entries and shows the same holders', () => {
    const swarm = new AgencySwarm({ project, agents: 12, seed: 21, partitions: [{ at: 10 * MIN, until: 40 * MIN }] })
    swarm.runUntil(39 * MIN)
    // while split, the halves see different boards
    const now = swarm.scheduler.now
    const [left, right] = [swarm.replicas[0], swarm.replicas[11]]
    left.drain(now)
    right.drain(now)
    expect(left.digest).not.toBe(right.digest)
    expect(swarm.progress.passedCount).toBeGreaterThan(0)

    swarm.runUntil(60 * MIN)
    expect(swarm.recorder.extra.partitionsHealed).toBe(1)
    // stop the agents, let anti-entropy run, compare every replica
    swarm.freezeAgents()
    swarm.runUntil(62 * MIN)
    expectConverged(swarm)
    const sample = boardState(swarm.replicas[0], swarm.scheduler.now)
    expect(sample.some(s => s.includes(' claimed '))).toBe(true)
    expect(sample.some(s => s.includes(' done '))).toBe(true)
  })

  it('a partitioned swarm still finishes the project, and every replica agrees on who finished what', () => {
    const swarm = new AgencySwarm({ project, agents: 12, seed: 22, partitions: [{ at: 5 * MIN, until: 60 * MIN }] })
    const result = swarm.run()
    expect(result.completed).toBe(true)
    swarm.freezeAgents()
    swarm.runUntil(swarm.scheduler.now + 2 * MIN)
    expectConverged(swarm)
  })

  it('with lossy gossip, anti-entropy still brings every replica to the same entries', () => {
    const swarm = new AgencySwarm({ project, agents: 10, seed: 23, loss: 0.2 })
    swarm.runUntil(45 * MIN)
    swarm.freezeAgents()
    swarm.runUntil(48 * MIN)
    expectConverged(swarm)
  })
})

describe('crash and restart, simulated', () => {
  it('a holder that dies loses its task to a takeover at a higher epoch; the swarm finishes; the restarted node agrees', () => {
    const swarm = new AgencySwarm({ project, agents: 6, seed: 31, crashes: [{ node: 2, at: 5 * MIN, restartAt: 40 * MIN }] })
    swarm.runUntil(5 * MIN - 1)
    const held = swarm.replicas[0].board.heldBy(swarm.replicas[2].name)
    expect(held.length).toBe(1) // it dies holding a task
    const result = swarm.run()
    expect(result.completed).toBe(true)
    expect(result.extra.crashes).toBe(1)
    expect(result.extra.takeovers).toBeGreaterThanOrEqual(1)
    const now = swarm.scheduler.now
    const view = swarm.replicas[0].board.task(held[0].task, now)
    expect(view?.state).toBe('done')
    expect(view?.epoch).toBeGreaterThanOrEqual(2) // taken over
    expect(view?.doneBy).not.toBe(swarm.replicas[2].name)
    swarm.freezeAgents()
    swarm.runUntil(now + 2 * MIN)
    expectConverged(swarm)
  })
})
