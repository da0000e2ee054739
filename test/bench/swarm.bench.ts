// Benchmark: the swarm simulator, agency against three baselines, for each
// swarm size and several seeds, on a project with hazards (src/sim/swarm-model/hazards.ts)
// that every strategy meets alike; with --ablate, also agency with each of its
// mechanisms off in turn. Not a vitest test; run it with
//
//   npm run bench:swarm -- [--ablate] [--agents 8,128,1024] [--seeds 1,2,3,4,5] [--big-seeds 2]
//     [--ablate-agents 8,128,1024] [--ablate-big-seeds 1] [--tasks 2000] [--out results/]
//     [--strategies agency,none,git,manager] [--manager-ms 2000] [--git-pull-ms 30000]
//     [--loss 0] [--partition START_MIN:MINUTES] [--no-hazards] [--jobs 2] [--set key=value,...]
//
// --big-seeds / --ablate-big-seeds: how many of the seeds run at 512 agents
// and more (a 1024-agent agency run takes one to two minutes of wall time).
// Every run is a job in a process of its own (a 1024-agent agency run holds
// 1024 boards), started only when free memory holds its estimated peak
// (swarm-pool.ts); each run's peak RSS is in the report. Results are
// deterministic for a seed; only wall-clock and memory depend on the machine. Writes <out>/bench-swarm.md
// (tables), <out>/bench-swarm.svg (pass rate against time for the first
// seed, one panel per N) and <out>/bench-swarm.json (every number and timeline).
import '../../src/polyfill.js'
import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises'
import { cpus } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ablationJobs, ablationLabel } from '../../src/sim/swarm-model/ablation.js'
import { HAZARD_DEFAULTS, HAZARD_SOURCES, NO_HAZARDS } from '../../src/sim/swarm-model/hazards.js'
import { passRatePlot } from '../../src/experiment/pass-rate-plot.js'
import { resultsTable, trafficTable } from '../../src/sim/swarm-model/results-table.js'
import type { RunResult } from '../../src/experiment/run-recorder.js'
import { ablationTable, comparisonTable, leaders, summarize } from '../../src/sim/swarm-model/seed-summary.js'
import { MECHANISM_DEFAULTS, type MechanismSettings } from '../../src/sim/swarm-model/strategies/agency-mechanisms.js'
import { isStrategy, runSwarmJob, type StrategyName, type SwarmJob } from '../../src/sim/swarm-model/swarm-job.js'
import { WORKLOAD_DEFAULTS, type WorkloadInit } from '../../src/sim/swarm-model/workload.js'
import { peakMemoryTable } from './swarm-peaks.js'
import { runPool, type MeasuredRun, type WorkerReply } from './swarm-pool.js'

const BIG = 512

interface Args {
  agents: number[]
  tasks: number
  seeds: number[]
  bigSeeds: number
  ablate: boolean
  ablateAgents: number[]
  ablateBigSeeds: number
  hazards: boolean
  /** build the report from runs other invocations saved (their <out>/bench-swarm.runs.jsonl), running nothing */
  reportFrom: string[]
  out: string
  strategies: StrategyName[]
  managerMs?: number
  gitPullMs?: number
  loss?: number
  partition?: { atMin: number; forMin: number }
  jobs: number
  /** agency's mechanism settings changed from MECHANISM_DEFAULTS, the same at every size (--set key=value,...) */
  settings: Partial<MechanismSettings>
}

function parseArgs(argv: string[]): Args {
  const args: Args = {
    agents: [8, 128, 1024],
    tasks: WORKLOAD_DEFAULTS.tasks,
    seeds: [1, 2, 3, 4, 5],
    bigSeeds: 2,
    ablate: false,
    ablateAgents: [8, 128, 1024],
    ablateBigSeeds: 1,
    hazards: true,
    reportFrom: [],
    out: 'results',
    strategies: ['agency', 'none', 'git', 'manager'],
    jobs: Math.max(1, Math.min(2, cpus().length)),
    settings: {}
  }
  const num = (flag: string, v: string | undefined): number => {
    const n = Number(v)
    if (v === undefined || !Number.isFinite(n) || n < 0) throw new Error(`${flag} takes a non-negative number`)
    return n
  }
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]
    const value = argv[i + 1]
    switch (flag) {
      case '--agents':
        args.agents = (value ?? '').split(',').map(s => num(flag, s))
        i++
        break
      case '--tasks':
        args.tasks = num(flag, value)
        i++
        break
      case '--seed':
        args.seeds = [num(flag, value)]
        i++
        break
      case '--seeds':
        args.seeds = (value ?? '').split(',').map(v => num(flag, v))
        i++
        break
      case '--big-seeds':
        args.bigSeeds = Math.max(1, num(flag, value))
        i++
        break
      case '--ablate':
        args.ablate = true
        break
      case '--ablate-agents':
        args.ablateAgents = (value ?? '').split(',').map(v => num(flag, v))
        i++
        break
      case '--ablate-big-seeds':
        args.ablateBigSeeds = Math.max(1, num(flag, value))
        i++
        break
      case '--no-hazards':
        args.hazards = false
        break
      case '--report-from':
        args.reportFrom = (value ?? '').split(',')
        i++
        break
      case '--out':
        args.out = value ?? ''
        i++
        break
      case '--strategies': {
        const list = (value ?? '').split(',')
        for (const s of list) if (!isStrategy(s)) throw new Error(`unknown strategy ${s} (agency, none, git, manager)`)
        args.strategies = list as StrategyName[]
        i++
        break
      }
      case '--manager-ms':
        args.managerMs = num(flag, value)
        i++
        break
      case '--git-pull-ms':
        args.gitPullMs = num(flag, value)
        i++
        break
      case '--loss':
        args.loss = num(flag, value)
        i++
        break
      case '--partition': {
        const [at, len] = (value ?? '').split(':').map(s => num(flag, s))
        if (!(len > 0)) throw new Error('--partition takes START_MIN:MINUTES')
        args.partition = { atMin: at, forMin: len }
        i++
        break
      }
      case '--jobs':
        args.jobs = Math.max(1, num(flag, value))
        i++
        break
      case '--set': {
        for (const pair of (value ?? '').split(',')) {
          const [k, v] = pair.split('=')
          if (!(k in MECHANISM_DEFAULTS))
            throw new Error(`--set takes key=value of agency's settings: ${Object.keys(MECHANISM_DEFAULTS).join(', ')}`)
          args.settings[k as keyof MechanismSettings] = num(flag, v)
        }
        i++
        break
      }
      default:
        throw new Error(`unknown argument ${flag}`)
    }
  }
  if ([...args.agents, ...args.ablateAgents].some(n => !Number.isSafeInteger(n) || n < 1 || n > 9999))
    throw new Error('--agents and --ablate-agents take whole numbers from 1 to 9999')
  if (args.seeds.length === 0 || args.seeds.some(n => !Number.isSafeInteger(n)))
    throw new Error('--seeds takes whole numbers, e.g. 1,2,3,4,5')
  if (!Number.isSafeInteger(args.tasks) || args.tasks < 1) throw new Error('--tasks takes a positive whole number')
  if (args.out === '') throw new Error('--out needs a folder')
  return args
}

function workloadOf(a: Args): WorkloadInit {
  return a.hazards ? { tasks: a.tasks } : { tasks: a.tasks, hazards: NO_HAZARDS }
}

function seedsAt(a: Args, n: number, big: number): number[] {
  return n >= BIG ? a.seeds.slice(0, big) : a.seeds
}

function jobsFor(a: Args): SwarmJob[] {
  const workload = workloadOf(a)
  const jobs: SwarmJob[] = []
  for (const agents of a.agents)
    for (const seed of seedsAt(a, agents, a.bigSeeds)) {
      for (const strategy of a.strategies) {
        const job: SwarmJob = { strategy, agents, seed, workload }
        if (strategy === 'agency' && a.loss !== undefined) job.loss = a.loss
        if (strategy === 'manager' && a.managerMs !== undefined) job.managerServiceMs = a.managerMs
        if (strategy === 'git' && a.gitPullMs !== undefined) job.gitPullMs = a.gitPullMs
        jobs.push(job)
        if (strategy === 'agency' && a.partition !== undefined && agents > 1) {
          jobs.push({
            ...job,
            partition: a.partition,
            label: `agency, partitioned ${a.partition.forMin} min from min ${a.partition.atMin}`
          })
        }
      }
    }
  if (a.ablate) {
    // all mechanisms on is the plain agency run of the comparison, where both run
    for (const j of ablationJobs(a.ablateAgents, n => seedsAt(a, n, a.ablateBigSeeds), workload)) {
      if (
        j.label === ablationLabel(null) &&
        a.strategies.includes('agency') &&
        a.agents.includes(j.agents) &&
        seedsAt(a, j.agents, a.bigSeeds).includes(j.seed)
      )
        continue
      jobs.push(j)
    }
  }
  if (Object.keys(a.settings).length > 0) for (const j of jobs) if (j.strategy === 'agency') j.settings = a.settings
  // the biggest first, so that two workers finish together
  return jobs.sort((x, y) => cost(y) - cost(x))
}

function cost(j: SwarmJob): number {
  return j.strategy === 'agency' ? j.agents * 100 : j.strategy === 'git' ? j.agents * 5 : j.agents
}

async function worker(): Promise<void> {
  const job = await new Promise<SwarmJob>(resolve => {
    process.once('message', m => {
      resolve(m as SwarmJob)
    })
  })
  const result = runSwarmJob(job)
  // the process ran this job only: its high-water mark is the run's peak (maxRSS is in KiB)
  const reply: WorkerReply = { result, peakRssBytes: process.resourceUsage().maxRSS * 1024 }
  await new Promise<void>((resolve, reject) => {
    process.send?.(reply, err => {
      if (err === null || err === undefined) resolve()
      else reject(err)
    })
  })
  process.disconnect()
}

/**
 * The log a run writes: entries per agent-hour by kind (agency runs only; an
 * agent-hour is one agent over the run's virtual time to its last passing
 * test), and what a six-hour run of 1024 agents would write at that rate.
 */
export function logSizeTable(results: RunResult[]): string {
  const runs = results.filter(r => r.strategy === 'agency' && r.label === 'agency').sort((a, b) => a.agents - b.agents)
  const kinds = [...new Set(runs.flatMap(r => Object.keys(r.extra).filter(k => k.startsWith('entries: '))))].sort()
  if (runs.length === 0 || kinds.length === 0) return ''
  const perAgentHour = (r: RunResult, k: string): number => (r.extra[k] ?? 0) / ((r.agents * r.finishedAtMs) / 3600_000)
  const total = (r: RunResult): number => kinds.reduce((s, k) => s + (r.extra[k] ?? 0), 0)
  const rows = runs.map(r => {
    const all = kinds.reduce((s, k) => s + perAgentHour(r, k), 0)
    return `| ${r.agents} | ${(r.finishedAtMs / 3600_000).toFixed(1)} h | ${total(r)} | ${kinds.map(k => perAgentHour(r, k).toFixed(1)).join(' | ')} | ${all.toFixed(1)} | ${Math.round(all * 1024 * 6).toLocaleString('en-US')} |`
  })
  return [
    'Log entries per agent-hour by kind (agency runs; the last column: a six-hour run of 1024 agents at that rate):',
    '',
    `| agents | run | entries | ${kinds.map(k => k.slice('entries: '.length)).join(' | ')} | all kinds | 1024 agents × 6 h |`,
    `|---:|---:|---:|${kinds.map(() => '---:').join('|')}|---:|---:|`,
    ...rows,
    ''
  ].join('\n')
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2))
  const jobs = args.reportFrom.length > 0 ? [] : jobsFor(args)
  const results: MeasuredRun[] = []
  const started = performance.now()
  const log = (s: string): void => {
    process.stderr.write(s + '\n')
  }
  await mkdir(args.out, { recursive: true })
  // every finished run is saved at once, so that a long benchmark split over several invocations can be reported together
  const saved = join(args.out, 'bench-swarm.runs.jsonl')
  if (jobs.length > 0) await writeFile(saved, '')
  for (const f of args.reportFrom) {
    for (const line of (await readFile(f, 'utf8')).split('\n')) if (line.trim() !== '') results.push(JSON.parse(line) as MeasuredRun)
  }
  if (jobs.length > 0)
    log(
      `bench:swarm: ${jobs.length} runs, ${args.tasks} tasks, seeds ${args.seeds.join(',')}, up to ${args.jobs} at a time as free memory allows`
    )
  await runPool(jobs, { maxJobs: args.jobs, workerScript: fileURLToPath(import.meta.url), workerArgs: ['--worker'], log }, async r => {
    results.push(r)
    await appendFile(saved, JSON.stringify(r) + '\n')
    log(
      `  ${r.label} × ${r.agents} seed ${r.seed}: ${r.completed ? 'all pass' : 'NOT all pass'} at ${(r.finishedAtMs / 3600_000).toFixed(2)} h virtual, ${r.wallSeconds.toFixed(1)} s wall, ${(r.cpuSeconds ?? 0).toFixed(1)} CPU-s, peak RSS ${Math.round((r.peakRssBytes ?? 0) / 2 ** 20)} MiB`
    )
  })
  const wall =
    args.reportFrom.length > 0
      ? results.reduce((n, r) => n + r.wallSeconds, 0) / Math.max(1, args.jobs)
      : (performance.now() - started) / 1000
  const cpuTotal = results.reduce((n, r) => n + (r.cpuSeconds ?? 0), 0)
  const command = ['npm run bench:swarm --', ...process.argv.slice(2)].join(' ')
  const comparison = results.filter(r => !r.label.startsWith('agency without') && r.label !== ablationLabel(null))
  const summaries = summarize(comparison)
  const first = comparison.filter(r => r.seed === args.seeds[0])
  const seedNote = (big: number, sizes: number[]): string =>
    sizes.some(n => n >= BIG) && big < args.seeds.length
      ? `seeds ${args.seeds.join(', ')} (at ${sizes.filter(n => n >= BIG).join(', ')} agents only the first ${big}, for wall time)`
      : `seeds ${args.seeds.join(', ')}`
  const md = [
    '# Swarm simulator: agency against the baselines, with hazards',
    '',
    `Command: \`${command}\``,
    '',
    `Project: ${args.tasks} tasks in a ${WORKLOAD_DEFAULTS.layers}-layer dependency DAG, ${WORKLOAD_DEFAULTS.tasksPerArea} tasks per area, ${WORKLOAD_DEFAULTS.approaches} approaches per area of which some are traps, median attempt ${WORKLOAD_DEFAULTS.medianEffortMs / 60_000} min; ${seedNote(args.bigSeeds, args.agents)}. Mean over seeds, (min – max) after it.`,
    `Times are virtual. The whole run took ${wall.toFixed(0)} s of wall time${args.reportFrom.length > 0 ? ' (summed per worker)' : ''} and ${cpuTotal.toFixed(0)} CPU-seconds of its runs on ${cpus().length} cores (shared), ${results.length} runs.`,
    '',
    args.hazards ? hazardSection({ ...MECHANISM_DEFAULTS, ...args.settings }) : 'Hazards: none (`--no-hazards`).\n',
    '## Strategies',
    '',
    comparisonTable(summaries),
    '"wasted": duplicate work, attempts at traps a peer had already recorded, repairing tests another agent\'s unverified merge broke, repairing interface mismatches, fixing a dependency\'s defect that got past review (or reached the dependent before its review\'s fix), re-verifying after losing the race to the branch, and work a stalled holder handed off. Not waste but counted in "all work": reviews, verify runs and the wait for one\'s batch. "helpers (budgeted)": attempts by helpers that lost the race and holders stopped because a helper passed first, counted apart from waste.',
    '',
    'Who is ahead (means):',
    '',
    leaders(summaries),
    ...(args.ablate ? ablationSection(results, args) : []),
    `## One seed in detail (seed ${args.seeds[0]})`,
    '',
    resultsTable(first),
    'Coordination traffic by kind, per agent per minute:',
    '',
    trafficTable(first),
    logSizeTable(first),
    peakMemoryTable(results),
    'Wall time (s) and peak RSS (MiB) per run: ' +
      [...results]
        .sort((a, b) => a.agents - b.agents)
        .map(
          r => `${r.label} × ${r.agents} seed ${r.seed}: ${r.wallSeconds.toFixed(1)} s, ${Math.round((r.peakRssBytes ?? 0) / 2 ** 20)} MiB`
        )
        .join('; '),
    ''
  ].join('\n')
  await mkdir(args.out, { recursive: true })
  await writeFile(join(args.out, 'bench-swarm.md'), md)
  const plotted = results.filter(r => r.seed === args.seeds[0] && !r.label.startsWith('agency without') && r.label !== ablationLabel(null))
  await writeFile(
    join(args.out, 'bench-swarm.svg'),
    passRatePlot(plotted, `Hidden tests passing over time (${args.tasks} tasks, seed ${args.seeds[0]})`)
  )
  await writeFile(join(args.out, 'bench-swarm.json'), JSON.stringify({ args, command, results }, null, 1))
  process.stdout.write(md)
  log(`wrote ${join(args.out, 'bench-swarm.md')}, bench-swarm.svg, bench-swarm.json`)
}

function hazardSection(m: MechanismSettings): string {
  const lines = [
    '## Hazards',
    '',
    "Every strategy meets the same hazards: each is rolled from the project's seed and the ids involved, so the same changes break, mismatch and hide defects whoever builds them (src/sim/swarm-model/hazards.ts). Baselines merge after their own task's test, without review, and wait for stalled agents; agency mitigates with its mechanisms, each of which the ablation turns off.",
    '',
    '| parameter | default | source or reasoning |',
    '|---|---:|---|'
  ]
  for (const [k, v] of Object.entries(HAZARD_DEFAULTS)) {
    const shown = k.endsWith('Ms') ? `${v / 1000} s` : String(v)
    lines.push(`| ${k} | ${shown} | ${HAZARD_SOURCES[k as keyof typeof HAZARD_SOURCES]} |`)
  }
  const integrate =
    m.backgroundVerify >= 2
      ? 'a holder whose attempt passed hands the change to its own daemon and goes on with its next task (`agency integrate --background`): the daemon verifies the merge and pushes it, or, while an integrator serves, verifies it and then requests integration; only a red verify comes back to the agent'
      : m.backgroundVerify === 1
        ? 'a holder whose attempt passed hands the change to its own daemon and goes on while no integrator serves (`agency integrate --background`), and requests integration itself while one does'
        : 'a holder integrates its change itself (`agency integrate`) and waits for it'
  const review =
    m.reviewWhenIdle > 0
      ? "a change others build on asks for a review only while its author's status says some agent has nothing to claim (core/board/review-timing), and does not hold its author up"
      : 'a review is asked for each change others build on and does not hold its author up'
  lines.push(
    '',
    `agency's settings, the same at every size: ${integrate}; agents integrate on their own until ${m.pileUp} integrations wait for the branch at once, then an agent becomes the integrator and batches up to ${m.batchMax} requests back to back (polling every ${m.batchEveryMs / 1000} s when none waits); ${review}; an idle agent assists (agentd's rule, docs/assist.md) the held task with the longest chain of dependents ${m.assistFloorMs === 0 ? 'as soon as it is held' : `once it has been held ${m.assistFloorMs / 60_000} min`}, at most ${m.maxHelpersPerTask} assistants per task (${m.assistSpare} more while more agents are free than places are left) with an approach nobody announced or recorded as failed, and lands its change the way holders do (through the integrator's queue once one is announced); the first passing integration wins; a holder is slow at ${m.handoffFactor} × the task's usual time and hands the task to a faster idle agent.`,
    ''
  )
  return lines.join('\n')
}

function ablationSection(results: RunResult[], a: Args): string[] {
  const all = ablationLabel(null)
  const runs = results
    .filter(
      r =>
        r.label.startsWith('agency without') ||
        r.label === all ||
        (r.strategy === 'agency' &&
          r.label === 'agency' &&
          a.ablateAgents.includes(r.agents) &&
          seedsAt(a, r.agents, a.ablateBigSeeds).includes(r.seed ?? -1))
    )
    .map(r => (r.label === 'agency' ? { ...r, label: all } : r))
  const big = a.ablateAgents.filter(n => n >= BIG)
  return [
    '## Ablation: agency with one mechanism off',
    '',
    `Seeds: ${a.ablateAgents.filter(n => n < BIG).join(', ')} agents: ${a.seeds.join(', ')}${big.length > 0 ? `; ${big.join(', ')} agents: ${a.seeds.slice(0, a.ablateBigSeeds).join(', ')} (fewer, for wall time: one 1024-agent run takes one to two minutes)` : ''}. Δ: against all mechanisms on, same size, means.`,
    '',
    ablationTable(summarize(runs), all)
  ]
}

if (process.argv.includes('--worker')) {
  worker().catch(err => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`)
    process.exit(1)
  })
} else {
  main().catch(err => {
    process.stderr.write(`${(err as Error).message}\n`)
    process.exit(1)
  })
}
