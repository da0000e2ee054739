// One attempt at a task by a baseline agent: it works for the attempt's time
// (longer when it stalls or the agent is slow), then, if it passes, pays what
// the hazards ask before a merge (merge-hazards.ts: rebase, mismatches, red
// tests around it, a dependency's defect). The run records the work and any
// trap hit. What happens next (record the trap, try again, merge) is the
// strategy's call; baselines merge without running the whole suite and
// without a review.

import type { Random } from '../../engine/random.js'
import type { Attempt, ProjectTask } from '../workload.js'
import { preMerge, type HazardContext } from './merge-hazards.js'

export type AttemptContext = HazardContext

export function runAttempt(
  ctx: AttemptContext,
  agent: number,
  rng: Random,
  task: ProjectTask,
  known: ReadonlySet<string>,
  then: (a: Attempt) => void
): void {
  const start = ctx.scheduler.now
  const slowdown = ctx.project.hazards.slowdown(agent, task.index, ctx.progress.nextAttempt(task))
  const attempt = ctx.project.attempt(rng, task, known, slowdown)
  ctx.scheduler.after(attempt.durationMs, () => {
    const end = (): void => {
      ctx.recorder.worked(task.id, agent, start, ctx.scheduler.now)
      if (attempt.result === 'trap') ctx.recorder.trapHit(attempt.trap, start, attempt.durationMs)
      then(attempt)
    }
    if (attempt.result === 'pass' && !ctx.progress.passed(task.id)) {
      const pre = preMerge(ctx, task, agent, start, attempt.durationMs)
      if (pre.ms > 0) {
        ctx.scheduler.after(pre.ms, () => {
          if (pre.repair) ctx.progress.repairAround(task, ctx.scheduler.now)
          end()
        })
        return
      }
    }
    end()
  })
}
