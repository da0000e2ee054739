// The simulated integrator (src/sim/swarm-model/strategies/agency-integrator.ts) batches
// requests as `agency integrator` does: up to batchMax in queue order, one
// request per task per batch; a later request for the same task waits for
// the next batch.

import { describe, expect, it } from 'vitest'
import { RunRecorder } from '../../../../src/experiment/run-recorder.js'
import { Scheduler } from '../../../../src/sim/engine/scheduler.js'
import { SimIntegrator } from '../../../../src/sim/swarm-model/strategies/agency-integrator.js'

const VERIFY = 60_000

function integrator(batchMax = 32): { scheduler: Scheduler; recorder: RunRecorder; sim: SimIntegrator } {
  const scheduler = new Scheduler()
  const recorder = new RunRecorder({ strategy: 'agency', label: 'agency', agents: 4, tasks: 4 })
  const sim = new SimIntegrator({ scheduler, recorder, verifyMs: VERIFY, batching: true, batchEveryMs: 2_000, batchMax, pileUp: 3 })
  sim.integratorLive = true
  return { scheduler, recorder, sim }
}

describe('the simulated integrator', () => {
  it("takes one request per task into a batch: a second request for the task (an assistant's, say) waits for the next batch", () => {
    const { scheduler, recorder, sim } = integrator()
    const answered: Array<{ who: string; at: number; green: boolean }> = []
    const ask = (who: string, task: number): void => {
      sim.request({
        task,
        breaks: false,
        then: green => {
          answered.push({ who, at: scheduler.now, green })
        }
      })
    }
    ask('holder of 1', 1)
    ask('assistant on 1', 1)
    ask('holder of 2', 2)
    scheduler.run()
    expect(answered.map(a => a.who)).toEqual(['holder of 1', 'holder of 2', 'assistant on 1'])
    expect(answered[0].at).toBe(answered[1].at)
    expect(answered[2].at).toBeGreaterThanOrEqual(answered[0].at + VERIFY)
    expect(recorder.extra.batches).toBe(2)
  })

  it('fills a batch up to batchMax in queue order and leaves the rest for the next', () => {
    const { scheduler, recorder, sim } = integrator(2)
    const order: number[] = []
    for (const task of [5, 6, 7])
      sim.request({
        task,
        breaks: false,
        then: () => {
          order.push(task)
        }
      })
    scheduler.run()
    expect(order).toEqual([5, 6, 7])
    expect(recorder.extra.batches).toBe(2)
  })

  it('a change that breaks other tests comes back red, and costs the batch a bisection', () => {
    const { scheduler, recorder, sim } = integrator()
    const verdicts: Record<number, boolean> = {}
    sim.request({
      task: 1,
      breaks: true,
      then: g => {
        verdicts[1] = g
      }
    })
    sim.request({
      task: 2,
      breaks: false,
      then: g => {
        verdicts[2] = g
      }
    })
    scheduler.run()
    expect(verdicts).toEqual({ 1: false, 2: true })
    expect(recorder.extra.verifyRuns).toBeGreaterThan(1)
  })
})
