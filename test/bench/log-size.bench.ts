// Benchmark: how big the shared record of a real run gets. Not a vitest test;
// run it with
//
//   npm run bench:log-size -- [--agents 8,128,1024] [--tasks 2000] [--hours 6] [--seed 1] [--out results/bench-log-size.md]
//
// Runs the agency strategy of the swarm simulator (src/sim, unchanged: the
// same run as `bench:swarm`) for each swarm size and counts the log entries
// it wrote, by kind, from its entry pool: entries per agent-hour over the
// whole run and over its busiest hour, and the six-hour log that rate makes.
// The simulator writes goal, task, claim, release, done and finding entries;
// a real daemon also writes, per landed task, an integration request, the
// integration's result and a test run of the shared branch. Those three are
// added per done entry in the "with integration" column, as an upper bound.
import '../../src/polyfill.js'
import { fork } from 'node:child_process'
import { mkdir, writeFile } from 'node:fs/promises'
import { cpus } from 'node:os'
import { dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { AgencySwarm } from '../../src/sim/swarm-model/strategies/agency.js'
import { createProject } from '../../src/sim/swarm-model/workload.js'

interface Args {
  agents: number[]
  tasks: number
  hours: number
  seed: number
  out: string
}

/** Entries a real daemon writes per landed task beyond the simulator's done: request, result, test run. */
const INTEGRATION_ENTRIES_PER_DONE = 3
const HOUR = 3600_000

function parseArgs(argv: string[]): Args {
  const a: Args = { agents: [8, 128, 1024], tasks: 2000, hours: 6, seed: 1, out: 'results/bench-log-size.md' }
  for (let i = 0; i < argv.length; i++) {
    const v = argv[i + 1]
    const num = (): number => {
      const n = Number(v)
      if (v === undefined || !Number.isFinite(n) || n <= 0) throw new Error(`${argv[i]} takes a positive number`)
      return n
    }
    switch (argv[i]) {
      case '--agents':
        a.agents = (v ?? '').split(',').map(Number)
        i++
        break
      case '--tasks':
        a.tasks = num()
        i++
        break
      case '--hours':
        a.hours = num()
        i++
        break
      case '--seed':
        a.seed = num()
        i++
        break
      case '--out':
        a.out = v ?? ''
        i++
        break
      default:
        throw new Error(`unknown argument ${argv[i]} (use --agents N[,N...] --tasks N --hours H --seed S --out FILE)`)
    }
  }
  if (a.agents.some(n => !Number.isSafeInteger(n) || n < 1)) throw new Error('--agents takes positive whole numbers')
  if (a.out === '') throw new Error('--out needs a file')
  return a
}

interface SizeRow {
  agents: number
  tasks: number
  /** virtual hours until every hidden test passed, or the --hours limit */
  hours: number
  entries: number
  /** the goal and the tasks, written before any agent starts (at virtual time 0) */
  planEntries: number
  byKind: Record<string, number>
  meanBytes: number
  /** the agents' entries (all but the plan) per agent-hour over the whole run */
  perAgentHour: number
  /** the agents' entries per agent-hour in the busiest whole hour (the whole run when shorter) */
  peakPerAgentHour: number
  wallSeconds: number
}

function measure(agents: number, tasks: number, seed: number, maxHours: number): SizeRow {
  const started = performance.now()
  // the same project and seed as bench:swarm's agency job (src/sim/swarm-model/swarm-job.ts)
  const swarm = new AgencySwarm({ project: createProject(seed, { tasks }), agents, seed: seed + agents })
  // as AgencySwarm.run(), but stopped after `hours` of virtual time
  swarm.scheduler.run({ until: maxHours * HOUR, stop: () => swarm.progress.complete })
  const result = swarm.result()
  const entries = swarm.pool.entries
  const byKind: Record<string, number> = {}
  const perHour: number[] = []
  let bytes = 0
  let planEntries = 0
  for (const e of entries) {
    byKind[e.kind] = (byKind[e.kind] ?? 0) + 1
    bytes += e.bytes
    if (e.sentAt === 0) {
      planEntries++
      continue
    }
    const h = Math.floor(e.sentAt / HOUR)
    perHour[h] = (perHour[h] ?? 0) + 1
  }
  const work = entries.length - planEntries
  const hours = result.finishedAtMs / HOUR
  const fullHours = Math.floor(hours)
  const peak = fullHours >= 1 ? Math.max(...perHour.slice(0, fullHours).map(n => n ?? 0)) : work / Math.max(hours, 1 / 60)
  return {
    agents,
    tasks,
    hours,
    entries: entries.length,
    planEntries,
    byKind,
    meanBytes: entries.length > 0 ? bytes / entries.length : 0,
    perAgentHour: work / (agents * hours),
    peakPerAgentHour: peak / agents,
    wallSeconds: (performance.now() - started) / 1000
  }
}

/** One swarm size in a child process: a 1024-agent run holds 1024 boards. */
async function runInWorker(agents: number, tasks: number, seed: number, hours: number): Promise<SizeRow> {
  const child = fork(fileURLToPath(import.meta.url), ['--worker'], {
    execArgv: [...process.execArgv, '--max-old-space-size=12288', '--max-semi-space-size=64'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc']
  })
  return await new Promise((resolve, reject) => {
    let row: SizeRow | undefined
    child.on('message', m => {
      row = m as SizeRow
    })
    child.on('error', reject)
    child.on('exit', code => {
      if (row !== undefined) resolve(row)
      else reject(new Error(`worker for ${agents} agents exited with code ${code}`))
    })
    child.send({ agents, tasks, seed, hours })
  })
}

const KINDS = ['goal', 'task', 'claim', 'release', 'done', 'finding']
const k = (n: number): string => (n >= 10_000 ? `${(n / 1000).toFixed(0)}k` : n >= 1000 ? `${(n / 1000).toFixed(1)}k` : n.toFixed(0))

function tables(rows: SizeRow[], hoursOfRun: number): string {
  const kinds = [...new Set([...KINDS, ...rows.flatMap(r => Object.keys(r.byKind))])]
  const byKind = [
    `| agents | tasks | run (virtual h) | entries | ${kinds.join(' | ')} | bytes / entry |`,
    `|---:|---:|---:|---:|${kinds.map(() => '---:').join('|')}|---:|`,
    ...rows.map(
      r =>
        `| ${r.agents} | ${r.tasks} | ${r.hours.toFixed(1)} | ${r.entries} | ${kinds.map(x => String(r.byKind[x] ?? 0)).join(' | ')} | ${r.meanBytes.toFixed(0)} |`
    )
  ].join('\n')
  const withIntegration = (r: SizeRow, perAgentHour: number): number => {
    const done = r.byKind.done ?? 0
    return perAgentHour * (1 + (INTEGRATION_ENTRIES_PER_DONE * done) / Math.max(1, r.entries - r.planEntries))
  }
  const rates = [
    `| agents | agents' entries per agent-hour (whole run) | busiest hour | busiest hour, with integration entries | ${hoursOfRun}-hour log at the busiest rate, plan included | with integration entries |`,
    '|---:|---:|---:|---:|---:|---:|',
    ...rows.map(r => {
      const peakInt = withIntegration(r, r.peakPerAgentHour)
      const total = (rate: number): string => k(r.planEntries + rate * r.agents * hoursOfRun)
      return `| ${r.agents} | ${r.perAgentHour.toFixed(1)} | ${r.peakPerAgentHour.toFixed(1)} | ${peakInt.toFixed(1)} | ${total(r.peakPerAgentHour)} | ${total(peakInt)} |`
    })
  ].join('\n')
  return `${byKind}\n\n${rates}\n`
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2))
  const rows: SizeRow[] = []
  for (const n of args.agents) {
    process.stderr.write(`log-size bench: ${n} agents, ${args.tasks} tasks...\n`)
    const row = await runInWorker(n, args.tasks, args.seed, args.hours)
    process.stderr.write(`  ${JSON.stringify(row)}\n`)
    rows.push(row)
  }
  const md = [
    '# How big the log of a run gets (simulator)',
    '',
    `Command: \`npm run bench:log-size -- ${process.argv.slice(2).join(' ')}\``.replace(/ -- `$/, '`'),
    '',
    `The agency strategy of \`bench:swarm\` (its project with ${args.tasks} tasks, seed ${args.seed}, a median of 10 minutes per attempt), run until every hidden test passes or for ${args.hours} virtual hours, for each swarm size; ` +
      "entries counted by kind from the simulator's entry pool. Heartbeats and direct messages are not log entries. " +
      `The simulator writes no integration entries: "with integration entries" adds the ${INTEGRATION_ENTRIES_PER_DONE} a real daemon writes per landed task ` +
      '(integration request, integration result, test run), an upper bound since an integrator batch shares one test run. ' +
      `The plan (goal and tasks) is written once at the start and is left out of the rates. The ${args.hours}-hour log is the plan plus the busiest hour's rate kept up for ${args.hours} hours by every agent. ${cpus().length} cores.`,
    '',
    tables(rows, args.hours),
    `Wall time per run (s): ${rows.map(r => `${r.agents} agents: ${r.wallSeconds.toFixed(0)}`).join('; ')}.`,
    ''
  ].join('\n')
  await mkdir(dirname(args.out), { recursive: true })
  await writeFile(args.out, md)
  process.stdout.write(md)
  process.stderr.write(`written to ${args.out}\n`)
}

async function worker(): Promise<void> {
  const job = await new Promise<{ agents: number; tasks: number; seed: number; hours: number }>(resolve =>
    process.once('message', m => {
      resolve(m as any)
    })
  )
  const row = measure(job.agents, job.tasks, job.seed, job.hours)
  await new Promise<void>((resolve, reject) =>
    process.send?.(row, err => {
      if (err != null) reject(err)
      else resolve()
    })
  )
  process.disconnect()
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
