// Spare assist places in the simulator (core/board/assist-spare.ts, as agentd):
// a swarm far wider than the project's ready tasks has more free agents than
// assist places, so tasks get assistants beyond the budget, each on its own
// approach; without spare places (agentd --assist-spare 0) never more than the
// budget. A holder slow by its record hands off sooner (handoff-choice.ts).
import { describe, expect, it } from 'vitest'
import { AgencySwarm } from '../../../../src/sim/swarm-model/strategies/agency.js'
import { createProject } from '../../../../src/sim/swarm-model/workload.js'

const project = createProject(9, { tasks: 120, layers: 6, tasksPerArea: 40 })

/** The most assistants any task had at once, checking that theirs are distinct approaches. */
function mostAssistants(swarm: AgencySwarm): number {
  let most = 0
  while (!swarm.progress.complete && swarm.scheduler.now < 200 * 3600_000) {
    swarm.runUntil(swarm.scheduler.now + 20_000)
    for (const t of project.tasks) {
      const approaches = swarm.helpers.helpersOf(t.index).map(h => h.approach)
      expect(new Set(approaches).size).toBe(approaches.length)
      most = Math.max(most, approaches.length)
    }
  }
  expect(swarm.progress.complete).toBe(true)
  return most
}

describe('spare assist places while many agents are free', () => {
  it('a wide swarm puts assistants beyond the budget on held tasks, each with an approach of its own', () => {
    const swarm = new AgencySwarm({ project, agents: 150, seed: 3, mechanisms: { handoff: false } })
    expect(mostAssistants(swarm)).toBeGreaterThan(swarm.settings.maxHelpersPerTask)
    const r = swarm.result()
    expect(r.duplicateAgentSeconds).toBe(0)
    expect(r.helpingAgentSeconds).toBeGreaterThan(0)
  })

  it('keeps to the budget without spare places', () => {
    const swarm = new AgencySwarm({ project, agents: 150, seed: 3, mechanisms: { handoff: false }, settings: { assistSpare: 0 } })
    expect(mostAssistants(swarm)).toBe(swarm.settings.maxHelpersPerTask)
  })
})
