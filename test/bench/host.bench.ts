// npm run bench:host — many agents on one host: what agentd costs per agent,
// several agents to a process (`agentd --agents`, what `agency swarm up` does)
// against one agentd process per agent, in one run.
//
//   npm run build && npm run bench:host -- --agents 64 [--per-agent-up-to 32] [--idle-s 30]
//
// For each way: the swarm's agents start on a shared repository (each with its
// clone, as `swarm up` starts them; no harness, so what is measured is agentd
// alone), N ready tasks with scopes apart go on the board, and every agent
// calls `claim --next`. Reported, from the first process's spawn: every agent
// live (each sees every other), every agent HELD a task of its own; then, over
// an idle window, the resident memory of all agentd processes together
// (VmRSS, from /proc) and their CPU, per agent and per agent past the first
// (the cost of one agent more: the runtime is paid once per process). Ports
// and sockets on loopback only; everything is stopped and removed at the end.
import '../../src/polyfill.js'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir, cpus, loadavg, totalmem } from 'node:os'
import { join } from 'node:path'
import { execFileSync } from 'node:child_process'
import { startSwarmHosts, agentsPerProcess } from '../../src/swarm/swarm.js'
import type { LocalHost } from '../../src/swarm/local-daemon.js'
import { loadExample, seedBareRepo } from '../../src/swarm/example-project.js'
import { connectAgency, type Agency } from '../../src/client/agency.js'
import { ClaimOutcome, type AgencyClient } from '../../src/gen/agency/v1/api.js'

interface Args {
  agents: number[]
  perAgentUpTo: number
  idleS: number
}

function parseArgs(argv: string[]): Args {
  const a: Args = { agents: [64], perAgentUpTo: 32, idleS: 30 }
  for (let i = 0; i < argv.length; i++) {
    const v = argv[i + 1]
    switch (argv[i]) {
      case '--agents':
        a.agents = v.split(',').map(Number)
        i++
        break
      case '--per-agent-up-to':
        a.perAgentUpTo = Number(v)
        i++
        break
      case '--idle-s':
        a.idleS = Number(v)
        i++
        break
      default:
        throw new Error(`unknown argument ${argv[i]}`)
    }
  }
  return a
}

const say = (text: string): void => {
  process.stderr.write(`bench:host: ${text}\n`)
}

const sleep = async (ms: number): Promise<void> => {
  await new Promise(resolve => setTimeout(resolve, ms))
}

/** VmRSS in bytes and CPU time in seconds of one process, from /proc. */
async function processUse(pid: number): Promise<{ rss: number; cpuS: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  const rss = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024
  const stat = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ')
  const ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim())
  return { rss, cpuS: (Number(stat[11]) + Number(stat[12])) / ticks }
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(100)
  }
}

interface Result {
  way: string
  n: number
  processes: number
  liveS: number
  claimedS: number
  rssMiB: number
  rssPerAgentMiB: number
  rssPerMoreMiB: number
  idleCpuPct: number
  idleCpuPerAgentPct: number
}

async function measure(n: number, perProcess: number, idleS: number): Promise<Result> {
  say(`${n} agents, ${perProcess} per process`)
  const dir = await mkdtemp(join(tmpdir(), 'agency-bench-host-'))
  const repo = join(dir, 'repo.git')
  await seedBareRepo(await loadExample('calc'), repo)
  const state = { dir, repo, branch: 'main', daemons: [] }
  let hosts: LocalHost[] = []
  const clients: Agency[] = []
  try {
    const t0 = performance.now()
    hosts = await startSwarmHosts({
      n,
      perProcess,
      state,
      harness: '',
      swarm: `bench-host-${process.pid}`,
      agentdArgs: [],
      progress: () => {}
    })
    const agents = hosts.flatMap(h => h.agents)
    say(`${n} agents in ${hosts.length} processes started in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
    for (const a of agents) clients.push(connectAgency(a.grpc))
    await until(
      'every agent live',
      async () =>
        (await Promise.all(clients.map(async c => (await c.call((x: AgencyClient) => x.getStatus, {}, 60_000)).peersLive))).every(
          p => p >= n - 1
        ),
      600_000
    )
    const liveS = (performance.now() - t0) / 1000
    say(`all live at ${liveS.toFixed(1)} s`)
    await clients[0].call((x: AgencyClient) => x.addTasks, {
      tasks: Array.from({ length: n }, (_, i) => ({
        id: `t${i}`,
        title: `t${i}`,
        description: '',
        deps: [],
        scope: [`src/t${i}/**`],
        priority: 0
      }))
    })
    await until(
      'every agent sees the tasks',
      async () =>
        (await Promise.all(clients.map(async c => (await c.call((x: AgencyClient) => x.ready, {}, 60_000)).tasks.length))).every(
          k => k === n
        ),
      600_000
    )
    const held = await Promise.all(
      clients.map(async c => {
        for (let tries = 0; tries < 20; tries++) {
          const r = await c.call((x: AgencyClient) => x.claim, { task: '', scope: [], noWait: false, next: true }, 120_000)
          if (r.outcome === ClaimOutcome.CLAIM_HELD) return r.task
        }
        throw new Error('no task held after 20 claim calls')
      })
    )
    const claimedS = (performance.now() - t0) / 1000
    if (new Set(held).size !== n) throw new Error(`${n} agents held ${new Set(held).size} distinct tasks`)
    await sleep(5_000)
    const pids = hosts.map(h => h.child.pid as number)
    const before = await Promise.all(pids.map(processUse))
    await sleep(idleS * 1000)
    const after = await Promise.all(pids.map(processUse))
    const rss = after.reduce((s, u) => s + u.rss, 0)
    const cpuS = after.reduce((s, u, i) => s + u.cpuS - before[i].cpuS, 0)
    const idleCpuPct = (cpuS / idleS) * 100
    return {
      way: perProcess === 1 ? 'a process per agent' : `agentd --agents (${perProcess} per process)`,
      n,
      processes: hosts.length,
      liveS,
      claimedS,
      rssMiB: rss / 2 ** 20,
      rssPerAgentMiB: rss / n / 2 ** 20,
      rssPerMoreMiB: NaN,
      idleCpuPct,
      idleCpuPerAgentPct: idleCpuPct / n
    }
  } catch (err) {
    // What the processes said before the failure goes with it: their dir is removed below.
    for (const h of hosts.keys())
      say(
        `host-${h + 1}.log ends:\n${(await readFile(join(dir, `host-${h + 1}.log`), 'utf8').catch(() => '')).split('\n').slice(-15).join('\n')}`
      )
    throw err
  } finally {
    for (const c of clients) c.close()
    await Promise.allSettled(hosts.map(async h => await h.stop('SIGTERM')))
    await rm(dir, { recursive: true, force: true })
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2))
  const f = (x: number, d = 1): string => (Number.isFinite(x) ? x.toFixed(d) : '-')
  // Each row as soon as it is measured, so a later failure keeps what was measured.
  const row = (r: Result): void => {
    process.stdout.write(
      `| ${r.way} | ${r.n} | ${r.processes} | ${f(r.liveS)} | ${f(r.claimedS)} | ${f(r.rssMiB, 0)} | ${f(r.rssPerAgentMiB)} | ${f(r.rssPerMoreMiB)} | ${f(r.idleCpuPct, 2)} | ${f(r.idleCpuPerAgentPct, 3)} |\n`
    )
  }
  process.stdout.write(
    [
      `machine: ${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB; node ${process.version}; load average at start ${loadavg()[0].toFixed(1)}`,
      '',
      "| way | agents | processes | all live (s) | all HELD (s) | RSS all (MiB) | RSS per agent (MiB) | RSS per agent past each process's first (MiB) | idle CPU all (% of a core) | idle CPU per agent (% of a core) |",
      '|---|---|---|---|---|---|---|---|---|---|'
    ].join('\n') + '\n'
  )
  // One agent first: the per-process floor that every further agent is measured against.
  const one = await measure(1, 1, args.idleS)
  row(one)
  for (const n of args.agents) {
    const hosted = await measure(n, agentsPerProcess(n), args.idleS)
    hosted.rssPerMoreMiB = (hosted.rssMiB - one.rssMiB * hosted.processes) / (n - hosted.processes)
    row(hosted)
    if (n <= args.perAgentUpTo) {
      const apart = await measure(n, 1, args.idleS)
      apart.rssPerMoreMiB = (apart.rssMiB - one.rssMiB) / (n - 1)
      row(apart)
    }
  }
  process.stdout.write(`load average at the end ${loadavg()[0].toFixed(1)}\n`)
}

// The daemons are detached and unreferenced, and a pending gRPC call does not hold the event loop: this does.
const alive = setInterval(() => {}, 60_000)
main().then(
  () => {
    clearInterval(alive)
  },
  (err: Error) => {
    process.stderr.write(`bench:host: ${err.stack ?? err.message}\n`)
    process.exit(1)
  }
)
