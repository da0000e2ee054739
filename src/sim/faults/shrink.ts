// Shrinking a failing schedule: try smaller versions of it (a fault left
// out, no loss, no duplication, no reordering, clocks on time, fewer tasks,
// a shorter run, fewer nodes) and keep each one that still fails the same
// check, until no step helps. Every try replays the schedule from its seed,
// so the shrunk schedule reproduces on its own.

import type { Fault, FaultSchedule } from './schedule.js'

/** The smallest schedule found that still `fails` (with a violation of `check`); at most `maxRuns` replays. */
export function shrinkSchedule(
  s: FaultSchedule,
  fails: (s: FaultSchedule) => boolean,
  maxRuns = 200
): { schedule: FaultSchedule; runs: number } {
  let best = s
  let runs = 0
  let progress = true
  while (progress && runs < maxRuns) {
    progress = false
    for (const candidate of smaller(best)) {
      if (runs >= maxRuns) break
      runs++
      if (fails(candidate)) {
        best = candidate
        progress = true
        break
      }
    }
  }
  return { schedule: best, runs }
}

function* smaller(s: FaultSchedule): Generator<FaultSchedule> {
  for (let i = 0; i < s.faults.length; i++) yield { ...s, faults: s.faults.filter((_, j) => j !== i) }
  if (s.loss > 0) yield { ...s, loss: 0 }
  if (s.duplicate > 0) yield { ...s, duplicate: 0 }
  if (s.reorder > 0) yield { ...s, reorder: 0 }
  if (s.skew.some(k => k.clockMs !== 0 || k.wallMs !== 0)) yield { ...s, skew: s.skew.map(() => ({ clockMs: 0, wallMs: 0 })) }
  if (s.tasks > 1) yield { ...s, tasks: Math.max(1, Math.floor(s.tasks / 2)) }
  if (s.tasks > 1) yield { ...s, tasks: s.tasks - 1 }
  const lastFault = Math.max(0, ...s.faults.map(end))
  const shorter = Math.max(Math.ceil(lastFault) + 1_000, Math.floor(s.activeMs / 2))
  if (shorter < s.activeMs) yield { ...s, activeMs: shorter }
  if (s.nodes > 2) {
    const last = s.nodes - 1
    if (!s.faults.some(f => f.kind === 'crash' && f.node === last)) {
      yield {
        ...s,
        nodes: last,
        skew: s.skew.slice(0, last),
        faults: s.faults.map(f => (f.kind === 'partition' ? { ...f, groups: f.groups.map(g => g.filter(n => n < last)) } : f))
      }
    }
  }
}

function end(f: Fault): number {
  return f.kind === 'crash' ? f.restartAt : f.until
}
