// Results over several seeds: for each (swarm size, configuration) the mean
// and the range (min to max) of the figures the benchmark reports, and the
// markdown tables of the strategy comparison and the ablation.

import { formatDuration } from './results-table.js'
import type { RunResult } from '../../experiment/run-recorder.js'

export interface Stat {
  mean: number
  min: number
  max: number
  n: number
}

export interface Summary {
  agents: number
  strategy: string
  label: string
  seeds: number
  /** runs in which every hidden test passed before the time limit */
  completed: number
  p50: Stat | null
  p90: Stat | null
  p100: Stat | null
  /** hours the shared branch had a broken test */
  brokenMainH: Stat
  repeatedTrapHits: Stat
  wastedAgentH: Stat
  helpingAgentH: Stat
  /** reviews, verify runs, the wait for one's batch, fixing what a verify caught: agency's mechanisms' own time */
  overheadAgentH: Stat
  workAgentH: Stat
}

function stat(values: readonly number[]): Stat | null {
  if (values.length === 0) return null
  let sum = 0
  let min = Infinity
  let max = -Infinity
  for (const v of values) {
    sum += v
    min = Math.min(min, v)
    max = Math.max(max, v)
  }
  return { mean: sum / values.length, min, max, n: values.length }
}

export function summarize(results: readonly RunResult[]): Summary[] {
  const groups = new Map<string, RunResult[]>()
  for (const r of results) {
    const k = `${r.agents}\u0000${r.label}`
    const g = groups.get(k)
    if (g === undefined) groups.set(k, [r])
    else g.push(r)
  }
  const out: Summary[] = []
  for (const g of groups.values()) {
    const f = g[0]
    const times = (k: 'p50' | 'p90' | 'p100'): Stat | null => {
      const vs = g.map(r => r.timeToMs[k])
      // a run that never got there has no time: no mean either
      return vs.some(v => v === null) ? null : stat(vs.map(v => (v as number) / 3600_000))
    }
    out.push({
      agents: f.agents,
      strategy: f.strategy,
      label: f.label,
      seeds: g.length,
      completed: g.filter(r => r.completed).length,
      p50: times('p50'),
      p90: times('p90'),
      p100: times('p100'),
      brokenMainH: stat(g.map(r => r.brokenMainMs / 3600_000)) as Stat,
      repeatedTrapHits: stat(g.map(r => r.repeatedTrapHits)) as Stat,
      wastedAgentH: stat(g.map(r => r.wastedAgentSeconds / 3600)) as Stat,
      helpingAgentH: stat(g.map(r => r.helpingAgentSeconds / 3600)) as Stat,
      overheadAgentH: stat(g.map(r => (r.overheadAgentSeconds ?? 0) / 3600)) as Stat,
      workAgentH: stat(g.map(r => r.workAgentSeconds / 3600)) as Stat
    })
  }
  return out
}

function hours(h: number): string {
  return formatDuration(h * 3600_000)
}

/** "4.2 h (4.0 – 4.5 h)"; one seed: just the value. */
export function formatTime(s: Stat | null, limitNote = 'not reached'): string {
  if (s === null) return limitNote
  if (s.n === 1 || s.min === s.max) return hours(s.mean)
  return `${hours(s.mean)} (${hours(s.min)} – ${hours(s.max)})`
}

export function formatAmount(s: Stat, digits = 0): string {
  const f = (v: number): string => v.toFixed(digits)
  if (s.n === 1 || s.min === s.max) return f(s.mean)
  return `${f(s.mean)} (${f(s.min)} – ${f(s.max)})`
}

const ORDER = ['agency', 'none', 'git', 'manager']
function order(s: Summary): number {
  const i = ORDER.indexOf(s.strategy)
  return i < 0 ? ORDER.length : i
}

/** The strategy comparison: mean (min – max) over seeds. */
export function comparisonTable(summaries: readonly Summary[]): string {
  const rows = [...summaries].sort((a, b) => a.agents - b.agents || order(a) - order(b))
  const lines = [
    '| agents | strategy | seeds | all pass | 50 % | 90 % | 100 % | broken main | repeated trap hits | wasted agent-h | helpers (budgeted) agent-h | reviews and verify agent-h | attempts agent-h |',
    '|---:|---|---:|:---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|'
  ]
  for (const s of rows) {
    lines.push(
      `| ${s.agents} | ${s.label} | ${s.seeds} | ${s.completed}/${s.seeds} | ${formatTime(s.p50)} | ${formatTime(s.p90)} | ${formatTime(s.p100)} | ${formatTime(s.brokenMainH)} | ${formatAmount(s.repeatedTrapHits)} | ${formatAmount(s.wastedAgentH)} | ${formatAmount(s.helpingAgentH)} | ${formatAmount(s.overheadAgentH)} | ${formatAmount(s.workAgentH)} |`
    )
  }
  return lines.join('\n') + '\n'
}

/** Who is ahead at each swarm size on time to 90 % and on wasted agent-hours (means), and by how much. */
export function leaders(summaries: readonly Summary[]): string {
  const sizes = [...new Set(summaries.map(s => s.agents))].sort((a, b) => a - b)
  const lines: string[] = []
  for (const n of sizes) {
    const at = summaries.filter(s => s.agents === n && ORDER.includes(s.strategy) && s.label === labelOf(summaries, s.strategy, n))
    const agency = at.find(s => s.strategy === 'agency')
    if (agency === undefined) continue
    const others = at.filter(s => s !== agency)
    const verdict = (pick: (s: Summary) => number | undefined, what: string, fmt: (v: number) => string): string => {
      const a = pick(agency)
      if (a === undefined) return `${what}: agency did not get there`
      const beaten = others.filter(o => {
        const v = pick(o)
        return v !== undefined && v <= a
      })
      const best = others
        .map(o => ({ o, v: pick(o) }))
        .filter(x => x.v !== undefined)
        .sort((x, y) => (x.v as number) - (y.v as number))[0]
      if (beaten.length === 0)
        return `${what}: agency ahead (${fmt(a)}; next ${best === undefined ? 'none' : `${best.o.label} ${fmt(best.v as number)}`})`
      return `${what}: **${beaten.map(b => b.label).join(', ')} at or ahead of agency** (${beaten.map(b => fmt(pick(b) as number)).join(', ')} against ${fmt(a)})`
    }
    lines.push(
      `- ${n} agents: ${verdict(s => (s.p90?.mean === undefined ? undefined : s.p90.mean), 'time to 90 %', hours)}; ${verdict(
        s => s.wastedAgentH.mean,
        'wasted agent-hours',
        v => v.toFixed(0)
      )}.`
    )
  }
  return lines.join('\n') + '\n'
}

function labelOf(summaries: readonly Summary[], strategy: string, n: number): string | undefined {
  // the first label of the strategy at that size: the plain run, not a variant (partitioned, ablated)
  return summaries.find(s => s.strategy === strategy && s.agents === n)?.label
}

/** The ablation: each configuration against all mechanisms on, per swarm size. */
export function ablationTable(summaries: readonly Summary[], allLabel: string): string {
  const rows = [...summaries].sort((a, b) => a.agents - b.agents || (a.label === allLabel ? -1 : b.label === allLabel ? 1 : 0))
  const lines = [
    '| agents | configuration | seeds | all pass | 50 % | 90 % | 100 % | Δ 90 % | broken main | repeated trap hits | wasted agent-h | Δ wasted | helpers agent-h |',
    '|---:|---|---:|:---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|'
  ]
  for (const s of rows) {
    const base = summaries.find(x => x.agents === s.agents && x.label === allLabel)
    const d90 = s === base || base?.p90 == null || s.p90 === null ? '' : signed(((s.p90.mean - base.p90.mean) / base.p90.mean) * 100) + ' %'
    const dw = s === base || base === undefined ? '' : signed(s.wastedAgentH.mean - base.wastedAgentH.mean, 0) + ' h'
    lines.push(
      `| ${s.agents} | ${s.label} | ${s.seeds} | ${s.completed}/${s.seeds} | ${formatTime(s.p50)} | ${formatTime(s.p90)} | ${formatTime(s.p100, 'not within the limit')} | ${d90} | ${formatTime(s.brokenMainH)} | ${formatAmount(s.repeatedTrapHits)} | ${formatAmount(s.wastedAgentH)} | ${dw} | ${formatAmount(s.helpingAgentH)} |`
    )
  }
  return lines.join('\n') + '\n'
}

function signed(v: number, digits = 1): string {
  const s = v.toFixed(digits)
  return v > 0 ? `+${s}` : s
}
