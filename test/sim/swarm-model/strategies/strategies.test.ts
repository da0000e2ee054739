import { describe, expect, it } from 'vitest'
import { AgencySwarm } from '../../../../src/sim/swarm-model/strategies/agency.js'
import { runCentralManager } from '../../../../src/sim/swarm-model/strategies/central-manager.js'
import { runGitLocks } from '../../../../src/sim/swarm-model/strategies/git-locks.js'
import { runNoCoordination } from '../../../../src/sim/swarm-model/strategies/no-coordination.js'
import { createProject } from '../../../../src/sim/swarm-model/workload.js'

// A small project with few areas, so traps recur across tasks and findings matter.
const project = createProject(3, { tasks: 160, layers: 4, tasksPerArea: 40, trapChance: 0.6 })
const AGENTS = 16

describe('agency in simulation, small scale', () => {
  const swarm = new AgencySwarm({ project, agents: AGENTS, seed: 11 })
  const result = swarm.run()

  it('completes the project: every hidden test passes, and every replica marks every task done', () => {
    expect(result.completed).toBe(true)
    expect(result.passTimeline).toHaveLength(160)
    const end = swarm.scheduler.now
    for (const r of swarm.replicas) {
      r.drain(end + 1_000)
      expect(r.board.tasks(end, 'done').length).toBeGreaterThanOrEqual(159) // the last done may still be in flight
    }
  })

  it('without partitions, no two agents ever work on the same task after the settle window', () => {
    expect(result.duplicateAgentSeconds).toBe(0)
    expect(result.workAgentSeconds).toBeGreaterThan(0)
    expect(result.claimSettle?.count).toBeGreaterThanOrEqual(160)
  })

  it('counts coordination traffic with the protobuf size model', () => {
    expect(result.traffic['gossip: entries'].messages).toBeGreaterThan(0)
    expect(result.traffic['gossip: heartbeats'].bytes).toBeGreaterThan(0)
    expect(result.traffic.sync.messages).toBeGreaterThan(0)
    expect(result.bytesPerAgentMinute).toBeGreaterThan(0)
  })

  it('the ready index the agents pick from agrees with the board it narrows', () => {
    const s = new AgencySwarm({ project, agents: 8, seed: 12 })
    s.runUntil(90 * 60_000)
    const now = s.scheduler.now
    const ids = (set: { values: () => readonly number[] }): string[] =>
      set
        .values()
        .map(i => project.tasks[i].id)
        .sort()
    for (const r of s.replicas.slice(0, 3)) {
      r.drain(now)
      const open = r.board
        .ready(now)
        .filter(t => t.state === 'open')
        .map(t => t.id)
        .sort()
      const held = r.board
        .tasks(now)
        .filter(t => t.state === 'claimed' && t.deps.every(d => r.board.doneRecord(d) !== undefined))
        .map(t => t.id)
        .sort()
      expect(open.length + held.length).toBeGreaterThan(0)
      expect(ids(r.ready.open)).toEqual(open)
      expect(ids(r.ready.held)).toEqual(held)
    }
  })

  it('is deterministic for a seed', () => {
    const again = new AgencySwarm({ project, agents: AGENTS, seed: 11 }).run()
    expect(again.passTimeline).toEqual(result.passTimeline)
    expect(again.messages).toBe(result.messages)
  })

  it('hits fewer traps that were already recorded than agents that share nothing', () => {
    const none = runNoCoordination({ project, agents: AGENTS, seed: 11 })
    expect(none.completed).toBe(true)
    expect(none.repeatedTrapHits).toBeGreaterThan(result.repeatedTrapHits)
    expect(none.duplicateAgentSeconds).toBeGreaterThan(0)
  })
})

describe('baselines, small scale', () => {
  it('git lock files: complete, no duplicate work, pushes and pulls counted, some pushes rejected', () => {
    const r = runGitLocks({ project, agents: AGENTS, seed: 11 })
    expect(r.completed).toBe(true)
    expect(r.duplicateAgentSeconds).toBe(0)
    expect(r.traffic['git pull'].messages).toBeGreaterThan(0)
    expect(r.traffic['git push'].messages).toBeGreaterThan(0)
    expect(r.extra.pushesRejected).toBeGreaterThan(0)
    expect(r.claimSettle).not.toBeNull()
  })

  it('central manager: completes, no duplicate work, and a slower manager makes a slower swarm', () => {
    const fast = runCentralManager({ project, agents: AGENTS, seed: 11, serviceMs: 10 })
    const slow = runCentralManager({ project, agents: AGENTS, seed: 11, serviceMs: 60_000 })
    for (const r of [fast, slow]) {
      expect(r.completed).toBe(true)
      expect(r.duplicateAgentSeconds).toBe(0)
    }
    expect(slow.finishedAtMs).toBeGreaterThan(fast.finishedAtMs)
    expect(slow.extra.managerBusySeconds).toBeGreaterThan(fast.extra.managerBusySeconds)
  })
})
