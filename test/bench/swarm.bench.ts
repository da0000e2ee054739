// Benchmark: the swarm simulator, agency against three baselines, for each
// swarm size. Not a vitest test; run it with
//
//   npm run bench:swarm -- --agents 1,8,32,128,1024 [--tasks 2000] [--seed 1] [--out results/]
//     [--strategies agency,none,git,manager] [--manager-ms 2000] [--git-pull-ms 30000]
//     [--loss 0] [--partition START_MIN:MINUTES] [--jobs 2]
//
// Every (strategy, N) run is a job in a worker process (a 1024-agent agency
// run holds 1024 boards: several GB of heap). Results are deterministic for a
// seed; only the wall-clock column depends on the machine. Writes
// <out>/bench-swarm.md (tables), <out>/bench-swarm.svg (pass rate against
// time, one panel per N) and <out>/bench-swarm.json (every number and timeline).
import '../../src/polyfill.js'
import { fork } from 'node:child_process'
import { mkdir, writeFile } from 'node:fs/promises'
import { cpus } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { passRatePlot } from '../../src/sim/pass-rate-plot.js'
import { resultsTable, trafficTable } from '../../src/sim/results-table.js'
import type { RunResult } from '../../src/sim/run-recorder.js'
import { isStrategy, runSwarmJob, type StrategyName, type SwarmJob } from '../../src/sim/swarm-job.js'
import { WORKLOAD_DEFAULTS } from '../../src/sim/workload.js'

interface Args {
  agents: number[]
  tasks: number
  seed: number
  out: string
  strategies: StrategyName[]
  managerMs?: number
  gitPullMs?: number
  loss?: number
  partition?: { atMin: number, forMin: number }
  jobs: number
}

function parseArgs (argv: string[]): Args {
  const args: Args = { agents: [1, 8, 32, 128, 1024], tasks: WORKLOAD_DEFAULTS.tasks, seed: 1, out: 'results', strategies: ['agency', 'none', 'git', 'manager'], jobs: Math.max(1, Math.min(2, cpus().length)) }
  const num = (flag: string, v: string | undefined): number => {
    const n = Number(v)
    if (v === undefined || !Number.isFinite(n) || n < 0) throw new Error(`${flag} takes a non-negative number`)
    return n
  }
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]
    const value = argv[i + 1]
    switch (flag) {
      case '--agents': args.agents = (value ?? '').split(',').map(s => num(flag, s)); i++; break
      case '--tasks': args.tasks = num(flag, value); i++; break
      case '--seed': args.seed = num(flag, value); i++; break
      case '--out': args.out = value ?? ''; i++; break
      case '--strategies': {
        const list = (value ?? '').split(',')
        for (const s of list) if (!isStrategy(s)) throw new Error(`unknown strategy ${s} (agency, none, git, manager)`)
        args.strategies = list as StrategyName[]
        i++
        break
      }
      case '--manager-ms': args.managerMs = num(flag, value); i++; break
      case '--git-pull-ms': args.gitPullMs = num(flag, value); i++; break
      case '--loss': args.loss = num(flag, value); i++; break
      case '--partition': {
        const [at, len] = (value ?? '').split(':').map(s => num(flag, s))
        if (!(len > 0)) throw new Error('--partition takes START_MIN:MINUTES')
        args.partition = { atMin: at, forMin: len }
        i++
        break
      }
      case '--jobs': args.jobs = Math.max(1, num(flag, value)); i++; break
      default: throw new Error(`unknown argument ${flag}`)
    }
  }
  if (args.agents.some(n => !Number.isSafeInteger(n) || n < 1 || n > 9999)) throw new Error('--agents takes whole numbers from 1 to 9999')
  if (!Number.isSafeInteger(args.tasks) || args.tasks < 1) throw new Error('--tasks takes a positive whole number')
  if (args.out === '') throw new Error('--out needs a folder')
  return args
}

function jobsFor (a: Args): SwarmJob[] {
  const workload = { tasks: a.tasks }
  const jobs: SwarmJob[] = []
  for (const agents of a.agents) {
    for (const strategy of a.strategies) {
      const job: SwarmJob = { strategy, agents, seed: a.seed, workload }
      if (strategy === 'agency' && a.loss !== undefined) job.loss = a.loss
      if (strategy === 'manager' && a.managerMs !== undefined) job.managerServiceMs = a.managerMs
      if (strategy === 'git' && a.gitPullMs !== undefined) job.gitPullMs = a.gitPullMs
      jobs.push(job)
      if (strategy === 'agency' && a.partition !== undefined && agents > 1) {
        jobs.push({ ...job, partition: a.partition, label: `agency, partitioned ${a.partition.forMin} min from min ${a.partition.atMin}` })
      }
    }
  }
  // the biggest first, so that two workers finish together
  return jobs.sort((x, y) => cost(y) - cost(x))
}

function cost (j: SwarmJob): number {
  return j.strategy === 'agency' ? j.agents * 100 : j.strategy === 'git' ? j.agents * 5 : j.agents
}

/** Runs one job in a child process with room for a large heap. */
async function runInWorker (job: SwarmJob): Promise<RunResult> {
  const child = fork(fileURLToPath(import.meta.url), ['--worker'], {
    execArgv: [...process.execArgv, '--max-old-space-size=12288', '--max-semi-space-size=64'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc']
  })
  return await new Promise((resolve, reject) => {
    let result: RunResult | undefined
    child.on('message', m => { result = m as RunResult })
    child.on('error', reject)
    child.on('exit', code => {
      if (result !== undefined) resolve(result)
      else reject(new Error(`worker for ${job.strategy} × ${job.agents} exited with code ${code}`))
    })
    child.send(job)
  })
}

async function worker (): Promise<void> {
  const job = await new Promise<SwarmJob>(resolve => process.once('message', m => { resolve(m as SwarmJob) }))
  const result = runSwarmJob(job)
  await new Promise<void>((resolve, reject) => process.send?.(result, err => { if (err != null) reject(err); else resolve() }))
  process.disconnect()
}

/**
 * The log a run writes: entries per agent-hour by kind (agency runs only; an
 * agent-hour is one agent over the run's virtual time to its last passing
 * test), and what a six-hour run of 1024 agents would write at that rate.
 */
export function logSizeTable (results: RunResult[]): string {
  const runs = results.filter(r => r.strategy === 'agency' && r.label === 'agency').sort((a, b) => a.agents - b.agents)
  const kinds = [...new Set(runs.flatMap(r => Object.keys(r.extra).filter(k => k.startsWith('entries: '))))].sort()
  if (runs.length === 0 || kinds.length === 0) return ''
  const perAgentHour = (r: RunResult, k: string): number => (r.extra[k] ?? 0) / (r.agents * r.finishedAtMs / 3600_000)
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

async function main (): Promise<void> {
  const args = parseArgs(process.argv.slice(2))
  const jobs = jobsFor(args)
  const results: RunResult[] = []
  const started = performance.now()
  let next = 0
  const log = (s: string): void => { process.stderr.write(s + '\n') }
  log(`bench:swarm: ${jobs.length} runs, ${args.tasks} tasks, seed ${args.seed}, ${args.jobs} at a time`)
  await Promise.all(Array.from({ length: Math.min(args.jobs, jobs.length) }, async () => {
    while (next < jobs.length) {
      const job = jobs[next++]
      const r = await runInWorker(job)
      results.push(r)
      log(`  ${r.label} × ${r.agents}: ${r.completed ? 'all pass' : 'NOT all pass'} at ${(r.finishedAtMs / 3600_000).toFixed(2)} h virtual, ${r.wallSeconds.toFixed(1)} s wall`)
    }
  }))
  const wall = (performance.now() - started) / 1000
  const command = ['npm run bench:swarm --', ...process.argv.slice(2)].join(' ')
  const md = [
    '# Swarm simulator: agency against the baselines',
    '',
    `Command: \`${command}\``,
    '',
    `Project: ${args.tasks} tasks in a ${WORKLOAD_DEFAULTS.layers}-layer dependency DAG, ${WORKLOAD_DEFAULTS.tasksPerArea} tasks per area, ${WORKLOAD_DEFAULTS.approaches} approaches per area of which some are traps, median attempt ${WORKLOAD_DEFAULTS.medianEffortMs / 60_000} min; seed ${args.seed}.`,
    `Times are virtual. The whole run took ${wall.toFixed(0)} s of wall time on ${cpus().length} cores.`,
    '',
    resultsTable(results),
    'Coordination traffic by kind, per agent per minute:',
    '',
    trafficTable(results),
    logSizeTable(results),
    'Wall time per run (s): ' + [...results].sort((a, b) => a.agents - b.agents).map(r => `${r.label} × ${r.agents}: ${r.wallSeconds.toFixed(1)}`).join('; '),
    ''
  ].join('\n')
  await mkdir(args.out, { recursive: true })
  await writeFile(join(args.out, 'bench-swarm.md'), md)
  await writeFile(join(args.out, 'bench-swarm.svg'), passRatePlot(results, `Hidden tests passing over time (${args.tasks} tasks, seed ${args.seed})`))
  await writeFile(join(args.out, 'bench-swarm.json'), JSON.stringify({ args, command, results }, null, 1))
  process.stdout.write(md)
  log(`wrote ${join(args.out, 'bench-swarm.md')}, bench-swarm.svg, bench-swarm.json`)
}

if (process.argv.includes('--worker')) {
  worker().catch(err => { process.stderr.write(`${(err as Error).stack ?? String(err)}\n`); process.exit(1) })
} else {
  main().catch(err => { process.stderr.write(`${(err as Error).message}\n`); process.exit(1) })
}
