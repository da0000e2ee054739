// A violation's history, cut to what it is about: the events that name the
// task, entry or message the violation names, and every nemesis event. The
// real campaign cannot replay a run to the millisecond, so it shrinks the
// history it printed rather than the schedule.
import type { HistoryEvent } from '../../src/sim/faults/history.js'
import type { Violation } from '../../src/sim/faults/checks.js'

export function cutHistory(events: readonly HistoryEvent[], v: Violation): HistoryEvent[] {
  const tasks = new Set([...v.text.matchAll(/\b(t\d+)@\d+|\bon (t\d+)\b/g)].map(m => m[1] ?? m[2]))
  const ids = new Set([...v.text.matchAll(/\b([0-9a-f]{16,}|[0-9a-f]{8}-[0-9a-f-]{27})\b/g)].map(m => m[1]))
  const ops = new Set<number>()
  const named = (e: HistoryEvent): boolean =>
    e.kind === 'nemesis' ||
    e.kind === 'drop' ||
    ('task' in e && e.task !== undefined && tasks.has(e.task)) ||
    ('id' in e && e.id !== undefined && ids.has(e.id)) ||
    (e.kind === 'complete' && ops.has(e.op))
  for (const e of events) if (e.kind === 'invoke' && named(e)) ops.add(e.op)
  // In time order, an answer beside its call.
  return events.filter(named).sort((a, b) => a.time - b.time)
}

export function formatEvent(e: HistoryEvent): string {
  const { kind, time, ...rest } = e
  return `${String(Math.round(time)).padStart(7)} ms  ${kind.padEnd(8)} ${JSON.stringify(rest)}`
}
