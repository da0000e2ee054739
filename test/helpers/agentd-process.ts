// Real `agentd` and `agency` processes for the multi-process tests: each
// daemon gets a temp data dir, random ports on 127.0.0.1 and a short
// heartbeat. Everything started through a ProcessCluster is killed, and its
// temp dirs removed, by `cleanup()` (call it in afterAll), even after a failure.
import { spawn, execFile, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { connectAgency, type Agency } from '../../src/client/agency.js'
import type { AgencyClient, InboxMessage, PeerInfo, StatusReply } from '../../src/gen/agency/v1/api.js'
import { envWithoutAgency } from './agency-free-env.js'

const REPO = fileURLToPath(new URL('../../', import.meta.url))
export const AGENTD_BIN = join(REPO, 'dist/src/cli/agentd.js')
export const AGENCY_BIN = join(REPO, 'dist/src/cli/agency.js')

/**
 * Generous limits for a busy machine: a test waits for outcomes, never for speed.
 * Process-based tests should also give each test PROCESS_TEST_TIMEOUT_MS.
 */
export const PROCESS_TEST_TIMEOUT_MS = 150_000
/** How long a daemon may take to print `ready` (two busy cores in CI). */
const READY_TIMEOUT_MS = 60_000
/** How long one `agency` command may take. */
const AGENCY_TIMEOUT_MS = 60_000
/** Kept of each daemon's stderr, to explain a failure. */
const STDERR_TAIL_CHARS = 8000

function assertBuilt(): void {
  if (!existsSync(AGENTD_BIN) || !existsSync(AGENCY_BIN)) {
    throw new Error(`${AGENTD_BIN} is missing: build first (npx tsc -p .)`)
  }
}

/** The environment for a child: no AGENCY_* settings from the caller, logs on for diagnosis. */
function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...envWithoutAgency(), AGENCY_LOG_LEVEL: 'info', ...extra }
}

export interface AgentdOptions {
  name?: string
  /** libp2p listen multiaddr (default /ip4/127.0.0.1/tcp/0); a fixed port keeps the address across restarts */
  listen?: string
  /** bootstrap multiaddrs */
  peers?: string[]
  /** serve /metrics on a random port */
  metrics?: boolean
  heartbeatMs?: number
  liveTimeoutMs?: number
  /** the gRPC address; default 127.0.0.1:0; null: agentd's own default (a unix socket in the data dir) */
  grpc?: string | null
  /** more flags, appended as given */
  extraArgs?: string[]
}

export interface Exit {
  code: number | null
  signal: NodeJS.Signals | null
}

/** What `agentd` printed on stdout before `ready`. */
interface Banner {
  peerId: string
  name: string
  listenAddrs: string[]
  grpc: string
  metricsUrl?: string
}

/** Picks up what one line of agentd's start-up output says. */
function readBannerLine(line: string, banner: Partial<Banner> & { listenAddrs: string[] }): void {
  let m: RegExpExecArray | null
  if ((m = /^agentd \S+ peer (\S+) \((.*)\) swarm \S+$/.exec(line)) != null) {
    banner.peerId = m[1]
    banner.name = m[2]
  } else if ((m = /^listening (\S+)$/.exec(line)) != null) {
    banner.listenAddrs.push(m[1])
  } else if ((m = /^grpc (\S+)$/.exec(line)) != null) {
    banner.grpc = m[1]
  } else if ((m = /^metrics (\S+)$/.exec(line)) != null) {
    banner.metricsUrl = m[1]
  }
}

/** One agentd process; `restart()` starts it again on the same data dir. */
export class AgentdProcess {
  readonly dataDir: string
  readonly options: AgentdOptions
  private child?: ChildProcess
  private exited?: Promise<Exit>
  private banner?: Banner
  private stderrTail = ''
  private client?: Agency

  constructor(dataDir: string, options: AgentdOptions) {
    this.dataDir = dataDir
    this.options = options
  }

  get peerId(): string {
    return this.started().peerId
  }
  get name(): string {
    return this.started().name
  }
  /** the first listen multiaddr, with /p2p/<peer id> */
  get listenAddr(): string {
    return this.started().listenAddrs[0]
  }
  get grpcAddr(): string {
    return this.started().grpc
  }
  get metricsUrl(): string {
    const url = this.started().metricsUrl
    if (url == null) throw new Error('this agentd was started without --metrics')
    return url
  }

  get running(): boolean {
    return this.child != null && this.child.exitCode == null && this.child.signalCode == null
  }
  get pid(): number | undefined {
    return this.child?.pid
  }
  /** the end of what the daemon wrote on stderr (its logs) */
  get stderr(): string {
    return this.stderrTail
  }

  private started(): Banner {
    if (this.banner == null) throw new Error('agentd has not printed ready yet')
    return this.banner
  }

  args(): string[] {
    const o = this.options
    const args = [
      '--data-dir',
      this.dataDir,
      '--listen',
      o.listen ?? '/ip4/127.0.0.1/tcp/0',
      ...(o.grpc === null ? [] : ['--grpc', o.grpc ?? '127.0.0.1:0']),
      '--heartbeat-ms',
      String(o.heartbeatMs ?? 400),
      '--live-timeout-ms',
      String(o.liveTimeoutMs ?? 4000)
    ]
    if (o.name != null) args.push('--name', o.name)
    if (o.peers != null && o.peers.length > 0) args.push('--peers', o.peers.join(','))
    if (o.metrics === true) args.push('--metrics', '127.0.0.1:0')
    return [...args, ...(o.extraArgs ?? [])]
  }

  /** Spawns agentd and waits for `ready`; rejects, with its stderr, if it exits first. */
  async start(): Promise<void> {
    if (this.running) throw new Error('agentd is already running')
    assertBuilt()
    this.banner = undefined
    const child = spawn(process.execPath, [AGENTD_BIN, ...this.args()], { stdio: ['ignore', 'pipe', 'pipe'], env: childEnv() })
    this.child = child
    // 'close', not 'exit': by then all of stdout and stderr has been read.
    this.exited = new Promise(resolve => {
      child.once('close', (code, signal) => {
        resolve({ code, signal })
      })
    })
    child.stderr?.setEncoding('utf8')
    child.stderr?.on('data', (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_TAIL_CHARS)
    })
    const lines = createInterface({ input: child.stdout })
    const banner: Partial<Banner> & { listenAddrs: string[] } = { listenAddrs: [] }
    const ready = new Promise<Banner>((resolve, reject) => {
      lines.on('line', line => {
        if (line !== 'ready') {
          readBannerLine(line, banner)
          return
        }
        if (banner.peerId == null || banner.grpc == null || banner.listenAddrs.length === 0)
          reject(new Error(`agentd printed ready without its addresses: ${JSON.stringify(banner)}`))
        else resolve(banner as Banner)
      })
      void this.exited!.then(exit => {
        reject(new Error(`agentd exited (${exit.code ?? exit.signal}) before ready:\n${this.stderrTail}`))
      })
      setTimeout(() => {
        reject(new Error(`agentd not ready after ${READY_TIMEOUT_MS} ms:\n${this.stderrTail}`))
      }, READY_TIMEOUT_MS).unref()
    })
    try {
      this.banner = await ready
    } catch (err) {
      child.kill('SIGKILL')
      await this.exited
      throw err
    }
  }

  /** A gRPC client for this run of the daemon (cheaper than the CLI for polling). */
  get api(): Agency {
    this.client ??= connectAgency(this.grpcAddr)
    return this.client
  }

  async peers(): Promise<PeerInfo[]> {
    return (await this.api.call((c: AgencyClient) => c.listPeers, { includeOffline: true })).peers
  }

  async status(): Promise<StatusReply> {
    return await this.api.call((c: AgencyClient) => c.getStatus, {})
  }

  async inbox(): Promise<InboxMessage[]> {
    return (await this.api.call((c: AgencyClient) => c.readInbox, { after: 0, limit: 10_000, all: true, peek: false })).messages
  }

  /** Sends a signal and waits for the process to exit. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<Exit> {
    if (this.child == null || this.exited == null) throw new Error('agentd was never started')
    this.client?.close()
    this.client = undefined
    if (this.running) this.child.kill(signal)
    return await this.exited
  }

  /** SIGTERM, then waits for the exit; a clean shutdown exits 0. */
  async stop(): Promise<Exit> {
    return await this.kill('SIGTERM')
  }

  /** Starts again on the same data dir with the same flags (new ports). */
  async restart(): Promise<void> {
    if (this.running) throw new Error('stop or kill agentd before restarting it')
    await this.start()
  }

  /** Runs `agency <args> --addr <this daemon> --json` and parses its output. */
  async agency<T = any>(...args: string[]): Promise<T> {
    return await agencyJson<T>(this.grpcAddr, args)
  }

  /** The value of a metric without labels, from /metrics (NaN if absent). */
  async metric(name: string): Promise<number> {
    const res = await fetch(this.metricsUrl)
    if (!res.ok) throw new Error(`GET ${this.metricsUrl}: ${res.status}`)
    const text = await res.text()
    const line = text.split('\n').find(l => l.startsWith(`${name} `))
    return line == null ? NaN : Number(line.slice(name.length + 1))
  }
}

/** A TCP port on 127.0.0.1 that nothing listens on (just now). */
export async function unusedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise(resolve => server.close(resolve))
  return port
}

export interface CliResult {
  code: number | null
  stdout: string
  stderr: string
}

/** Runs the `agency` CLI; never rejects on a non-zero exit. */
export async function runAgency(args: string[]): Promise<CliResult> {
  assertBuilt()
  return await new Promise(resolve => {
    execFile(process.execPath, [AGENCY_BIN, ...args], { env: childEnv(), timeout: AGENCY_TIMEOUT_MS }, (err, stdout, stderr) => {
      const code = err == null ? 0 : typeof err.code === 'number' ? err.code : null
      resolve({ code, stdout, stderr })
    })
  })
}

/** Runs `agency <args> --addr <addr> --json`, and parses stdout; rejects with stderr on failure. */
export async function agencyJson<T = any>(addr: string, args: string[]): Promise<T> {
  const res = await runAgency([...args, '--addr', addr, '--json'])
  if (res.code !== 0) throw new Error(`agency ${args.join(' ')} exited ${res.code}: ${res.stderr.trim()}`)
  try {
    return JSON.parse(res.stdout) as T
  } catch {
    throw new Error(`agency ${args.join(' ')} printed no JSON: ${res.stdout}`)
  }
}

/** A long-running `agency ... --json` (events --follow, inbox --follow) whose output lines are collected. */
export class AgencyFollower<T = any> {
  readonly lines: T[] = []
  readonly child: ChildProcess
  private stderrText = ''

  constructor(addr: string, args: string[]) {
    assertBuilt()
    this.child = spawn(process.execPath, [AGENCY_BIN, ...args, '--addr', addr, '--json'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: childEnv()
    })
    this.child.stderr?.setEncoding('utf8')
    this.child.stderr?.on('data', (chunk: string) => {
      this.stderrText += chunk
    })
    createInterface({ input: this.child.stdout! }).on('line', line => {
      if (line.trim() === '') return
      try {
        this.lines.push(JSON.parse(line) as T)
      } catch {
        this.stderrText += `(not JSON on stdout) ${line}\n`
      }
    })
  }

  get stderr(): string {
    return this.stderrText
  }

  async stop(): Promise<void> {
    if (this.child.exitCode != null || this.child.signalCode != null) return
    const exited = new Promise(resolve => {
      this.child.once('exit', resolve)
    })
    this.child.kill('SIGKILL')
    await exited
  }
}

/**
 * The daemons and followers of one test file. `cleanup()` kills whatever still
 * runs and removes the temp dirs; a process exit handler kills stragglers if
 * the worker dies first.
 */
export class ProcessCluster {
  readonly daemons: AgentdProcess[] = []
  readonly followers: AgencyFollower[] = []
  private readonly dirs: string[] = []
  private readonly onExit = (): void => {
    for (const d of this.daemons)
      if (d.running && d.pid != null) {
        try {
          process.kill(d.pid, 'SIGKILL')
        } catch {
          /* gone */
        }
      }
    for (const f of this.followers) f.child.kill('SIGKILL')
  }

  constructor() {
    process.once('exit', this.onExit)
  }

  async tempDir(prefix = 'agency-agentd-'): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), prefix))
    this.dirs.push(dir)
    return dir
  }

  /** A new daemon on a fresh temp data dir, started and ready. */
  async start(options: AgentdOptions = {}): Promise<AgentdProcess> {
    const d = new AgentdProcess(await this.tempDir(), options)
    this.daemons.push(d)
    await d.start()
    return d
  }

  /** A second daemon on an existing data dir (not started). */
  onDataDir(dataDir: string, options: AgentdOptions = {}): AgentdProcess {
    const d = new AgentdProcess(dataDir, options)
    this.daemons.push(d)
    return d
  }

  follow<T = any>(addr: string, args: string[]): AgencyFollower<T> {
    const f = new AgencyFollower<T>(addr, args)
    this.followers.push(f)
    return f
  }

  async cleanup(): Promise<void> {
    await Promise.all(
      this.followers.map(async f => {
        await f.stop()
      })
    )
    await Promise.all(
      this.daemons.map(async d => {
        if (d.running) await d.kill('SIGKILL')
      })
    )
    await Promise.all(
      this.dirs.splice(0).map(async dir => {
        await rm(dir, { recursive: true, force: true })
      })
    )
    process.off('exit', this.onExit)
  }
}
