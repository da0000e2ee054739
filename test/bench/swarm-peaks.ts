// bench:swarm's memory table: the peak resident set (RSS, getrusage's
// maxrss of the process that ran only that run) by swarm size and run label,
// the largest over seeds, and its mean.

import type { MeasuredRun } from './swarm-pool.js'

const MiB = 1024 * 1024

export function peakMemoryTable(runs: MeasuredRun[]): string {
  const groups = new Map<string, { agents: number; label: string; peaks: number[] }>()
  for (const r of runs) {
    if (r.peakRssBytes === undefined) continue
    const k = `${r.agents}\u0000${r.label}`
    let g = groups.get(k)
    if (g === undefined) groups.set(k, (g = { agents: r.agents, label: r.label, peaks: [] }))
    g.peaks.push(r.peakRssBytes)
  }
  if (groups.size === 0) return ''
  const rows = [...groups.values()]
    .sort((a, b) => a.agents - b.agents || (a.label < b.label ? -1 : a.label > b.label ? 1 : 0))
    .map(
      g =>
        `| ${g.agents} | ${g.label} | ${g.peaks.length} | ${Math.round(Math.max(...g.peaks) / MiB)} MiB | ${Math.round(g.peaks.reduce((a, b) => a + b, 0) / g.peaks.length / MiB)} MiB |`
    )
  return [
    "Peak memory per run: the resident set (RSS) of the process that ran it and nothing else, node and the simulator's code included:",
    '',
    '| agents | run | runs | peak RSS, largest | peak RSS, mean |',
    '|---:|---|---:|---:|---:|',
    ...rows,
    ''
  ].join('\n')
}
