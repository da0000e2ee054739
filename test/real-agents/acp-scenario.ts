// The swarm around an ACP session, for the real ACP agent tests: the greeter
// project with its goal and one task, the agent's daemon (A) running
// `--harness acp:<agent>`, and a real peer daemon (B) that takes the task from
// A mid-turn and then writes to A. Only the model behind the agent is scripted.
//
// How B takes the claim without any trick: B learns the board from A, goes
// offline, and claims `greet` while it cannot see A; A (which has appended one
// more entry meanwhile, so its claim's lamport is higher) claims it too once its
// agent starts. When B comes online the two claims meet: B's smaller
// (lamport, author) wins, and A's daemon tells A its claim is lost (outbid), as
// after a healed partition. B then sends A a direct message and releases the
// task, so A can take it again at the next epoch and finish it.
import { mkdir } from 'node:fs/promises'
import { delimiter, join } from 'node:path'
import { connectAgency, type Agency } from '../../src/api/client.js'
import type { AgencyClient, Event } from '../../src/gen/agency/v1/api.js'
import type { LocalDaemon } from '../../src/swarm/local-daemon.js'
import type { Scratch } from '../agents/helpers.js'
import { waitFor } from '../helpers/wait-for.js'
import { CLI_BIN_DIR, GREETER, seedSharedRepo } from './greeter-scenario.js'

export interface AcpScenario {
  repo: string
  home: string
  /** The agent's daemon, running the ACP harness. */
  a: LocalDaemon
  /** B's data dir; B is offline (stopped) until peerOnline(). */
  peerOnline: () => Promise<LocalDaemon>
  /** Everything A's WatchEvents stream said since it started. */
  events: Event[]
  api: (d: LocalDaemon) => Agency
  /** The text of A's /metrics. */
  metrics: () => Promise<string>
  /** Closes the API clients (the daemons are the Scratch's). */
  close: () => void
}

/** A message from B that the test looks for in what reaches the model. */
export const PEER_MESSAGE = 'I took greet while we could not see each other; I am releasing it now, it is yours again. -- B'

export async function startAcpScenario (scratch: Scratch, o: { name: string, harness: string, setup: (home: string) => Promise<Record<string, string>> }): Promise<AcpScenario> {
  const dir = await scratch.dir(`agency-${o.name}-`)
  const repo = await seedSharedRepo(dir)
  const home = join(dir, 'home')
  await mkdir(home, { recursive: true })
  const env = {
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    PATH: [CLI_BIN_DIR, process.env.PATH].filter(p => p != null && p !== '').join(delimiter),
    ...(await o.setup(home))
  }
  const dataA = join(dir, 'a')
  const dataB = join(dir, 'b')
  const common = ['--repo', repo, '--mirror-dir', join(dir, 'mirrors'), '--settle-ms', '300']
  const clients: Agency[] = []
  const api = (d: LocalDaemon): Agency => { const c = connectAgency(d.grpc); clients.push(c); return c }
  const call = async <T>(d: LocalDaemon, f: (c: AgencyClient) => (req: any, ...rest: any[]) => unknown, req: unknown): Promise<T> => {
    const c = connectAgency(d.grpc)
    try { return await c.call(f as any, req as any) as T } finally { c.close() }
  }

  // ---- the board, on A; B learns it, then both stop ----
  const seedA = await scratch.daemon(`${o.name}-a-seed`, { dataDir: dataA, logFile: join(dir, 'a-seed.log'), env, extraArgs: common })
  await call(seedA, c => c.setGoal, { text: GREETER.goal, files: [], testCommand: GREETER.testCommand })
  const t = GREETER.task
  await call(seedA, c => c.addTask, { id: t.id, title: t.title, description: t.description, deps: [], scope: t.scope, priority: 0 })
  const seedB = await scratch.daemon(`${o.name}-b-seed`, { dataDir: dataB, logFile: join(dir, 'b-seed.log'), peers: seedA.addrs, extraArgs: ['--settle-ms', '300'] })
  await waitFor(async () => (await call<{ task?: { id: string } }>(seedB, c => c.getTask, { id: t.id })).task?.id === t.id, { timeoutMs: 60_000, what: 'B to learn the board from A' })
  if (await seedB.stop('SIGTERM') !== 0) throw new Error('B did not stop cleanly')
  // One more entry on A that B never sees: A's claim will come after it, so B's earlier claim wins.
  await call(seedA, c => c.recordFinding, { kind: 'note', text: 'the greeter\'s test is test/greet.test.js', paths: [], tags: [], refs: [], supersedes: '' })
  if (await seedA.stop('SIGTERM') !== 0) throw new Error('A did not stop cleanly')

  // ---- B, offline, claims greet ----
  const offlineB = await scratch.daemon(`${o.name}-b-offline`, { dataDir: dataB, logFile: join(dir, 'b-offline.log'), extraArgs: ['--settle-ms', '300'] })
  const claimed = await call<{ outcome: number }>(offlineB, c => c.claim, { task: t.id, scope: t.scope, noWait: false })
  if (claimed.outcome !== 1) throw new Error(`B's offline claim was not HELD: ${JSON.stringify(claimed)}`)
  if (await offlineB.stop('SIGTERM') !== 0) throw new Error('B did not stop cleanly')

  // ---- A with the ACP harness ----
  const a = await scratch.daemon(o.name, { dataDir: dataA, logFile: join(dir, 'a.log'), env, extraArgs: [...common, '--metrics', '127.0.0.1:0', '--harness', o.harness] })
  const events: Event[] = []
  const watcher = api(a)
  void (async () => {
    try { for await (const e of watcher.stream((c: AgencyClient, m) => c.watchEvents({}, m))) events.push(e) } catch { /* closed at the end */ }
  })()

  return {
    repo,
    home,
    a,
    events,
    api,
    peerOnline: async () => await scratch.daemon(`${o.name}-b`, { dataDir: dataB, logFile: join(dir, 'b.log'), peers: a.addrs, extraArgs: ['--settle-ms', '300'] }),
    metrics: async () => await (await fetch(`http://${a.metrics ?? ''}/metrics`)).text(),
    close: () => { for (const c of clients.splice(0)) c.close() }
  }
}

/** A promise with its resolve, for holding the scripted model at a step. */
export function gate<T = void> (): { promise: Promise<T>, open: (v: T) => void, opened: () => boolean } {
  let open!: (v: T) => void
  let done = false
  const promise = new Promise<T>(resolve => { open = v => { done = true; resolve(v) } })
  return { promise, open, opened: () => done }
}

/** A metric's value in a /metrics text, by its name and labels as written (e.g. 'agentd_harness_turns_total{stop_reason="cancelled"}'). */
export function metric (text: string, series: string): number {
  const line = text.split('\n').find(l => l.startsWith(`${series} `))
  return line == null ? Number.NaN : Number(line.slice(series.length + 1))
}
