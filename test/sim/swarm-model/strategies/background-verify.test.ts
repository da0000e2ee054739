// Verify in the background (settings.backgroundVerify, agentd's `agency
// integrate --background`) and reviews only while a peer has nothing to claim
// (settings.reviewWhenIdle, agentd's status `reviews: worth asking` and the
// prompt): both on by default, as agentd has them.

import { describe, expect, it } from 'vitest'
import { runAgency } from '../../../../src/sim/swarm-model/strategies/agency.js'
import { createProject } from '../../../../src/sim/swarm-model/workload.js'

const project = createProject(5, { tasks: 80, layers: 3, tasksPerArea: 20 })

describe('verify in the background', () => {
  const byDefault = runAgency({ project, agents: 6, seed: 2 })
  const off = runAgency({ project, agents: 6, seed: 2, settings: { backgroundVerify: 0 } })
  const alone = runAgency({ project, agents: 6, seed: 2, settings: { backgroundVerify: 1, pileUp: 1_000 } })
  const queued = runAgency({ project, agents: 6, seed: 2, settings: { backgroundVerify: 2, pileUp: 1 } })

  it("is on by default, as agentd's prompt asks for it", () => {
    expect(byDefault.extra.backgroundVerifies).toBeGreaterThan(0)
    expect(off.extra.backgroundVerifies ?? 0).toBe(0)
  })

  it('without an integrator: holders spend no time on verify runs or the race to the branch, and every change still lands verified', () => {
    expect(alone.completed).toBe(true)
    expect(alone.extra.integratorStartedAtMin).toBeUndefined()
    expect(alone.extra.backgroundVerifies).toBeGreaterThan(0)
    expect(alone.extra.breakingMerges ?? 0).toBe(0)
    expect(alone.brokenMainMs).toBe(0)
    // only assistants (who wait for their own integration) run the suite on agent time
    expect(alone.spent.verify ?? 0).toBeLessThan(off.spent.verify)
    expect(alone.spent.verifyWait ?? 0).toBe(0)
  })

  it('a red verify comes back to its author, who fixes the change and hands it over again', () => {
    expect(alone.extra.backgroundRed).toBeGreaterThan(0)
    expect(alone.spent.breakFix).toBeGreaterThan(0)
    expect(alone.extra.backgroundVerifies).toBeGreaterThan(alone.extra.backgroundRed)
  })

  it('with an integrator: the daemon verifies before it requests, so batches take verified changes only', () => {
    expect(queued.completed).toBe(true)
    expect(queued.extra.integratorStartedAtMin).toBeDefined()
    expect(queued.extra.preVerifies ?? 0).toBeLessThan(queued.extra.backgroundVerifies)
    expect(queued.extra.breakingMerges ?? 0).toBe(0)
    expect(queued.spent.integrationWait ?? 0).toBeLessThan(off.spent.integrationWait ?? Infinity)
  })
})

describe('reviews only while a peer has nothing to claim', () => {
  const all = runAgency({ project, agents: 6, seed: 2, settings: { reviewWhenIdle: 0 } })
  const idle = runAgency({ project, agents: 6, seed: 2 })

  it('asks for fewer reviews when every agent has a ready task, and the project completes', () => {
    expect(idle.completed).toBe(true)
    expect(idle.extra.reviewRequests ?? 0).toBeLessThan(all.extra.reviewRequests)
  })
})
