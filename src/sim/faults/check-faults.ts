// Runs N seeded fault schedules through the simulator and checks each run's
// history; a failing schedule is shrunk. `npm run check:faults` prints what
// this returns.

import { SETTLE_DEFAULTS } from '../../core/board/settle.js'
import { checkRun, type Violation } from './checks.js'
import { randomSchedule, type FaultSchedule } from './schedule.js'
import { shrinkSchedule } from './shrink.js'
import { runSchedule, type WorldOptions } from './world.js'

export interface FailedSchedule {
  seed: number
  violations: Violation[]
  /** the smallest schedule found that fails the same check */
  shrunk: FaultSchedule
  shrunkViolations: Violation[]
}

export interface CheckSummary {
  schedules: number
  /** schedules with at least one violation */
  violations: number
  failed: FailedSchedule[]
  /** operations recorded over all runs */
  operations: number
  /** faults played over all runs */
  faults: number
}

export interface CheckFaultsOptions extends WorldOptions {
  schedules: number
  seed: number
  /** shrink at most this many failing schedules (default 1) */
  shrink?: number
}

/** The violations of one schedule's run. */
export function checkSchedule(s: FaultSchedule, opts: WorldOptions = {}): { violations: Violation[]; operations: number } {
  const run = runSchedule(s, opts)
  return { violations: checkRun(run, { minSettleMs: SETTLE_DEFAULTS.minMs }), operations: run.history.of('invoke').length }
}

/** Schedule `i` of a check that starts at `seed`. */
export function scheduleSeed(seed: number, i: number): number {
  return (seed + i) >>> 0
}

export function checkFaults(opts: CheckFaultsOptions): CheckSummary {
  const summary: CheckSummary = { schedules: 0, violations: 0, failed: [], operations: 0, faults: 0 }
  for (let i = 0; i < opts.schedules; i++) {
    const s = randomSchedule(scheduleSeed(opts.seed, i))
    const { violations, operations } = checkSchedule(s, opts)
    summary.schedules++
    summary.operations += operations
    summary.faults += s.faults.length
    if (violations.length === 0) continue
    summary.violations++
    if (summary.failed.length >= (opts.shrink ?? 1)) continue
    const kind = violations[0].check
    const stillFails = (c: FaultSchedule): boolean => checkSchedule(c, opts).violations.some(v => v.check === kind)
    const { schedule } = shrinkSchedule(s, stillFails)
    summary.failed.push({ seed: s.seed, violations, shrunk: schedule, shrunkViolations: checkSchedule(schedule, opts).violations })
  }
  return summary
}
