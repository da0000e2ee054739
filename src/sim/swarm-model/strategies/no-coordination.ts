// Baseline (a), no coordination: every agent sees which tests pass (the
// shared branch, always fresh, which flatters this baseline) and picks a
// random ready task. Nobody knows what anyone else is working on, so
// duplicates happen; nobody reads anyone else's notes, so traps are hit again.
// Against the hazards it has nothing: merges run only the task's own test,
// nobody reviews, nobody agrees interfaces, a stalled agent is waited for.

import { ProjectProgress } from '../project-progress.js'
import { createRandom, type Random } from '../../engine/random.js'
import { RunRecorder, type RunResult } from '../../../experiment/run-recorder.js'
import { Scheduler } from '../../engine/scheduler.js'
import type { ProjectTask } from '../workload.js'
import { runAttempt, type AttemptContext } from './attempt-runner.js'
import { idleRepair } from './merge-hazards.js'
import { RUN_DEFAULTS, validateRun, type SwarmRunInit } from './common.js'

export function runNoCoordination(init: SwarmRunInit): RunResult {
  validateRun(init)
  const wallStart = performance.now()
  const { project, agents } = init
  const scheduler = new Scheduler()
  const recorder = new RunRecorder({ strategy: 'none', label: init.label ?? 'no coordination', agents, tasks: project.tasks.length })
  const progress = new ProjectProgress(project, recorder)
  const ctx: AttemptContext = { scheduler, project, progress, recorder }
  const rng = createRandom(init.seed)
  const pollMs = init.pollMs ?? RUN_DEFAULTS.pollMs

  const agent = (i: number, r: Random): void => {
    const ownTraps = new Set<string>()
    const pick = (): void => {
      const id = progress.ready.pick(r)
      if (id === undefined) {
        if (!idleRepair(ctx, i, pick)) scheduler.after(pollMs * r.between(0.5, 1.5), pick)
        return
      }
      work(project.task(id))
    }
    const work = (t: ProjectTask): void => {
      runAttempt(ctx, i, r, t, ownTraps, a => {
        if (a.result === 'trap') {
          ownTraps.add(a.trap)
          recorder.trapRecorded(a.trap, scheduler.now)
        }
        if (a.result === 'pass') {
          if (!progress.merge(t, i, scheduler.now)) recorder.bump('duplicateMerges')
          pick()
        } else if (progress.passed(t.id)) {
          pick()
        } else {
          work(t)
        }
      })
    }
    scheduler.at(1_000 + r.between(0, init.startSpreadMs ?? RUN_DEFAULTS.startSpreadMs), pick)
  }
  for (let i = 0; i < agents; i++) agent(i, rng.fork())
  scheduler.run({ until: init.maxVirtualMs ?? RUN_DEFAULTS.maxVirtualMs, stop: () => progress.complete })
  return recorder.result(scheduler.now, (performance.now() - wallStart) / 1000, scheduler.eventsRun)
}
