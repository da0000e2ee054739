// The files an experiment leaves in OUT/, what the runner writes and the
// report reads:
//   OUT/experiment.json              how it was run
//   OUT/n<N>/run-<k>/pass-rate.json  every scored snapshot (also .csv)
//   OUT/n<N>/run-<k>/summary.json    the run's numbers
//   OUT/n<N>/run-<k>/final-score.json the full scoring of the last snapshot, per test
//   OUT/n<N>/run-<k>/swarm/          the swarm's data dirs, logs and shared repository
//   OUT/n<N>/summary.json            the runs of N agents together
//   OUT/report.md, OUT/pass-rate.svg
// While a swarm runs, only counts are written next to it; test names and
// failure messages (final-score.json) only once it is down.
import { existsSync } from 'node:fs'
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { InvalidArgumentError } from '../core/errors.js'
import type { RunSpend } from './run-spend.js'
import type { ScoreError } from './score.js'

export interface ExperimentConfig {
  task: string
  taskDir: string
  cleanroom: string
  agents: number[]
  harness: string
  budgetSeconds: number
  scoreEverySeconds: number
  repeat: number
  goal: string
  testCommand: string
  /** tests that count, after ignored ones */
  scoredTests: number
  branches: number
  referenceHash: string
  referenceBuilt: boolean
  /** the scripted agent's work time multiplier (--harness sim) */
  simWorkScale?: number
  /** what the agents and their test runs ran in: bwrap or none (absent in runs from before it was recorded) */
  sandbox?: string
  /** --budget-usd: a swarm stops at this many dollars, as the swarm's own budget */
  budgetUsd?: number
  startedAt: string
}

export interface PassPoint {
  /** seconds since the swarm got its goal */
  t: number
  commit: string
  passed: number
  tests: number
  score: number
  /** why the snapshot scored 0, if it did for a reason (compile_failed, ...) */
  error: string | null
}

export const MILESTONES = [10, 20, 30, 50] as const

export interface RunSummary {
  agents: number
  repeat: number
  startedAt: string
  elapsedSeconds: number
  budgetSeconds: number
  /** budget: the time budget; spend: the dollar budget (--budget-usd) */
  stoppedBy: 'goal' | 'budget' | 'spend' | 'interrupted'
  final: { score: number; passed: number; tests: number; commit: string; error: ScoreError | null }
  /** seconds until the pass rate first reached 10, 20, 30, 50 %, or null */
  timeToSeconds: Record<string, number | null>
  agentHours: number
  /** restarts of the agents' harness processes, from the daemons' metrics (null when unreadable) */
  harnessRestarts: number | null
  integrations: number
  integrationAttempts: number
  findings: number
  failureFindings: number
  tasksDone: number
  tasksTotal: number
  workAgentSeconds: number
  duplicateAgentSeconds: number
  repeatedFailures: number
  /** tokens and dollars from the swarm's usage entries; null when no harness reported usage */
  spend: RunSpend | null
  scorings: number
}

export function runDir(out: string, agents: number, repeat: number): string {
  return join(out, `n${agents}`, `run-${repeat}`)
}

export async function writeJson(file: string, value: unknown): Promise<void> {
  await mkdir(join(file, '..'), { recursive: true })
  await writeFile(file, JSON.stringify(value, null, 2) + '\n')
}

export function passRateCsv(points: readonly PassPoint[]): string {
  const rows = points.map(p => `${p.t.toFixed(1)},${p.commit},${p.passed},${p.tests},${p.score.toFixed(4)},${p.error ?? ''}`)
  return ['seconds,commit,passed,tests,pass_rate,error', ...rows].join('\n') + '\n'
}

export async function writePassRate(dir: string, agents: number, repeat: number, points: readonly PassPoint[]): Promise<void> {
  await writeJson(join(dir, 'pass-rate.json'), { agents, repeat, points })
  await writeFile(join(dir, 'pass-rate.csv'), passRateCsv(points))
}

/** Seconds until the pass rate first reached each milestone. */
export function timeTo(points: readonly PassPoint[]): Record<string, number | null> {
  const out: Record<string, number | null> = {}
  for (const m of MILESTONES) out[String(m)] = points.find(p => p.score * 100 >= m - 1e-9)?.t ?? null
  return out
}

export interface ExperimentData {
  config: ExperimentConfig
  runs: Array<{ summary: RunSummary; points: PassPoint[] }>
}

/** Reads everything a report needs from OUT/. */
export async function readExperiment(out: string): Promise<ExperimentData> {
  const configFile = join(out, 'experiment.json')
  if (!existsSync(configFile))
    throw new InvalidArgumentError(`${out} holds no experiment (no experiment.json): give the --out directory of \`agency experiment run\``)
  const config = JSON.parse(await readFile(configFile, 'utf8')) as ExperimentConfig
  const runs: ExperimentData['runs'] = []
  for (const n of config.agents) {
    const sizeDir = join(out, `n${n}`)
    if (!existsSync(sizeDir)) continue
    const names = (await readdir(sizeDir)).filter(d => /^run-\d+$/.test(d)).sort((a, b) => Number(a.slice(4)) - Number(b.slice(4)))
    for (const name of names) {
      const dir = join(sizeDir, name)
      if (!existsSync(join(dir, 'summary.json'))) continue
      const summary = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8')) as RunSummary
      const points = existsSync(join(dir, 'pass-rate.json'))
        ? (JSON.parse(await readFile(join(dir, 'pass-rate.json'), 'utf8')) as { points: PassPoint[] }).points
        : []
      runs.push({ summary, points })
    }
  }
  return { config, runs }
}
