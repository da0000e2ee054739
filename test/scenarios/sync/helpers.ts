// Shared pieces of the shared-record tests (test/scenarios/sync) and the log-sync
// benchmark: temp dirs, a data dir pre-filled with a signed log,
// agentd child processes and in-process daemons. Everything started here is
// stopped, and every temp dir removed, by the owner's `cleanup()`.
import { spawn, type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { createWriteStream, existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { LogState } from '../../../src/core/log/log-state.js'
import { entryId, signEntry } from '../../../src/core/log/entry.js'
import { encodeBody } from '../../../src/core/log/kinds.js'
import type { Entry } from '../../../src/gen/agency/v1/log.js'
import { summaryDigest } from '../../../src/core/log/feed-summary.js'
import { toHex } from '../../../src/core/log/crypto.js'
import { FINDING_KINDS } from '../../../src/core/findings/finding-kinds.js'
import { openStore } from '../../../src/store/index.js'
import { connectAgency, type Agency } from '../../../src/client/agency.js'
import { Daemon } from '../../../src/daemon/daemon.js'
import type { DaemonConfig } from '../../../src/daemon/config.js'
import type { LogInfoReply } from '../../../src/gen/agency/v1/api.js'
import { makeIdentity } from '../../helpers/identity.js'
import { envWithoutAgency } from '../../helpers/agency-free-env.js'

const REPO = fileURLToPath(new URL('../../../', import.meta.url))
export const AGENTD_JS = join(REPO, 'dist/src/cli/agentd.js')

// ---- temp dirs ----

export class TempDirs {
  private readonly dirs: string[] = []

  async make(prefix = 'agency-record-'): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), prefix))
    this.dirs.push(dir)
    return dir
  }

  async removeAll(): Promise<void> {
    await Promise.all(
      this.dirs.splice(0).map(async d => {
        await rm(d, { recursive: true, force: true })
      })
    )
  }
}

// ---- a pre-filled log ----

export interface SeedOptions {
  entries: number
  authors: number
  /** approximate length of each finding's text */
  textBytes?: number
  /** one more word of this many characters in every text: big entries that cost little to index */
  padding?: number
  /** makes the run repeatable; default random */
  seed?: number
}

export interface SeededLog {
  entries: number
  /** the canonical bytes of all entries together */
  bytes: number
  vectorDigest: string
  authors: Map<string, number>
}

/** A small repeatable PRNG (mulberry32). */
export function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const WORDS = [
  'cache',
  'parser',
  'timeout',
  'lock',
  'retry',
  'index',
  'schema',
  'socket',
  'race',
  'buffer',
  'leak',
  'flaky',
  'migration',
  'encoding',
  'deadlock',
  'overflow',
  'handshake',
  'quorum',
  'lease',
  'backoff',
  'checksum',
  'cursor',
  'vector',
  'digest'
]

/**
 * Writes a signed log straight into each data dir's store, as if a daemon had
 * accepted it: `entries` findings from `authors` random identities,
 * interleaved at random, each extending its author's feed and the global
 * lamport clock. The log core checks them (ingestBatch: hash chains and one
 * signature per author) before they are stored; the daemon started on the dir
 * later restores them. (LogState.append would verify every entry twice,
 * which makes 10,000 entries take seconds.)
 */
export async function seedLog(dataDirs: string | string[], o: SeedOptions): Promise<SeededLog> {
  const random = prng(o.seed ?? Math.floor(Math.random() * 2 ** 31))
  const signers = await Promise.all(Array.from({ length: o.authors }, async () => (await makeIdentity()).signer))
  const feeds: Array<{ seq: number; prev: Uint8Array }> = signers.map(() => ({ seq: 0, prev: new Uint8Array(0) }))
  const textBytes = o.textBytes ?? 120
  const start = Date.now() - o.entries
  const entries: Entry[] = []
  for (let i = 0; i < o.entries; i++) {
    const a = Math.floor(random() * signers.length)
    let text = `seeded finding ${i}:`
    while (text.length < textBytes) text += ` ${WORDS[Math.floor(random() * WORDS.length)]}`
    if (o.padding != null) text += ` ${'z'.repeat(o.padding)}`
    const body = encodeBody('finding', {
      kind: FINDING_KINDS[i % FINDING_KINDS.length],
      text,
      paths: [`src/part${i % 37}/file${i % 11}.ts`],
      tags: [WORDS[i % WORDS.length]]
    })
    const feed = feeds[a]
    const entry = signEntry(signers[a], { seq: ++feed.seq, prev: feed.prev, lamport: i + 1, time: start + i, kind: 'finding', body })
    feed.prev = entryId(entry)
    entries.push(entry)
  }
  const state = new LogState()
  const result = state.ingestBatch(entries)
  if (result.accepted.length !== o.entries)
    throw new Error(`the log core accepted ${result.accepted.length} of ${o.entries} seeded entries`)
  const all = state.afterCursor(0)
  for (const dataDir of Array.isArray(dataDirs) ? dataDirs : [dataDirs]) {
    const store = await openStore(dataDir)
    try {
      for (let i = 0; i < all.length; i += 5000) await store.log.putAccepted(all.slice(i, i + 5000), { sync: false })
    } finally {
      await store.close()
    }
  }
  const vector = state.vector()
  return {
    entries: state.size,
    bytes: all.reduce((n, e) => n + e.bytes.byteLength, 0),
    vectorDigest: toHex(summaryDigest(state.summaries())),
    authors: vector
  }
}

/** A prom-client counter's value, summed over the label sets that include `labels`. */
export async function counterValue(
  c: { get: () => Promise<{ values: Array<{ value: number; labels: Record<string, unknown> }> }> },
  labels: Record<string, string> = {}
): Promise<number> {
  const { values } = await c.get()
  return values.filter(v => Object.entries(labels).every(([k, x]) => v.labels[k] === x)).reduce((s, v) => s + v.value, 0)
}

// ---- log comparison ----

/** The parts of LogInfo that say which log a daemon holds (not local counters). */
export function logIdentity(info: LogInfoReply): { entries: number; vectorDigest: string; authors: string[] } {
  return {
    entries: info.entries,
    vectorDigest: info.vectorDigest,
    authors: info.authors.map(a => `${a.author}:${a.seq}`).sort()
  }
}

// ---- agentd processes ----

export interface AgentdStartOptions {
  name: string
  dataDir: string
  peers?: string[]
  /** serve /metrics on a random loopback port */
  metrics?: boolean
  extraArgs?: string[]
  /** extra environment for the child */
  env?: Record<string, string>
  /** node flags, e.g. --cpu-prof */
  nodeArgs?: string[]
  /** also append the daemon's stderr (its log) to this file */
  logFile?: string
  /** how long it may take to print `ready` (restoring a big log on a busy machine is slow); default 120 s */
  readyTimeoutMs?: number
}

const STDERR_TAIL = 8000

/** One `agentd` child process on loopback, with a gRPC client. */
export class AgentdProcess {
  readonly options: AgentdStartOptions
  peerId = ''
  addrs: string[] = []
  grpc = ''
  metricsUrl?: string
  agency!: Agency
  private child?: ChildProcess
  private exited?: Promise<void>
  private stderrTail = ''

  constructor(options: AgentdStartOptions) {
    this.options = options
  }

  get name(): string {
    return this.options.name
  }
  get pid(): number | undefined {
    return this.child?.pid
  }
  get running(): boolean {
    return this.child != null && this.child.exitCode == null && this.child.signalCode == null
  }
  /** the end of the daemon's log, for failure messages */
  get stderr(): string {
    return this.stderrTail
  }

  /** Spawns agentd and waits until it prints `ready`. */
  async start(): Promise<void> {
    if (!existsSync(AGENTD_JS)) throw new Error(`${AGENTD_JS} is missing: run \`npx tsc -p .\` first`)
    const o = this.options
    const args = [
      ...(o.nodeArgs ?? []),
      AGENTD_JS,
      '--data-dir',
      o.dataDir,
      '--name',
      o.name,
      '--listen',
      '/ip4/127.0.0.1/tcp/0',
      '--grpc',
      '127.0.0.1:0',
      '--heartbeat-ms',
      '400',
      '--live-timeout-ms',
      '5000',
      ...(o.peers != null && o.peers.length > 0 ? ['--peers', o.peers.join(',')] : []),
      ...(o.metrics === true ? ['--metrics', '127.0.0.1:0'] : []),
      ...(o.extraArgs ?? [])
    ]
    const env = envWithoutAgency()
    delete env.VITEST
    env.AGENCY_LOG_LEVEL = 'warn'
    Object.assign(env, o.env)
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env })
    this.child = child
    this.stderrTail = ''
    this.exited = new Promise(resolve => {
      child.once('exit', () => {
        resolve()
      })
    })
    child.stderr?.setEncoding('utf8')
    const logFile = o.logFile != null ? createWriteStream(o.logFile, { flags: 'a' }) : undefined
    child.stderr?.on('data', (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_TAIL)
      logFile?.write(chunk)
    })
    child.once('exit', () => {
      logFile?.end()
    })
    this.addrs = []
    this.metricsUrl = undefined
    const lines = createInterface({ input: child.stdout })
    try {
      await new Promise<void>((resolve, reject) => {
        const timeoutMs = o.readyTimeoutMs ?? 120_000
        const timer = setTimeout(() => {
          reject(new Error(`agentd ${o.name} not ready after ${timeoutMs} ms:\n${this.stderrTail}`))
        }, timeoutMs)
        lines.on('line', line => {
          let m: RegExpExecArray | null
          if ((m = /^agentd \S+ peer (\S+) /.exec(line)) != null) this.peerId = m[1]
          else if ((m = /^listening (\S+)$/.exec(line)) != null) this.addrs.push(m[1])
          else if ((m = /^grpc (\S+)$/.exec(line)) != null) this.grpc = m[1]
          else if ((m = /^metrics (\S+)$/.exec(line)) != null) this.metricsUrl = m[1]
          else if (line === 'ready') {
            clearTimeout(timer)
            resolve()
          }
        })
        void this.exited?.then(() => {
          clearTimeout(timer)
          reject(new Error(`agentd ${o.name} exited before ready:\n${this.stderrTail}`))
        })
      })
    } catch (err) {
      child.kill('SIGKILL')
      await this.exited
      throw err
    }
    this.agency = connectAgency(this.grpc)
  }

  /** SIGTERM (or `signal`), then waits for the exit. Safe to call when not running. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    this.agency?.close()
    if (this.child == null) return
    if (this.running) this.child.kill(signal)
    // a daemon that does not shut down in time is killed, so that cleanup never hangs
    const killer = setTimeout(() => {
      this.child?.kill('SIGKILL')
    }, 15_000)
    await this.exited
    clearTimeout(killer)
  }

  async logInfo(): Promise<LogInfoReply> {
    return await this.agency.call(c => c.logInfo, {})
  }

  /** A metric's value from /metrics, summed over its label sets (0 when absent). */
  async metric(name: string, labels: Record<string, string> = {}): Promise<number> {
    if (this.metricsUrl == null) throw new Error(`agentd ${this.name} was started without --metrics`)
    const text = await (await fetch(this.metricsUrl)).text()
    return sumMetric(text, name, labels)
  }
}

/** Sums the samples of `name` in Prometheus text whose labels include `labels`. */
export function sumMetric(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})? (\S+)$/.exec(line)
    if (m == null || m[1] !== name) continue
    const have = m[2] ?? ''
    if (Object.entries(labels).every(([k, v]) => have.includes(`${k}="${v}"`))) sum += Number(m[3])
  }
  return sum
}

/** The agentd processes of one test file; `cleanup()` stops them all and removes the temp dirs. */
export class AgentdProcesses {
  readonly dirs = new TempDirs()
  private readonly all: AgentdProcess[] = []

  /** Starts an agentd; with no dataDir, on a fresh temp dir. */
  async start(o: Omit<AgentdStartOptions, 'dataDir'> & { dataDir?: string }): Promise<AgentdProcess> {
    const p = new AgentdProcess({ ...o, dataDir: o.dataDir ?? (await this.dirs.make()) })
    this.all.push(p)
    await p.start()
    return p
  }

  async cleanup(): Promise<void> {
    await Promise.allSettled(
      this.all.splice(0).map(async p => {
        await p.stop()
      })
    )
    await this.dirs.removeAll()
  }
}

// ---- in-process daemons ----

/** A listen address on the libp2p memory transport, unique to this run. */
export function memoryAddr(label = 'node'): string {
  return `/memory/agency-record-${label}-${randomUUID()}`
}

export type InProcessOptions = Partial<Omit<DaemonConfig, 'dataDir'>>

/** Daemons inside the test process, over the memory transport; `cleanup()` stops them and removes their dirs. */
export class InProcessDaemons {
  readonly dirs = new TempDirs()
  private readonly all: Daemon[] = []

  /** Starts a daemon on a fresh data dir; `prepare` may fill the dir first (e.g. seedLog). */
  async start(o: InProcessOptions = {}, prepare?: (dataDir: string) => Promise<unknown>): Promise<Daemon> {
    const dataDir = await this.dirs.make('agency-record-inproc-')
    await prepare?.(dataDir)
    const d = new Daemon({
      listen: [memoryAddr(o.name)],
      grpc: null,
      metrics: null,
      processMetrics: false,
      heartbeatMs: 300,
      liveTimeoutMs: 3000,
      syncIntervalMs: 500,
      ...o,
      dataDir
    })
    this.all.push(d)
    await d.start()
    return d
  }

  async cleanup(): Promise<void> {
    await Promise.allSettled(
      this.all.splice(0).map(async d => {
        await d.stop()
      })
    )
    await this.dirs.removeAll()
  }
}

/** A daemon's listen addresses (with /p2p/<id>), for bootstrap lists. */
export function addrsOf(d: Daemon): string[] {
  return d.node.getMultiaddrs().map(a => a.toString())
}
