// `agency swarm up|down`: N local agents in a few agentd processes (several
// agents per process, wired to each other), each agent with a harness,
// working one shared repository; the goal and tasks of an example project put
// on the board; a live progress view.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { existsSync, readFileSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { homedir } from 'node:os'
import { basename, join, resolve } from 'node:path'
import { sharedRepoFor, type SharedRepo } from './shared-repo.js'
import { harnessLaunch } from '../harness/index.js'
import { acpAgentLaunch, isAcpHarness } from '../harness/acp/acp-agents.js'
import { checkLaunchCommand } from '../harness/command-check.js'
import { restartLocalHost, startLocalHost, type LocalDaemon, type LocalHost } from './local-daemon.js'
import { availableParallelism } from 'node:os'
import { MAX_AGENTS_PER_PROCESS } from '../daemon/config.js'
import { loadExample, seedBareRepo, type ExampleProject } from './example-project.js'
import { connectAgency, type Agency } from '../client/agency.js'
import type { AddTaskRequest, AgencyClient, LogInfoReply, StatusReply } from '../gen/agency/v1/api.js'
import { FailedPreconditionError, InvalidArgumentError } from '../core/errors.js'

export interface SwarmUpOptions {
  n: number
  dir: string
  repo?: string
  /** the shared branch (default: the repository's current branch, or main) */
  branch?: string
  example?: string
  /** a goal to set when the board has none (the agents plan it: no tasks needed) */
  goal?: string
  testCommand?: string
  harness: string
  /** more agentd flags, e.g. --harness-run-timeout 20m */
  agentdArgs?: string[]
  swarm: string
  /** stop the swarm once every task is done and the tests pass */
  downWhenDone: boolean
  /** give up after this long (ms); 0: never */
  timeoutMs: number
  /** serve the dashboard of the first agent's daemon on this HOST:PORT */
  ui?: string
  /** agents per agentd process (default: agentsPerProcess(n)); 1 runs one process per agent */
  perProcess?: number
  /**
   * Sets the goal (default: the member's own goal set). A swarm with an
   * operator (--operator in agentdArgs) takes only a goal the operator signed:
   * the CLI passes one that signs with the operator's key.
   */
  setGoal?: (agency: Agency, goal: { text: string; files: string[]; testCommand: string }) => Promise<void>
  progress: (line: string) => void
}

const memberGoal = async (agency: Agency, goal: { text: string; files: string[]; testCommand: string }): Promise<void> => {
  await agency.call((c: AgencyClient) => c.setGoal, goal)
}

export interface SwarmState {
  dir: string
  repo: string
  branch: string
  /** the user's working repository the swarm was seeded from */
  source?: string
  daemons: Array<{ name: string; pid: number; grpc: string; dataDir: string; metrics?: string; ui?: string }>
}

const STATE_FILE = 'swarm.json'
const REPO_FILE = 'swarm-repo.json'

export interface Progress {
  peers: number
  done: number
  total: number
  passRate: number
  integrations: number
  findings: number
}

/** Where a swarm lives by default: outside the user's working tree. */
export function defaultSwarmDir(name: string): string {
  return join(homedir(), '.agency', 'swarms', name)
}

/** A swarm name from a repository path or URL: its last component, as a slug. */
/** A repository URL (scheme://... or scp-like user@host:path) rather than a local path. */
function isRepoUrl(repo: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(repo) || /^[^/\\:]+@[^/\\:]+:/.test(repo)
}

/** The swarm's name from its repository: the directory's or URL's last part (`--repo .` names the current directory). */
export function swarmNameFor(repo: string | undefined, fallback: string): string {
  if (repo == null) return fallback
  const path = isRepoUrl(repo) ? repo : resolve(repo)
  const base = basename(path.replace(/[/\\]+$/, ''))
    .replace(/\.git$/, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
  return base !== '' ? base : fallback
}

export function progressOf(s: StatusReply, integrations: number, findings: number): Progress & { goalMet: boolean } {
  return {
    goalMet: s.goalMet,
    peers: s.peersLive + 1,
    done: s.tasks.filter(t => t.state === 'done').length,
    total: s.tasks.length,
    passRate: s.tests?.passRate ?? 0,
    integrations,
    findings
  }
}

export function progressLine(p: Progress, seconds: number): string {
  const bar = '#'.repeat(Math.round(p.passRate * 20)).padEnd(20, '.')
  return `[${bar}] ${String(Math.round(p.passRate * 100)).padStart(3)}% pass | tasks ${p.done}/${p.total} done | ${p.peers} agents live | ${p.integrations} integrations | ${p.findings} findings | ${Math.round(seconds)}s`
}

/** An example's tasks as a plan for AddTasks. */
export function exampleTasks(example: ExampleProject): AddTaskRequest[] {
  return example.tasks.map(t => ({
    id: t.id,
    title: t.title,
    description: `Write ${t.file}; tests/${t.id}.test.mjs must pass.`,
    deps: t.deps,
    scope: t.scope,
    priority: t.priority
  }))
}

async function putProjectOnBoard(agency: Agency, example: ExampleProject, setGoal = memberGoal): Promise<void> {
  // The tasks first: a goal on an empty board would show the plan task, and the example is planned already.
  // One plan: the example lists tasks before their dependencies; tasks already on the board are kept.
  await agency.call((c: AgencyClient) => c.addTasks, { tasks: exampleTasks(example) })
  const goal = await agency.call((c: AgencyClient) => c.getGoal, {})
  if (goal.goal == null) await setGoal(agency, { text: example.goal, files: ['README.md'], testCommand: example.testCommand })
}

function checkPerProcess(k: number): void {
  if (!Number.isSafeInteger(k) || k < 1 || k > MAX_AGENTS_PER_PROCESS)
    throw new InvalidArgumentError(`--per-process must be between 1 and ${MAX_AGENTS_PER_PROCESS}, got ${k}`)
}

/** Checks everything a swarm needs before anything starts, so a bad option leaves nothing behind. */
function checkOptions(o: SwarmUpOptions, dir: string): void {
  if (o.perProcess != null) checkPerProcess(o.perProcess)
  if (!Number.isSafeInteger(o.n) || o.n < 1 || o.n > 1024) throw new InvalidArgumentError('-n must be between 1 and 1024')
  if (o.goal != null && o.goal.trim() === '') throw new InvalidArgumentError('--goal is empty: say what the swarm is to build')
  if (o.goal != null && (o.testCommand ?? '').trim() === '')
    throw new InvalidArgumentError(
      '--goal needs --test "<command>": the command whose passing tests mean the goal is met (e.g. --test "npm test")'
    )
  if (o.goal != null && o.example != null) throw new InvalidArgumentError('give --goal or --example, not both')
  // A harness that is not installed fails here, once, instead of in every daemon.
  const ctx = {
    agentId: 'check',
    agentName: 'check',
    workspace: dir,
    dataDir: dir,
    agencyAddr: 'unix:/check',
    prompt: 'check',
    agencyBin: 'agency'
  }
  checkLaunchCommand(isAcpHarness(o.harness) ? acpAgentLaunch(o.harness, ctx).launch : harnessLaunch(o.harness, ctx))
}

/**
 * How many agents one agentd process hosts when a swarm of n starts on this
 * machine: enough processes to use every core, and none past 32 agents (one
 * event loop serves them all; docs/many-agents.md).
 */
export function agentsPerProcess(n: number, cores = availableParallelism()): number {
  const processes = Math.min(n, Math.max(cores, Math.ceil(n / 32)))
  return Math.ceil(n / processes)
}

export interface SwarmStartOptions {
  n: number
  /** agents per agentd process (default: agentsPerProcess(n)) */
  perProcess?: number
  /** where the swarm lives and what it works on; the daemons are added to it as they start */
  state: SwarmState
  /** the agents' harness; '' starts the daemons without one (benchmarks) */
  harness: string
  swarm: string
  /** more agentd flags */
  agentdArgs?: string[]
  /** the dashboard's address, served by the first daemon */
  ui?: string
  progress: (line: string) => void
}

/**
 * Starts the swarm's N agents in agentd processes of up to `perProcess` agents
 * each (detached, so they outlive this process), on the state's shared
 * repository and branch, every process wired to the first agent, and records
 * each agent in <dir>/swarm.json as its process starts, so that
 * `swarmDown(dir)` stops them all, also when a later one fails to start (the
 * caller calls it then). Agent k lives in <dir>/agent-k, as with one process
 * per agent.
 */
export async function startSwarmHosts(o: SwarmStartOptions): Promise<LocalHost[]> {
  const { dir, repo, branch } = o.state
  const perProcess = o.perProcess ?? agentsPerProcess(o.n)
  checkPerProcess(perProcess)
  const hosts: LocalHost[] = []
  const save = async (): Promise<void> => {
    await writeFile(join(dir, STATE_FILE), JSON.stringify(o.state, null, 2))
  }
  await mkdir(dir, { recursive: true })
  const startHost = async (h: number, peers: string[]): Promise<LocalHost> => {
    const first = (h - 1) * perProcess + 1
    const agents = Math.min(perProcess, o.n - first + 1)
    const host = await startLocalHost({
      dataDir: dir,
      agents,
      firstAgent: first,
      detached: true,
      outFile: join(dir, `host-${h}.out`),
      peers,
      logFile: join(dir, `host-${h}.log`),
      startTimeoutMs: 30_000 + agents * 2_000,
      extraArgs: [
        '--swarm',
        o.swarm,
        '--repo',
        repo,
        '--branch',
        branch,
        ...(o.harness !== '' ? ['--harness', o.harness] : []),
        '--metrics',
        '127.0.0.1:0',
        '--mirror-dir',
        join(dir, 'mirrors'),
        ...(o.agentdArgs ?? []),
        // One dashboard shows the whole swarm: the first agent serves it.
        ...(h === 1 && o.ui != null ? ['--ui', o.ui] : [])
      ]
    })
    hosts[h - 1] = host
    for (const d of host.agents) {
      o.state.daemons.push({ name: d.name, pid: host.child.pid as number, grpc: d.grpc, dataDir: d.dataDir, metrics: d.metrics, ui: d.ui })
    }
    o.state.daemons.sort((a, b) => agentOrder(a.name) - agentOrder(b.name))
    await save()
    o.progress(
      `started ${host.agents.length === 1 ? host.agents[0].name : `${host.agents[0].name} .. ${host.agents[host.agents.length - 1].name}`} in process ${host.child.pid as number}`
    )
    for (const d of host.agents) if (d.ui != null) o.progress(`dashboard ${d.ui}`)
    return host
  }
  // The first process, then the others at once, each bootstrapping from the first agent.
  const first = await startHost(1, [])
  const count = Math.ceil(o.n / perProcess)
  const rest = await Promise.allSettled(Array.from({ length: count - 1 }, async (_, i) => await startHost(i + 2, first.agents[0].addrs)))
  const failed = rest.find((r): r is PromiseRejectedResult => r.status === 'rejected')
  if (failed != null) throw failed.reason
  return hosts
}

/** agent-12 -> 12, for listing a swarm's agents in their order. */
function agentOrder(name: string): number {
  return Number(/(\d+)$/.exec(name)?.[1] ?? 0)
}

/** The agents of a swarm, each with its process: what startSwarmHosts started. */
export async function startSwarmDaemons(o: SwarmStartOptions): Promise<LocalDaemon[]> {
  return (await startSwarmHosts(o)).flatMap(h => h.agents)
}

/** Restarts of one host process at most, so a process that cannot start (its disk full, say) is not started for ever. */
const MAX_HOST_RESTARTS = 5

/**
 * A host process of the swarm that crashed (a signal other than a stop, a
 * non-zero exit: the OOM killer, a fatal disk error) is started again on the
 * same data dirs: its agents come back with their identities and everything
 * they acknowledged. A process stopped on purpose (SIGTERM, SIGINT, exit 0:
 * `agency swarm down`) is left down, and so is every process once the state
 * file is gone.
 */
async function restartCrashedHosts(
  hosts: LocalHost[],
  restarts: number[],
  state: SwarmState,
  progress: (line: string) => void
): Promise<void> {
  for (const [i, host] of hosts.entries()) {
    const { exitCode, signalCode } = host.child
    if (exitCode == null && signalCode == null) continue
    if (exitCode === 0 || signalCode === 'SIGTERM' || signalCode === 'SIGINT') continue
    if ((restarts[i] ?? 0) >= MAX_HOST_RESTARTS || !existsSync(join(state.dir, STATE_FILE))) continue
    restarts[i] = (restarts[i] ?? 0) + 1
    const h = i + 1
    const names = host.agents.map(a => a.name).join(', ')
    const again = await restartLocalHost(host, {
      dataDir: state.dir,
      detached: true,
      outFile: join(state.dir, `host-${h}.out`),
      logFile: join(state.dir, `host-${h}.log`),
      startTimeoutMs: 30_000 + host.agents.length * 2_000
    })
    hosts[i] = again
    for (const d of again.agents) {
      const entry = state.daemons.find(e => e.dataDir === d.dataDir)
      if (entry != null) Object.assign(entry, { pid: again.child.pid as number, grpc: d.grpc, metrics: d.metrics, ui: d.ui })
    }
    await writeFile(join(state.dir, STATE_FILE), JSON.stringify(state, null, 2))
    progress(
      `the process of ${names} ended (${signalCode ?? `exit code ${String(exitCode)}`}); started again (${restarts[i]} of ${MAX_HOST_RESTARTS}): ${again.agents.length} agents back`
    )
  }
}

export async function swarmUp(o: SwarmUpOptions): Promise<{ state: SwarmState; finished: boolean }> {
  const dir = resolve(o.dir)
  checkOptions(o, dir)
  if (existsSync(join(dir, STATE_FILE)))
    throw new FailedPreconditionError(`a swarm is already up in ${dir}: run \`agency swarm down --dir ${o.dir}\` first`)
  const example = o.example != null ? await loadExample(o.example) : undefined
  // The first directory this call creates (undefined if dir was there): removed whole on a refusal.
  const created = await mkdir(dir, { recursive: true })
  let shared: SharedRepo
  try {
    if (o.repo != null) {
      shared = await sharedRepoFor(o.repo, dir, o.branch)
    } else {
      if (example == null)
        throw new InvalidArgumentError('no repository: give --repo <your repository> (with --goal and --test), or --example <name>')
      shared = { remote: join(dir, 'repo.git'), branch: 'main' }
      if (!existsSync(shared.remote)) await seedBareRepo(example, shared.remote)
    }
  } catch (err) {
    if (created != null) await rm(created, { recursive: true, force: true })
    throw err
  }
  const repo = shared.remote
  const state: SwarmState = { dir, repo, branch: shared.branch, source: shared.source, daemons: [] }
  // What export needs, kept after swarm down (which removes the state file).
  await writeFile(join(dir, REPO_FILE), JSON.stringify({ name: o.swarm, repo, branch: shared.branch, source: shared.source }, null, 2))
  const clients: Agency[] = []
  try {
    const hosts = await startSwarmHosts({
      n: o.n,
      state,
      harness: o.harness,
      swarm: o.swarm,
      agentdArgs: o.agentdArgs,
      ui: o.ui,
      perProcess: o.perProcess,
      progress: o.progress
    })
    // The first agent's API is a unix socket in its data dir: the same address after a restart.
    const first = connectAgency(hosts[0].agents[0].grpc)
    const restarts: number[] = []
    clients.push(first)
    if (example != null) {
      await putProjectOnBoard(first, example, o.setGoal)
      o.progress(`goal and ${example.tasks.length} tasks of the ${example.name} example are on the board`)
    } else {
      const { goal } = await first.call((c: AgencyClient) => c.getGoal, {})
      if (o.goal != null && goal?.text !== o.goal) {
        await (o.setGoal ?? memberGoal)(first, { text: o.goal, files: [], testCommand: o.testCommand ?? '' })
        o.progress('the goal is on the board; the first agent to claim the plan task turns it into tasks')
      } else if (goal == null) {
        throw new InvalidArgumentError('the board has no goal: give --goal "<what to build>" --test "<command>"')
      }
    }
    const started = Date.now()
    let last = ''
    let failures = 0
    while (true) {
      let s: StatusReply
      let info: LogInfoReply
      try {
        await restartCrashedHosts(hosts, restarts, state, o.progress)
        s = await first.call((c: AgencyClient) => c.getStatus, {}, 20_000)
        info = await first.call((c: AgencyClient) => c.logInfo, {}, 20_000)
        failures = 0
      } catch (err) {
        // A busy machine can make one status call time out: the swarm is not
        // torn down for that, only when the first daemon stays unreachable.
        if (++failures >= 10) throw err
        await new Promise(resolve => setTimeout(resolve, 1000))
        continue
      }
      const p = progressOf(s, info.byKind.integration ?? 0, info.byKind.finding ?? 0)
      const line = progressLine(p, (Date.now() - started) / 1000)
      if (line.replace(/\| \d+s$/, '') !== last.replace(/\| \d+s$/, '')) {
        o.progress(line)
        last = line
      }
      const finished = p.goalMet
      if (finished) {
        if (o.downWhenDone) await swarmDown(dir)
        return { state, finished: true }
      }
      if (o.timeoutMs > 0 && Date.now() - started > o.timeoutMs) {
        if (o.downWhenDone) await swarmDown(dir)
        return { state, finished: false }
      }
      await new Promise(resolve => setTimeout(resolve, 500))
    }
  } catch (err) {
    await swarmDown(dir).catch(() => {})
    throw err
  } finally {
    for (const c of clients) c.close()
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** True while pid is still an agentd this swarm started in its dir: pids of dead daemons get reused. */
function isSwarmDaemon(pid: number, dir: string): boolean {
  if (!alive(pid)) return false
  let args: string
  try {
    args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ')
  } catch {
    try {
      args = execFileSync('ps', ['-ww', '-o', 'args=', '-p', String(pid)], { encoding: 'utf8' })
    } catch {
      return false
    }
  }
  return args.includes('agentd') && args.includes(dir)
}

/** Stops every daemon of the swarm in `dir` (SIGTERM, then SIGKILL after a grace period). */
export async function swarmDown(dirArg: string, graceMs = 15_000): Promise<number> {
  const dir = resolve(dirArg)
  const file = join(dir, STATE_FILE)
  if (!existsSync(file)) throw new FailedPreconditionError(`no swarm is up in ${dir}`)
  const state = JSON.parse(await readFile(file, 'utf8')) as SwarmState
  // Agents hosted by one process share its pid; processes started from an older state file name an agent's dir, which is inside the
  // swarm's.
  const ours = [...new Map(state.daemons.map(d => [d.pid, d])).values()].filter(d => isSwarmDaemon(d.pid, dir))
  for (const d of ours) process.kill(d.pid, 'SIGTERM')
  const deadline = Date.now() + graceMs
  while (ours.some(d => alive(d.pid)) && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 100))
  for (const d of ours) if (isSwarmDaemon(d.pid, dir)) process.kill(d.pid, 'SIGKILL')
  await rm(file, { force: true })
  return state.daemons.length
}
