// One attempt at a task by a baseline agent: it works for the attempt's time,
// rebases when another agent merged into its files meanwhile, and the run
// records the work and any trap hit. What happens next (record the trap, try
// again, merge) is the strategy's call.

import type { ProjectProgress } from '../project-progress.js'
import type { Random } from '../random.js'
import type { RunRecorder } from '../run-recorder.js'
import type { Scheduler } from '../scheduler.js'
import type { Attempt, Project, ProjectTask } from '../workload.js'

export interface AttemptContext {
  scheduler: Scheduler
  project: Project
  progress: ProjectProgress
  recorder: RunRecorder
}

export function runAttempt (ctx: AttemptContext, agent: number, rng: Random, task: ProjectTask, known: ReadonlySet<string>, then: (a: Attempt) => void): void {
  const start = ctx.scheduler.now
  const attempt = ctx.project.attempt(rng, task, known)
  ctx.scheduler.after(attempt.durationMs, () => {
    const end = (): void => {
      ctx.recorder.worked(task.id, agent, start, ctx.scheduler.now)
      if (attempt.result === 'trap') ctx.recorder.trapHit(attempt.trap, start)
      then(attempt)
    }
    if (attempt.result === 'pass' && !ctx.progress.passed(task.id) && ctx.progress.needsRebase(task, agent, start)) {
      ctx.recorder.bump('rebases')
      ctx.scheduler.after(attempt.durationMs * ctx.project.options.rebaseFraction, end)
    } else {
      end()
    }
  })
}
