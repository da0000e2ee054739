// Shared pieces of the board's daemon-level tests: in-process daemons over the
// libp2p memory transport, real agentd processes on loopback, waiting, and
// event recording. Whatever a cluster starts, its `cleanup()` stops, and it
// removes the temp dirs, even after a failed test.
import { randomUUID } from 'node:crypto'
import { spawn, type ChildProcess } from 'node:child_process'
import { closeSync, existsSync, openSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Daemon, type DaemonParts } from '../../../src/daemon/daemon.js'
import type { DaemonConfig } from '../../../src/daemon/config.js'
import { connectAgency, type Agency } from '../../../src/client/agency.js'
import type { Event, LogEntry } from '../../../src/gen/agency/v1/api.js'
import { waitFor } from '../../helpers/wait-for.js'
import { multiaddr } from '@multiformats/multiaddr'
import { peerIdFromString } from '@libp2p/peer-id'
import { envWithoutAgency } from '../../helpers/agency-free-env.js'

/** Resolves with the error `fn` rejects with; fails if it resolves. */
export async function rejectionOf(fn: () => Promise<unknown>): Promise<Error & { code?: string }> {
  try {
    await fn()
  } catch (err) {
    return err as Error & { code?: string }
  }
  throw new Error('expected a rejection, but the call succeeded')
}

// ---- in-process daemons ----

export type MemoryDaemonOptions = Partial<Omit<DaemonConfig, 'dataDir' | 'listen'>>

/** The defaults of the board tests: short heartbeats and leases, fast anti-entropy. */
export const FAST: MemoryDaemonOptions = { heartbeatMs: 300, liveTimeoutMs: 2000, syncIntervalMs: 1000, dmRetryMs: 300 }

/** A listen address on the memory transport, unique to this run. */
export function memoryAddr(): string {
  return `/memory/agency-board-${randomUUID()}`
}

/** In-process daemons of one test file, each on its own temp data dir. */
export class MemoryCluster {
  readonly daemons: Daemon[] = []
  private readonly dirs: string[] = []

  async start(options: MemoryDaemonOptions = {}, parts: DaemonParts = {}): Promise<Daemon> {
    const dataDir = await mkdtemp(join(tmpdir(), 'agency-board-'))
    this.dirs.push(dataDir)
    const daemon = new Daemon(
      { grpc: null, metrics: null, processMetrics: false, ...FAST, ...options, listen: [memoryAddr()], dataDir },
      parts
    )
    await daemon.start()
    this.daemons.push(daemon)
    return daemon
  }

  /**
   * Stops `d` and starts a daemon on its data dir (same identity, log, inbox
   * and workspace) with its config and `options` over it, on a new memory
   * address; the new daemon replaces `d` in this cluster.
   */
  async restart(d: Daemon, options: MemoryDaemonOptions = {}): Promise<Daemon> {
    await d.stop()
    const again = new Daemon({ ...d.config, ...options, listen: [memoryAddr()] })
    this.daemons.splice(this.daemons.indexOf(d), 1, again)
    await again.start()
    return again
  }

  async cleanup(): Promise<void> {
    await Promise.allSettled(
      this.daemons.splice(0).map(async d => {
        await d.stop()
      })
    )
    await Promise.all(
      this.dirs.splice(0).map(async dir => {
        await rm(dir, { recursive: true, force: true })
      })
    )
  }
}

/** A daemon's dialable addresses (with /p2p/<id>). */
/** Dials `to` from `from`. */
export async function link(from: Daemon, to: Daemon): Promise<void> {
  await from.node.dial(multiaddr(addrsOf(to)[0]))
}

export function connected(a: Daemon, b: Daemon): boolean {
  return a.node.getConnections(peerIdFromString(b.peerId)).length > 0
}

/**
 * Links a test made itself (with the daemons' dialers stopped), kept up as
 * those dialers would: on a loaded machine libp2p closes a connection whose
 * ping timed out, and nothing else would dial it again. Call it while waiting.
 */
export async function keepLinked(links: Array<[Daemon, Daemon]>): Promise<void> {
  for (const [a, b] of links) if (!connected(a, b) && !connected(b, a)) await link(a, b).catch(() => {})
}

export function addrsOf(d: Daemon): string[] {
  return d.listenAddrs()
}

/** Peers `d` sees as live. */
export function livePeerIds(d: Daemon): string[] {
  return d.presence.livePeers().map(p => p.peerId)
}

/** Collects a daemon's events from now on. */
export class EventRecorder {
  readonly events: Event[] = []
  private readonly unsubscribe: () => void

  constructor(daemon: Daemon) {
    this.unsubscribe = daemon.events.subscribe(e => {
      this.events.push(e)
    })
  }

  ofType(...types: string[]): Event[] {
    return this.events.filter(e => types.includes(e.type))
  }

  stop(): void {
    this.unsubscribe()
  }
}

export function detailOf(e: Event): Record<string, any> {
  return e.detailJson === '' ? {} : JSON.parse(e.detailJson)
}

/** Waits until every daemon knows task `id`. */
export async function waitForTaskEverywhere(daemons: Daemon[], id: string, timeoutMs = 30_000): Promise<void> {
  await waitFor(() => daemons.every(d => d.boardService.board.task(id, d.boardService.now()) != null), {
    what: `task ${id} on all ${daemons.length} daemons`,
    timeoutMs
  })
}

// ---- real agentd processes ----

const REPO = fileURLToPath(new URL('../../../', import.meta.url))
/** The built daemon: the tests run `npx tsc -p .` output, as users do. */
export const AGENTD_JS = join(REPO, 'dist/src/cli/agentd.js')

/** Short heartbeats and leases, so a lease expires within a test. */
export const PROCESS_TIMING = ['--heartbeat-ms', '300', '--live-timeout-ms', '2000']

interface Banner {
  peerId: string
  addrs: string[]
  grpc: string
}

/** One agentd child process on loopback and a gRPC client to it; restartable on its data dir. */
export class AgentdProcess {
  readonly name: string
  readonly dataDir: string
  readonly logFile: string
  peers: string[]
  child?: ChildProcess
  private banner?: Banner
  private agency?: Agency
  private exited?: Promise<void>

  constructor(name: string, dataDir: string, logFile: string, peers: string[]) {
    this.name = name
    this.dataDir = dataDir
    this.logFile = logFile
    this.peers = peers
  }

  get peerId(): string {
    return this.started().peerId
  }
  get addrs(): string[] {
    return this.started().addrs
  }
  get grpc(): string {
    return this.started().grpc
  }
  get client(): Agency {
    if (this.agency == null) throw new Error(`${this.name} is not running`)
    return this.agency
  }

  private started(): Banner {
    if (this.banner == null) throw new Error(`${this.name} has not started`)
    return this.banner
  }

  get alive(): boolean {
    return this.child != null && this.child.exitCode == null && this.child.signalCode == null
  }

  /** Spawns agentd on the data dir and waits for it to print `ready`. */
  async start(): Promise<void> {
    if (!existsSync(AGENTD_JS)) throw new Error(`${AGENTD_JS} is missing: run npx tsc -p . first`)
    if (this.alive) throw new Error(`${this.name} is already running`)
    const args = [
      AGENTD_JS,
      '--data-dir',
      this.dataDir,
      '--name',
      this.name,
      '--listen',
      '/ip4/127.0.0.1/tcp/0',
      '--grpc',
      '127.0.0.1:0',
      ...PROCESS_TIMING,
      ...(this.peers.length > 0 ? ['--peers', this.peers.join(',')] : [])
    ]
    const env = envWithoutAgency()
    const log = openSync(this.logFile, 'a')
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', log], env })
    closeSync(log)
    this.child = child
    this.exited = new Promise(resolve => {
      child.once('exit', () => {
        resolve()
      })
    })
    const banner: Partial<Banner> & { addrs: string[] } = { addrs: [] }
    this.banner = await new Promise<Banner>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`${this.name} not ready in time`))
      }, 30_000)
      createInterface({ input: child.stdout! }).on('line', line => {
        let m: RegExpExecArray | null
        if ((m = /^agentd \S+ peer (\S+) /.exec(line)) != null) banner.peerId = m[1]
        else if ((m = /^listening (\S+)$/.exec(line)) != null) banner.addrs.push(m[1])
        else if ((m = /^grpc (\S+)$/.exec(line)) != null) banner.grpc = m[1]
        else if (line === 'ready') {
          clearTimeout(timer)
          resolve(banner as Banner)
        }
      })
      void this.exited?.then(() => {
        clearTimeout(timer)
        reject(new Error(`${this.name} exited before it was ready (see ${this.logFile})`))
      })
    }).catch(async err => {
      child.kill('SIGKILL')
      await this.exited
      throw err
    })
    this.agency = connectAgency(this.banner.grpc)
  }

  /** Ends the process with `signal` (default SIGKILL: a crash) and waits for it to exit. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    this.agency?.close()
    this.agency = undefined
    if (this.alive) this.child?.kill(signal)
    await this.exited
  }
}

/** agentd processes of one test file, under one temp dir. */
export class ProcessCluster {
  readonly procs: AgentdProcess[] = []
  private root?: string
  private readonly onExit = (): void => {
    for (const p of this.procs) if (p.alive) p.child?.kill('SIGKILL')
  }

  constructor() {
    process.once('exit', this.onExit)
  }

  async start(name: string, peers: string[] = []): Promise<AgentdProcess> {
    this.root ??= await mkdtemp(join(tmpdir(), 'agency-board-proc-'))
    const p = new AgentdProcess(name, join(this.root, name), join(this.root, `${name}.log`), peers)
    this.procs.push(p)
    await p.start()
    return p
  }

  async cleanup(): Promise<void> {
    await Promise.allSettled(
      this.procs.map(async p => {
        await p.kill('SIGKILL')
      })
    )
    if (this.root != null) await rm(this.root, { recursive: true, force: true })
    process.off('exit', this.onExit)
  }

  /** The last lines each daemon logged, to explain a failure. */
  async logs(): Promise<string> {
    const parts = await Promise.all(
      this.procs.map(async p => {
        const text = await readFile(p.logFile, 'utf8').catch(() => '')
        return `--- ${p.name}\n${text.split('\n').slice(-40).join('\n')}`
      })
    )
    return parts.join('\n')
  }
}

/** Events from a WatchEvents stream, collected from the moment it is opened. */
export class EventStream {
  readonly events: Event[] = []
  private readonly stream: AsyncIterable<Event> & { cancel: () => void }
  readonly done: Promise<void>

  constructor(agency: Agency) {
    const stream = agency.stream(c => c.watchEvents({}))
    this.stream = stream
    this.done = (async () => {
      try {
        for await (const e of stream) this.events.push(e)
      } catch {
        /* the daemon went away */
      }
    })()
  }

  ofType(...types: string[]): Event[] {
    return this.events.filter(e => types.includes(e.type))
  }

  stop(): void {
    this.stream.cancel()
  }
}

/** Every log entry a daemon holds, in its arrival order. */
export async function readLog(agency: Agency): Promise<LogEntry[]> {
  const out: LogEntry[] = []
  for await (const e of agency.stream(c => c.watchLog({ after: 0, follow: false }))) out.push(e)
  return out
}
