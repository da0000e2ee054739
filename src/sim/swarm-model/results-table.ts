// The benchmark's markdown: one row per (swarm size, strategy), and where the
// coordination traffic goes.

import type { RunResult } from '../../experiment/run-recorder.js'

export function formatDuration(ms: number | null): string {
  if (ms === null) return '—'
  const min = ms / 60_000
  if (min < 1) return `${(ms / 1000).toFixed(0)} s`
  if (min < 120) return `${min.toFixed(0)} min`
  return `${(min / 60).toFixed(1)} h`
}

export function formatBytes(b: number): string {
  if (b < 1024) return `${b.toFixed(0)} B`
  if (b < 1024 * 1024) return `${(b / 1024).toFixed(1)} KiB`
  if (b < 1024 ** 3) return `${(b / 1024 / 1024).toFixed(1)} MiB`
  return `${(b / 1024 ** 3).toFixed(2)} GiB`
}

function formatCount(n: number): string {
  if (n === 0) return '0'
  if (n < 10) return n.toFixed(2)
  if (n < 1000) return n.toFixed(0)
  if (n < 1e6) return `${(n / 1e3).toFixed(1)}k`
  return `${(n / 1e6).toFixed(2)}M`
}

function formatMs(ms: number): string {
  return ms < 10_000 ? `${ms.toFixed(0)} ms` : formatDuration(ms)
}

export function resultsTable(results: readonly RunResult[]): string {
  const rows = [...results].sort((a, b) => a.agents - b.agents || order(a) - order(b))
  const lines = [
    '| agents | strategy | all pass | 30 % | 50 % | 90 % | 100 % | duplicate work | repeated trap hits | msgs / agent / min | bytes / agent / min | claim → answer p50 / p99 |',
    '|---:|---|:---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|'
  ]
  for (const r of rows) {
    const dupShare = r.workAgentSeconds > 0 ? r.duplicateAgentSeconds / r.workAgentSeconds : 0
    const dup =
      r.duplicateAgentSeconds === 0 ? '0' : `${(r.duplicateAgentSeconds / 3600).toFixed(1)} agent-h (${(dupShare * 100).toFixed(1)} %)`
    const settle = r.claimSettle === null ? '—' : `${formatMs(r.claimSettle.p50)} / ${formatMs(r.claimSettle.p99)}`
    lines.push(
      `| ${r.agents} | ${r.label} | ${r.completed ? 'yes' : 'NO'} | ${formatDuration(r.timeToMs.p30)} | ${formatDuration(r.timeToMs.p50)} | ${formatDuration(r.timeToMs.p90)} | ${formatDuration(r.timeToMs.p100)} | ${dup} | ${r.repeatedTrapHits} of ${r.trapHits} | ${formatCount(r.messagesPerAgentMinute)} | ${formatBytes(r.bytesPerAgentMinute)} | ${settle} |`
    )
  }
  return lines.join('\n') + '\n'
}

/** Where agency's traffic goes, per agent per minute, by kind. */
export function trafficTable(results: readonly RunResult[]): string {
  const rows = [...results].filter(r => Object.keys(r.traffic).length > 0).sort((a, b) => a.agents - b.agents || order(a) - order(b))
  const kinds = [...new Set(rows.flatMap(r => Object.keys(r.traffic)))].sort()
  const lines = [`| agents | strategy | ${kinds.join(' | ')} |`, `|---:|---|${kinds.map(() => '---:').join('|')}|`]
  for (const r of rows) {
    const agentMinutes = (r.agents * Math.max(r.finishedAtMs, 1)) / 60_000
    const cells = kinds.map(k => {
      const t = r.traffic[k]
      return t === undefined ? '—' : `${formatCount(t.messages / agentMinutes)} msgs, ${formatBytes(t.bytes / agentMinutes)}`
    })
    lines.push(`| ${r.agents} | ${r.label} | ${cells.join(' | ')} |`)
  }
  return lines.join('\n') + '\n'
}

const ORDER = ['agency', 'none', 'git', 'manager']
function order(r: RunResult): number {
  const i = ORDER.indexOf(r.strategy)
  return (i < 0 ? ORDER.length : i) * 10 + (r.label === r.strategy || !r.label.includes('(') ? 0 : 1)
}
