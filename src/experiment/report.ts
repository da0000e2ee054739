// OUT/report.md and OUT/pass-rate.svg, rebuilt from the data in OUT/ alone
// (`agency experiment report OUT`): the table shaped like the paper's (task,
// agents, final pass rate, change against 1 agent), the plot of pass rate
// against time with a line per swarm size, and the run-by-run numbers.
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { hoursLabel, passRatePanels, seriesColor, type PlotSeries } from './pass-rate-plot.js'
import { formatDuration } from './duration.js'
import { MILESTONES, readExperiment, type ExperimentData, type RunSummary } from './run-files.js'
import { addSpend, usdPerPoint, type RunSpend } from './run-spend.js'

export interface SizeSummary {
  agents: number
  runs: number
  /** mean over the runs, 0..1 */
  finalScore: number
  finalScores: number[]
  /** median over the runs that got there, seconds; null when none did */
  timeToSeconds: Record<string, number | null>
  agentHours: number
  harnessRestarts: number | null
  integrations: number
  findings: number
  duplicateAgentSeconds: number
  repeatedFailures: number
  /** the runs' spend added up; null when no run's harness reported usage */
  spend: RunSpend | null
  /** the spend's dollars over the mean final pass rate in points; null when either is 0 */
  usdPerPoint: number | null
}

function median(xs: number[]): number | null {
  if (xs.length === 0) return null
  const s = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2
}

const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0)

/** The runs of one swarm size together: means, medians and totals. */
export function sizeSummary(runs: readonly RunSummary[]): SizeSummary {
  const timeTo: Record<string, number | null> = {}
  for (const m of MILESTONES) timeTo[String(m)] = median(runs.map(r => r.timeToSeconds[String(m)]).filter((t): t is number => t != null))
  const summary: SizeSummary = {
    agents: runs[0]?.agents ?? 0,
    runs: runs.length,
    finalScore: runs.length === 0 ? 0 : sum(runs.map(r => r.final.score)) / runs.length,
    finalScores: runs.map(r => r.final.score),
    timeToSeconds: timeTo,
    agentHours: sum(runs.map(r => r.agentHours)),
    harnessRestarts: runs.some(r => r.harnessRestarts == null) ? null : sum(runs.map(r => r.harnessRestarts ?? 0)),
    integrations: sum(runs.map(r => r.integrations)),
    findings: sum(runs.map(r => r.findings)),
    duplicateAgentSeconds: sum(runs.map(r => r.duplicateAgentSeconds)),
    repeatedFailures: sum(runs.map(r => r.repeatedFailures)),
    spend: addSpend(runs.map(r => r.spend)),
    usdPerPoint: null
  }
  // per run on average: the mean spend against the mean pass rate
  if (summary.spend != null && runs.length > 0) summary.usdPerPoint = usdPerPoint(summary.spend.usd / runs.length, summary.finalScore)
  return summary
}

const pct = (x: number): string => `${(x * 100).toFixed(2)} %`
const tokens = (n: number): string => n.toLocaleString('en-US')
const dollars = (s: RunSpend): string => `$${s.usd.toFixed(2)}${s.estimated ? ' (est.)' : ''}`
const perPoint = (x: number | null): string => (x == null ? '—' : `$${x.toFixed(2)}`)
const secs = (s: number | null): string => (s == null ? 'not reached' : formatDuration(s * 1000))

function change(x: number, base: number | undefined): string {
  if (base == null) return '—'
  const pp = (x - base) * 100
  const rel = base > 0 ? ` (${x >= base ? '+' : '−'}${Math.abs((x / base - 1) * 100).toFixed(0)} %)` : ''
  return `${pp >= 0 ? '+' : '−'}${Math.abs(pp).toFixed(2)} pp${rel}`
}

function agentsLabel(n: number): string {
  return `${n} agent${n === 1 ? '' : 's'}`
}

export function renderReport(data: ExperimentData): { markdown: string; svg: string } {
  const { config, runs } = data
  const sizes = config.agents.filter(n => runs.some(r => r.summary.agents === n))
  const bySize = new Map(sizes.map(n => [n, sizeSummary(runs.filter(r => r.summary.agents === n).map(r => r.summary))]))
  const base = bySize.get(1)?.finalScore
  const lines: string[] = []
  lines.push(`# ${config.task}: hidden-test pass rate with 1 to ${Math.max(...config.agents)} agents`, '')
  lines.push(
    `Harness \`${config.harness}\`, budget ${formatDuration(config.budgetSeconds * 1000)}${config.budgetUsd != null ? ` and $${config.budgetUsd}` : ''} per swarm, the shared branch scored every ${formatDuration(config.scoreEverySeconds * 1000)} by ProgramBench's rules against ${config.scoredTests} hidden tests in ${config.branches} test branches${config.repeat > 1 ? `, ${config.repeat} runs per size` : ''}. Started ${config.startedAt}.${config.simWorkScale != null ? ` Scripted agents (work time × ${config.simWorkScale}).` : ''} Sandbox: ${config.sandbox ?? 'not recorded'}.`,
    ''
  )
  lines.push(
    '| task | agents | final pass rate | change against 1 agent | tokens in / out | dollars | dollars per point |',
    '|---|---:|---:|---:|---:|---:|---:|'
  )
  for (const n of sizes) {
    const s = bySize.get(n) as SizeSummary
    const spread = s.runs > 1 ? ` (${s.finalScores.map(x => (x * 100).toFixed(1)).join(', ')})` : ''
    const spent =
      s.spend == null
        ? '| not reported | not reported | — '
        : `| ${tokens(s.spend.inputTokens)} / ${tokens(s.spend.outputTokens)} | ${dollars(s.spend)} | ${perPoint(s.usdPerPoint)} `
    lines.push(`| ${config.task} | ${n} | ${pct(s.finalScore)}${spread} | ${n === 1 ? '—' : change(s.finalScore, base)} ${spent}|`)
  }
  lines.push('', '![hidden-test pass rate against time, one line per swarm size](pass-rate.svg)', '')
  lines.push(
    `| agents | run | stopped by | after | ${MILESTONES.map(m => `${m} %`).join(' | ')} | final | agent-hours | harness restarts | integrations | findings | duplicate work | repeated failures | tokens in / out | dollars | dollars per point |`
  )
  lines.push(`|---:|---:|---|---:|${MILESTONES.map(() => '---:').join('|')}|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|`)
  for (const { summary: s } of runs) {
    const final = `${pct(s.final.score)} (${s.final.passed}/${s.final.tests})${s.final.error != null ? ` ${s.final.error.code}` : ''}`
    lines.push(
      `| ${s.agents} | ${s.repeat} | ${s.stoppedBy} | ${secs(s.elapsedSeconds)} | ${MILESTONES.map(m => secs(s.timeToSeconds[String(m)])).join(' | ')} | ${final} | ${s.agentHours.toFixed(2)} | ${s.harnessRestarts ?? 'unknown'} | ${s.integrations} | ${s.findings} | ${s.duplicateAgentSeconds.toFixed(0)} agent-s | ${s.repeatedFailures} | ${s.spend == null ? 'not reported | not reported | —' : `${tokens(s.spend.inputTokens)} / ${tokens(s.spend.outputTokens)} | ${dollars(s.spend)} | ${perPoint(usdPerPoint(s.spend.usd, s.final.score))}`} |`
    )
  }
  lines.push(
    '',
    "Time to a pass rate is from the goal being set to the first scored snapshot at or above it. Duplicate work is agent-time spent on a task while another agent also worked on it; a repeated failure is a failure finding on an attempt that started after the same failure was recorded (both as the simulator defines them). Tokens and dollars are the swarm's own usage entries (one per harness run, from each CLI's report; input counts cached input too); dollars marked est. come in part from the price table; dollars per point are a run's dollars over its final pass rate in percentage points (for a size, the mean run's). A run stopped by spend reached --budget-usd.",
    ''
  )

  const series: PlotSeries[] = runs.map(({ summary: s, points }) => {
    const index = sizes.indexOf(s.agents)
    const label = `${agentsLabel(s.agents)}${config.repeat > 1 ? ` run ${s.repeat}` : ''}`
    return {
      label,
      color: seriesColor(index),
      dashed: s.repeat > 1,
      points: points.map((p): [number, number] => [p.t * 1000, p.score]),
      endMs: s.elapsedSeconds * 1000,
      offEdgeNote: `${label} → ${pct(s.final.score)} at ${hoursLabel(s.elapsedSeconds / 3600)}`
    }
  })
  const legend = sizes.map((n, i) => ({ label: agentsLabel(n), color: seriesColor(i), dashed: false }))
  const svg = passRatePanels([{ title: `${config.task}: hidden tests passed`, series }], `${config.task}: pass rate against time`, {
    timeLabel: 'time since the goal was set',
    columns: 1,
    panelWidth: 660,
    padRight: 24,
    wholeTime: true,
    legend
  })
  return { markdown: lines.join('\n'), svg }
}

/** Rebuilds OUT/report.md and OUT/pass-rate.svg from OUT's data. */
export async function writeReport(out: string): Promise<{ markdown: string; svg: string }> {
  const r = renderReport(await readExperiment(out))
  await writeFile(join(out, 'report.md'), r.markdown + '\n')
  await writeFile(join(out, 'pass-rate.svg'), r.svg)
  return r
}
