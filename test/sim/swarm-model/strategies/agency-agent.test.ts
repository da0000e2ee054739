// Carry-on (settings.carryOn, on by default as in agentd: core/board/carry-on):
// a holder whose request waits in the integrator's queue goes on with its next
// task, and its daemon writes the done when the request lands, so dependents
// still wait for the landing. Off: the holder waits for its batch.

import { describe, expect, it } from 'vitest'
import { runAgency } from '../../../../src/sim/swarm-model/strategies/agency.js'
import { createProject } from '../../../../src/sim/swarm-model/workload.js'

const project = createProject(5, { tasks: 80, layers: 3, tasksPerArea: 20 })
// an integrator from the first wait for the branch, so every holder's change goes through its queue,
// which the holder hands over itself (agentd's request-integration; not its daemon's background verify)
const settings = { pileUp: 1, backgroundVerify: 0 }

describe('carry-on while an integration request waits', () => {
  const waits = runAgency({ project, agents: 6, seed: 2, settings: { ...settings, carryOn: 0 } })
  const byDefault = runAgency({ project, agents: 6, seed: 2, settings })
  const carries = runAgency({ project, agents: 6, seed: 2, settings: { ...settings, carryOn: 1 } })

  it('off: holders wait for their batch and never carry on', () => {
    expect(waits.completed).toBe(true)
    expect(waits.extra.carriedOn ?? 0).toBe(0)
    expect(waits.spent.integrationWait).toBeGreaterThan(0)
  })

  it('on: holders go on with their next task instead of waiting, every change still lands verified, and the project completes', () => {
    expect(carries.completed).toBe(true)
    expect(carries.extra.carriedOn).toBeGreaterThan(0)
    expect(carries.extra.breakingMerges ?? 0).toBe(0)
    expect(carries.brokenMainMs).toBe(0)
    // only assistants (who do not carry on) still wait for their batch
    expect(carries.spent.integrationWait ?? 0).toBeLessThan(waits.spent.integrationWait)
  })

  it('is on by default, as in agentd', () => {
    expect(byDefault.extra.carriedOn).toBe(carries.extra.carriedOn)
    expect(byDefault.timeToMs).toEqual(carries.timeToMs)
  })
})
