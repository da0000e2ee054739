// `agency swarm up|down`: N local agentd processes wired to each other, each
// with a harness, working one shared repository; the goal and tasks of an
// example project put on the board; a live progress view.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { existsSync, readFileSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { homedir } from 'node:os'
import { basename, join, resolve } from 'node:path'
import { sharedRepoFor, type SharedRepo } from './shared-repo.js'
import { harnessLaunch } from '../harness/index.js'
import { acpAgentLaunch, isAcpHarness } from '../harness/acp/acp-agents.js'
import { checkLaunchCommand } from '../harness/command-check.js'
import { startLocalDaemon, type LocalDaemon } from './local-daemon.js'
import { loadExample, seedBareRepo, type ExampleProject } from './example-project.js'
import { connectAgency, type Agency } from '../api/client.js'
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
  progress: (line: string) => void
}

export interface SwarmState {
  dir: string
  repo: string
  branch: string
  /** the user's working repository the swarm was seeded from */
  source?: string
  daemons: Array<{ name: string, pid: number, grpc: string, dataDir: string, metrics?: string, ui?: string }>
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
export function defaultSwarmDir (name: string): string {
  return join(homedir(), '.agency', 'swarms', name)
}

/** A swarm name from a repository path or URL: its last component, as a slug. */
/** A repository URL (scheme://... or scp-like user@host:path) rather than a local path. */
function isRepoUrl (repo: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(repo) || /^[^/\\:]+@[^/\\:]+:/.test(repo)
}

/** The swarm's name from its repository: the directory's or URL's last part (`--repo .` names the current directory). */
export function swarmNameFor (repo: string | undefined, fallback: string): string {
  if (repo == null) return fallback
  const path = isRepoUrl(repo) ? repo : resolve(repo)
  const base = basename(path.replace(/[/\\]+$/, '')).replace(/\.git$/, '').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '')
  return base !== '' ? base : fallback
}

export function progressOf (s: StatusReply, integrations: number, findings: number): Progress & { goalMet: boolean } {
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

export function progressLine (p: Progress, seconds: number): string {
  const bar = '#'.repeat(Math.round(p.passRate * 20)).padEnd(20, '.')
  return `[${bar}] ${String(Math.round(p.passRate * 100)).padStart(3)}% pass | tasks ${p.done}/${p.total} done | ${p.peers} agents live | ${p.integrations} integrations | ${p.findings} findings | ${Math.round(seconds)}s`
}

/** An example's tasks as a plan for AddTasks. */
export function exampleTasks (example: ExampleProject): AddTaskRequest[] {
  return example.tasks.map(t => ({ id: t.id, title: t.title, description: `Write ${t.file}; tests/${t.id}.test.mjs must pass.`, deps: t.deps, scope: t.scope, priority: t.priority }))
}

async function putProjectOnBoard (agency: Agency, example: ExampleProject): Promise<void> {
  // The tasks first: a goal on an empty board would show the plan task, and the example is planned already.
  // One plan: the example lists tasks before their dependencies; tasks already on the board are kept.
  await agency.call((c: AgencyClient) => c.addTasks, { tasks: exampleTasks(example) })
  const goal = await agency.call((c: AgencyClient) => c.getGoal, {})
  if (goal.goal == null) await agency.call((c: AgencyClient) => c.setGoal, { text: example.goal, files: ['README.md'], testCommand: example.testCommand })
}

/** Checks everything a swarm needs before anything starts, so a bad option leaves nothing behind. */
function checkOptions (o: SwarmUpOptions, dir: string): void {
  if (!Number.isSafeInteger(o.n) || o.n < 1 || o.n > 1024) throw new InvalidArgumentError('-n must be between 1 and 1024')
  if (o.goal != null && o.goal.trim() === '') throw new InvalidArgumentError('--goal is empty: say what the swarm is to build')
  if (o.goal != null && (o.testCommand ?? '').trim() === '') throw new InvalidArgumentError('--goal needs --test "<command>": the command whose passing tests mean the goal is met (e.g. --test "npm test")')
  if (o.goal != null && o.example != null) throw new InvalidArgumentError('give --goal or --example, not both')
  // A harness that is not installed fails here, once, instead of in every daemon.
  const ctx = { agentId: 'check', agentName: 'check', workspace: dir, dataDir: dir, agencyAddr: 'unix:/check', prompt: 'check', agencyBin: 'agency' }
  checkLaunchCommand(isAcpHarness(o.harness) ? acpAgentLaunch(o.harness, ctx).launch : harnessLaunch(o.harness, ctx))
}

export interface SwarmStartOptions {
  n: number
  /** where the swarm lives and what it works on; the daemons are added to it as they start */
  state: SwarmState
  harness: string
  swarm: string
  /** more agentd flags */
  agentdArgs?: string[]
  /** the dashboard's address, served by the first daemon */
  ui?: string
  progress: (line: string) => void
}

/**
 * Starts N agentd processes (detached, so they outlive this process) on the
 * state's shared repository and branch, wired to the first one, and records
 * each in <dir>/swarm.json as it starts, so that `swarmDown(dir)` stops them
 * all, also when a later one fails to start (the caller calls it then).
 */
export async function startSwarmDaemons (o: SwarmStartOptions): Promise<LocalDaemon[]> {
  const { dir, repo, branch } = o.state
  const daemons: LocalDaemon[] = []
  const save = async (): Promise<void> => { await writeFile(join(dir, STATE_FILE), JSON.stringify(o.state, null, 2)) }
  await mkdir(dir, { recursive: true })
  for (let i = 1; i <= o.n; i++) {
    const name = `agent-${i}`
    const dataDir = join(dir, name)
    const d = await startLocalDaemon({
      name,
      dataDir,
      detached: true,
      peers: daemons.length > 0 ? daemons[0].addrs : [],
      logFile: join(dir, `${name}.log`),
      extraArgs: ['--swarm', o.swarm, '--repo', repo, '--branch', branch, '--harness', o.harness, '--metrics', '127.0.0.1:0', '--mirror-dir', join(dir, 'mirrors'), ...(o.agentdArgs ?? []),
        // One dashboard shows the whole swarm: the first daemon serves it.
        ...(i === 1 && o.ui != null ? ['--ui', o.ui] : [])]
    })
    daemons.push(d)
    o.state.daemons.push({ name, pid: d.child.pid as number, grpc: d.grpc, dataDir, metrics: d.metrics, ui: d.ui })
    await save()
    o.progress(`started ${name} (${d.peerId.slice(-8)}) gRPC ${d.grpc}`)
    if (d.ui != null) o.progress(`dashboard ${d.ui}`)
  }
  return daemons
}

export async function swarmUp (o: SwarmUpOptions): Promise<{ state: SwarmState, finished: boolean }> {
  const dir = resolve(o.dir)
  checkOptions(o, dir)
  if (existsSync(join(dir, STATE_FILE))) throw new FailedPreconditionError(`a swarm is already up in ${dir}: run \`agency swarm down --dir ${o.dir}\` first`)
  const example = o.example != null ? await loadExample(o.example) : undefined
  // The first directory this call creates (undefined if dir was there): removed whole on a refusal.
  const created = await mkdir(dir, { recursive: true })
  let shared: SharedRepo
  try {
    if (o.repo != null) {
      shared = await sharedRepoFor(o.repo, dir, o.branch)
    } else {
      if (example == null) throw new InvalidArgumentError('no repository: give --repo <your repository> (with --goal and --test), or --example <name>')
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
    const daemons = await startSwarmDaemons({ n: o.n, state, harness: o.harness, swarm: o.swarm, agentdArgs: o.agentdArgs, ui: o.ui, progress: o.progress })
    const first = connectAgency(daemons[0].grpc)
    clients.push(first)
    if (example != null) {
      await putProjectOnBoard(first, example)
      o.progress(`goal and ${example.tasks.length} tasks of the ${example.name} example are on the board`)
    } else {
      const { goal } = await first.call((c: AgencyClient) => c.getGoal, {})
      if (o.goal != null && goal?.text !== o.goal) {
        await first.call((c: AgencyClient) => c.setGoal, { text: o.goal, files: [], testCommand: o.testCommand ?? '' })
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
      if (line.replace(/\| \d+s$/, '') !== last.replace(/\| \d+s$/, '')) { o.progress(line); last = line }
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

function alive (pid: number): boolean {
  try { process.kill(pid, 0); return true } catch { return false }
}

/** True while pid is still the agentd this swarm started on dataDir: pids of dead daemons get reused. */
function isSwarmDaemon (pid: number, dataDir: string): boolean {
  if (!alive(pid)) return false
  let args: string
  try {
    args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ')
  } catch {
    try { args = execFileSync('ps', ['-ww', '-o', 'args=', '-p', String(pid)], { encoding: 'utf8' }) } catch { return false }
  }
  return args.includes('agentd') && args.includes(dataDir)
}

/** Stops every daemon of the swarm in `dir` (SIGTERM, then SIGKILL after a grace period). */
export async function swarmDown (dirArg: string, graceMs = 15_000): Promise<number> {
  const dir = resolve(dirArg)
  const file = join(dir, STATE_FILE)
  if (!existsSync(file)) throw new FailedPreconditionError(`no swarm is up in ${dir}`)
  const state = JSON.parse(await readFile(file, 'utf8')) as SwarmState
  const ours = state.daemons.filter(d => isSwarmDaemon(d.pid, d.dataDir))
  for (const d of ours) process.kill(d.pid, 'SIGTERM')
  const deadline = Date.now() + graceMs
  while (ours.some(d => alive(d.pid)) && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 100))
  for (const d of ours) if (isSwarmDaemon(d.pid, d.dataDir)) process.kill(d.pid, 'SIGKILL')
  await rm(file, { force: true })
  return state.daemons.length
}
