// What a passing attempt meets before it can merge, the same for every
// strategy: a rebase when another agent merged into its files meanwhile; an
// interface mismatch with each such overlapping task it was built apart from
// (unless the two agreed); red tests around it that someone else's unverified
// merge broke (it repairs them first); a defect in a dependency that got past
// its test (the first task to build on it pays to find and fix it).

import type { ProjectProgress } from '../project-progress.js'
import type { RunRecorder } from '../../../experiment/run-recorder.js'
import type { Scheduler } from '../../engine/scheduler.js'
import type { Project, ProjectTask } from '../workload.js'

export interface HazardContext {
  scheduler: Scheduler
  project: Project
  progress: ProjectProgress
  recorder: RunRecorder
}

export interface PreMerge {
  /** extra agent time before the merge */
  ms: number
  /** red tests around the task: repair them when `ms` is over */
  repair: boolean
}

/**
 * The extra work before a passing attempt at `task` (started at `start`,
 * `durationMs` long) can merge. `agreed(a, b)`: whether the agents building
 * tasks a and b agreed on their interface (agency's overlap messages).
 */
export function preMerge(
  ctx: HazardContext,
  task: ProjectTask,
  agent: number,
  start: number,
  durationMs: number,
  agreed: (a: number, b: number) => boolean = () => false
): PreMerge {
  const { project, progress, recorder } = ctx
  const h = project.hazards
  let ms = 0
  const others = progress.mergedSince(task, agent, start)
  if (others.length > 0) {
    recorder.bump('rebases')
    ms += durationMs * project.options.rebaseFraction
  }
  for (const o of others) {
    if (!h.mismatch(task.index, o) || agreed(task.index, o)) continue
    recorder.bump('mismatches')
    const cost = h.options.mismatchRepairFraction * task.effortMs
    recorder.spend('mismatch', cost)
    ms += cost
  }
  const repair = progress.brokenAround(task)
  if (repair) {
    recorder.bump('repairs')
    const cost = h.options.repairFraction * project.options.medianEffortMs
    recorder.spend('repair', cost)
    ms += cost
  }
  for (const d of progress.takeDefects(task)) {
    recorder.bump('defectsHit')
    const cost = h.options.defectRepairFraction * project.tasks[d].effortMs
    recorder.spend('defect', cost)
    ms += cost
  }
  return { ms, repair }
}

/**
 * An agent with nothing else to do that sees red tests on the shared branch repairs an area nobody is repairing; false when there is none.
 */
export function idleRepair(ctx: HazardContext, agent: number, then: () => void): boolean {
  const area = ctx.progress.takeRepair()
  if (area === undefined) return false
  const cost = ctx.project.hazards.options.repairFraction * ctx.project.options.medianEffortMs
  const start = ctx.scheduler.now
  ctx.recorder.bump('repairs')
  ctx.scheduler.after(cost, () => {
    ctx.recorder.spend('repair', ctx.scheduler.now - start)
    ctx.progress.repairArea(area, ctx.scheduler.now)
    then()
  })
  void agent
  return true
}
