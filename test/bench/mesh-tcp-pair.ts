// The TCP half of the mesh benchmark: N agentd processes and N raw gossipsub
// processes (agentd's libp2p stack and gossipsub options, nothing else) on
// loopback, both up at once. On a machine whose load swings (other work
// shares its cores), running one swarm after the other measured them under
// different loads; here they idle through the same window and their
// publications alternate (agency's k-th, then a raw payload of the size that
// entry had on the wire), so each system meets the same load. Each node's
// own clock times when it took a message in (one host, one clock): agency's
// from its entries' accepted_at, read after the window, so nothing watches
// the daemons while they publish.
import { spawn, type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import { connectAgency, type Agency } from '../../src/client/agency.js'
import { startLocalDaemon, type LocalDaemon } from '../../src/swarm/local-daemon.js'
import { waitFor } from '../helpers/wait-for.js'
import type { LogEntry } from '../../src/gen/agency/v1/api.js'
import { Claim, Entry, Finding } from '../../src/gen/agency/v1/log.js'
import type { MeshRunOptions } from './mesh-agency.js'
import { agencyConnections, countsLine, scrape, type Scrape } from './mesh-counts.js'
import { childCpuSeconds, childRssBytes, percentile, summarize, type SetupResult, type VisibilityRecord } from './mesh-stats.js'

const SETUP = 'processes, TCP loopback'

function pickEarlier<T>(items: T[], i: number, k: number): T[] {
  const out = new Set<T>()
  for (let j = 0; j < Math.min(k, i) * 3 && out.size < Math.min(k, i); j++) out.add(items[Math.floor(Math.random() * i)])
  return [...out]
}

/**
 * The size of the gossip message that carried an entry the API shows: the
 * entry re-encoded from its fields (a 32-byte prev, a 64-byte signature) and
 * the frame's type byte.
 */
function gossipBytes(e: LogEntry): number {
  const json = JSON.parse(e.bodyJson) as unknown
  const body =
    e.kind === 'claim'
      ? Claim.encode(Claim.fromJSON(json)).finish()
      : e.kind === 'finding'
        ? Finding.encode(Finding.fromJSON(json)).finish()
        : undefined
  if (body === undefined) return 0
  const entry = Entry.encode({
    author: e.author,
    seq: e.seq,
    prev: Buffer.alloc(e.seq > 1 ? 32 : 0),
    lamport: e.lamport,
    time: e.time,
    kind: e.kind,
    body: Buffer.from(body),
    sig: Buffer.alloc(64)
  }).finish()
  return entry.length + 1
}

const findingBody = (k: number): { kind: string; text: string; paths: string[]; tags: string[] } => ({
  kind: 'failure',
  text: `approach ${k} does not work in the parser: the property tests fail on nested groups (bench ${randomUUID()})`,
  paths: [`src/parser/m${k}.ts`],
  tags: ['parser', `approach:${k}`]
})

interface Published {
  key: string
  kind: string
  /** the publish call, on this process's clock */
  at: number
  acked: number
  from: number
  /**
   * when the author sent it into gossip, on its own clock (agency: its entry's accepted_at, placed once durable; raw: the time the node
   * printed)
   */
  sentAt?: number
}

/**
 * Per (message, receiving node) the time the node says it took the message
 * in, on its own clock (one host: one clock).
 */
class Sightings {
  private readonly seen = new Map<string, Map<number, number>>()
  note(key: string, node: number, atNode: number): void {
    let m = this.seen.get(key)
    if (m === undefined) this.seen.set(key, (m = new Map()))
    if (!m.has(node)) m.set(node, atNode)
  }

  count(key: string): number {
    return this.seen.get(key)?.size ?? 0
  }
  /**
   * The spans to each peer: from the publish call (`from: 'call'`), or from
   * the author's send (`'send'`: gossip alone), until the peer took it in. A
   * message whose send time is not known counts as reaching nobody.
   */
  records(published: Published[], n: number, from: 'call' | 'send'): VisibilityRecord[] {
    return published.map(p => {
      const start = from === 'send' ? p.sentAt : p.at
      const delays =
        start === undefined
          ? []
          : [...(this.seen.get(p.key) ?? new Map<number, number>())].filter(([i]) => i !== p.from).map(([, t]) => t - start)
      return { kind: p.kind, delays, missing: n - 1 - delays.length }
    })
  }

  /** When node `node` took in message `key`, by its clock. */
  atNode(key: string, node: number): number | undefined {
    return this.seen.get(key)?.get(node)
  }
}

/**
 * With BENCH_AGENTD_NODE_OPTIONS set, tells each daemon that a phase of the
 * run starts or ends (SIGUSR2): the preloaded profiler (cpu-profiler.cjs)
 * notes the time, so its profile can be cut into start-up, idle and publishing.
 */
function profileMark(daemons: LocalDaemon[]): void {
  if (process.env.BENCH_AGENTD_NODE_OPTIONS == null) return
  for (const d of daemons) d.child.kill('SIGUSR2')
}

/**
 * N agentd processes. Nothing watches them while they publish: each entry
 * carries the time its daemon took it in (accepted_at), read from every
 * daemon's log once the window is over, so the observer costs the daemons
 * nothing while it matters (a WatchLog stream per daemon would, at the moment
 * of every delivery; a raw node prints a line).
 */
class AgencySwarm {
  readonly daemons: LocalDaemon[] = []
  readonly clients: Agency[] = []
  readonly sightings = new Sightings()
  readonly published: Published[] = []
  /** the wire size of a claim's entry, learned from the first (claims differ only in a digit or two of the task's name) */
  private claimBytes?: number
  private readonly tasks: string[]
  startSeconds = 0

  private constructor(
    readonly n: number,
    readonly root: string,
    private readonly o: MeshRunOptions
  ) {
    this.tasks = Array.from({ length: o.perKind }, (_, k) => `bench-task-${k}`)
  }

  static async start(n: number, o: MeshRunOptions): Promise<AgencySwarm> {
    const s = new AgencySwarm(n, await mkdtemp(join(tmpdir(), 'agency-bench-tcp-')), o)
    try {
      await s.boot()
    } catch (err) {
      await s.stop()
      throw err
    }
    return s
  }

  private async boot(): Promise<void> {
    const { n, o } = this
    const started = performance.now()
    const swarm = `bench-${randomUUID().slice(0, 8)}`
    const addrs: string[] = []
    for (let i = 0; i < n; i++) {
      const d = await startLocalDaemon({
        name: `bench-${i}`,
        dataDir: join(this.root, `n${i}`),
        peers: pickEarlier(addrs, i, o.bootstrap),
        extraArgs: [
          '--swarm',
          swarm,
          '--heartbeat-ms',
          String(o.heartbeatMs),
          '--live-timeout-ms',
          String(o.liveTimeoutMs),
          '--heartbeat-max-rate',
          String(o.heartbeatMaxRate ?? 16),
          ...(o.counts === true ? ['--metrics', '127.0.0.1:0'] : [])
        ],
        // e.g. "--require $PWD/test/bench/cpu-profiler.cjs": a CPU profiler in every daemon (see profileMark)
        env: process.env.BENCH_AGENTD_NODE_OPTIONS != null ? { NODE_OPTIONS: process.env.BENCH_AGENTD_NODE_OPTIONS } : undefined,
        startTimeoutMs: 120_000
      })
      this.daemons.push(d)
      addrs.push(d.addrs[0])
      this.clients.push(connectAgency(d.grpc))
    }
    this.startSeconds = (performance.now() - started) / 1000
    o.log(`    agency × ${n} processes: started in ${this.startSeconds.toFixed(0)} s`)
    for (const id of this.tasks)
      await this.clients[0].call(c => c.addTask, { id, title: id, description: '', deps: [], scope: [`src/t/${id}.ts`], priority: 0 })
    await waitFor(async () => await this.holdEverywhere({ task: this.tasks.length }), {
      what: 'the tasks at every daemon',
      timeoutMs: 300_000,
      intervalMs: 100
    })
  }

  /** True once every daemon's log holds at least these many entries of each kind. */
  private async holdEverywhere(counts: Record<string, number>): Promise<boolean> {
    const infos = await Promise.all(this.clients.map(async c => (await c.call(x => x.logInfo, {})) as { byKind: Record<string, number> }))
    return infos.every(info => Object.entries(counts).every(([kind, k]) => (info.byKind[kind] ?? 0) >= k))
  }

  /** Reads every daemon's log whole and notes when it took in each published entry. */
  async readLogs(): Promise<void> {
    // keyed by entry id for findings, "claim:<task>" for claims (a no-wait claim answers without its entry id)
    await Promise.all(
      this.clients.map(async (c, i) => {
        for await (const e of c.stream<LogEntry>((raw, md) => raw.watchLog({ after: 0, follow: false }, md))) {
          if (e.kind === 'claim') this.sightings.note(`claim:${(JSON.parse(e.bodyJson) as { task: string }).task}`, i, e.acceptedAt)
          else if (e.kind === 'finding') this.sightings.note(e.id, i, e.acceptedAt)
        }
      })
    )
  }

  pids(): number[] {
    return this.daemons.map(d => d.child.pid as number)
  }

  /** every daemon's metrics now (--counts), else none */
  async scrapes(): Promise<Scrape[] | undefined> {
    if (this.o.counts !== true) return undefined
    return await Promise.all(this.daemons.map(async d => (d.metrics == null ? new Map() : await scrape(d.metrics))))
  }

  /**
   * Publication k from a random daemon: a claim (even k) or a finding;
   * resolves once the author answered, with the size the entry had on the
   * wire (a claim's: the first claim's, read from its author's log at once).
   */
  async publish(k: number): Promise<number> {
    const from = Math.floor(Math.random() * this.n)
    const at = Date.now()
    let key: string
    let bytes: number | undefined
    if (k % 2 === 0) {
      const task = this.tasks[k / 2]
      await this.clients[from].call(c => c.claim, { task, scope: [], noWait: true })
      key = `claim:${task}`
      if (this.claimBytes === undefined) {
        for await (const e of this.clients[from].stream<LogEntry>((raw, md) => raw.watchLog({ after: 0, follow: false }, md))) {
          // as a claim by an author with an entry before it (a 32-byte prev), as nearly all are
          if (e.kind === 'claim') this.claimBytes = gossipBytes({ ...e, seq: Math.max(2, e.seq) })
        }
      }
      bytes = this.claimBytes
    } else {
      const reply = (await this.clients[from].call(c => c.recordFinding, { ...findingBody(k), refs: [], supersedes: '' })) as {
        entry?: LogEntry
      }
      key = reply.entry?.id ?? ''
      bytes = reply.entry !== undefined ? gossipBytes(reply.entry) : undefined
    }
    this.published.push({ key, kind: k % 2 === 0 ? 'claim' : 'finding', at, acked: Date.now(), from })
    return bytes ?? 0
  }

  /** True once every daemon holds every published entry (asked, not watched). */
  async complete(): Promise<boolean> {
    const claims = this.published.filter(p => p.kind === 'claim').length
    return await this.holdEverywhere({ claim: claims, finding: this.published.length - claims })
  }

  /** The published entries with the time each author placed its own (its accepted_at): readLogs first. */
  sent(): Published[] {
    return this.published.map(p => ({ ...p, sentAt: this.sightings.atNode(p.key, p.from) }))
  }

  async stop(): Promise<void> {
    for (const c of this.clients) c.close()
    await Promise.allSettled(this.daemons.map(async d => await d.stop()))
    await rm(this.root, { recursive: true, force: true })
  }
}

/** N raw gossipsub nodes, one process each (mesh-raw-node). */
class RawSwarm {
  readonly children: ChildProcess[] = []
  readonly sightings = new Sightings()
  readonly published: Published[] = []
  startSeconds = 0
  private readonly topic = `/agency/bench/${randomUUID()}`
  readonly compiled: boolean

  private constructor(
    readonly n: number,
    private readonly o: MeshRunOptions
  ) {
    this.compiled = existsSync(RawSwarm.built)
  }

  // the compiled script when built (as agentd runs), so neither side pays for a TypeScript loader
  static readonly built = fileURLToPath(new URL('../../dist/test/bench/mesh-raw-node.js', import.meta.url))

  static async start(n: number, o: MeshRunOptions): Promise<RawSwarm> {
    const s = new RawSwarm(n, o)
    try {
      await s.boot()
    } catch (err) {
      s.stop()
      throw err
    }
    return s
  }

  private async boot(): Promise<void> {
    const started = performance.now()
    const command = this.compiled ? [RawSwarm.built] : [...process.execArgv, fileURLToPath(new URL('./mesh-raw-node.ts', import.meta.url))]
    const addrs: string[] = []
    for (let i = 0; i < this.n; i++) {
      const peers = pickEarlier(addrs, i, this.o.bootstrap)
      // BENCH_RAW_NODE_OPTIONS: node flags for the raw nodes too (e.g. --cpu-prof; they write it when stopped)
      const env =
        process.env.BENCH_RAW_NODE_OPTIONS != null ? { ...process.env, NODE_OPTIONS: process.env.BENCH_RAW_NODE_OPTIONS } : process.env
      const child = spawn(
        process.execPath,
        [...command, '--topic', this.topic, ...(peers.length > 0 ? ['--peers', peers.join(',')] : [])],
        { stdio: ['pipe', 'pipe', 'inherit'], env }
      )
      this.children.push(child)
      const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream })
      addrs.push(
        await new Promise<string>((resolve, reject) => {
          let a = ''
          const timer = setTimeout(() => {
            reject(new Error('raw node did not start'))
          }, 120_000)
          lines.on('line', line => {
            const [cmd, x] = line.split(' ')
            if (cmd === 'addr') a = x
            else if (cmd === 'ready') {
              clearTimeout(timer)
              resolve(a)
            }
            // the node's own time, as agency's accepted_at is its daemon's
            else if (cmd === 'recv') this.sightings.note(`raw:${x}`, i, Number(line.split(' ')[2]))
            else if (cmd === 'sent') this.sentAt.set(`raw:${x}`, Number(line.split(' ')[2]))
            else if (cmd === 'connections') this.connectionAnswers.push(Number(x))
          })
          child.once('exit', code => {
            clearTimeout(timer)
            reject(new Error(`raw node exited with ${code}`))
          })
        })
      )
    }
    this.startSeconds = (performance.now() - started) / 1000
  }

  pids(): number[] {
    return this.children.map(c => c.pid as number)
  }

  /** per message, when its node sent it (its clock) */
  private readonly sentAt = new Map<string, number>()
  private connectionAnswers: number[] = []
  /** The mean of the peers each node is connected to now. */
  async connections(): Promise<number> {
    this.connectionAnswers = []
    for (const c of this.children) c.stdin?.write('connections\n')
    await waitFor(() => this.connectionAnswers.length >= this.n, {
      what: "every raw node's connections",
      timeoutMs: 10_000,
      intervalMs: 100
    })
    return sum(this.connectionAnswers) / this.n
  }

  publish(k: number, bytes: number): void {
    const from = Math.floor(Math.random() * this.n)
    const at = Date.now()
    this.children[from].stdin?.write(`pub ${k} ${bytes}\n`)
    this.published.push({ key: `raw:${k}`, kind: 'raw', at, acked: at, from })
  }

  complete(): boolean {
    return this.published.every(p => this.sightings.count(p.key) >= this.n - 1)
  }

  /** The published messages with the time each node sent its own. */
  sent(): Published[] {
    return this.published.map(p => ({ ...p, sentAt: this.sentAt.get(p.key) }))
  }

  stop(): void {
    for (const c of this.children) if (c.exitCode === null) c.kill('SIGTERM')
    setTimeout(
      () => {
        for (const c of this.children) if (c.exitCode === null) c.kill('SIGKILL')
      },
      process.env.BENCH_RAW_NODE_OPTIONS != null ? 5000 : 500
    ).unref()
  }
}

/** Per published message, when each node took it in (its clock; null: never): BENCH_MESH_DUMP=<file> writes these for a closer look. */
function timesOf(published: Published[], sightings: Sightings, n: number): Array<Published & { nodes: Array<number | null> }> {
  return published.map(p => ({ ...p, nodes: Array.from({ length: n }, (_, i) => sightings.atNode(p.key, i) ?? null) }))
}

async function cpuOf(pids: number[]): Promise<number[]> {
  return await Promise.all(pids.map(childCpuSeconds))
}

const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0)

/** Both swarms of n processes, up at once, idle through the same window, publishing in turn. */
export async function tcpPair(n: number, o: MeshRunOptions): Promise<SetupResult[]> {
  let agency: AgencySwarm | undefined
  let raw: RawSwarm | undefined
  try {
    agency = await AgencySwarm.start(n, o)
    raw = await RawSwarm.start(n, o)
    o.log(`    raw gossipsub × ${n} processes: started in ${raw.startSeconds.toFixed(0)} s`)
    // connections and gossipsub meshes; then both are left alone (agency's quiet heartbeats and anti-entropy slow down)
    await sleep(Math.max(5_000, o.settleMs ?? 0))

    const a = agency
    const r = raw
    profileMark(a.daemons)
    const m0 = await a.scrapes()
    const [a0, r0] = [await cpuOf(a.pids()), await cpuOf(r.pids())]
    await sleep(o.idleMs)
    const [a1, r1] = [await cpuOf(a.pids()), await cpuOf(r.pids())]
    const m1 = await a.scrapes()
    profileMark(a.daemons)
    o.log(
      `    connections per node: agency ${(await agencyConnections(a.clients)).toFixed(1)}, raw gossipsub ${(await r.connections()).toFixed(1)}`
    )
    if (m0 !== undefined && m1 !== undefined) o.log(`    agency idle ${countsLine('idle', m0, m1, o.idleMs / 1000)}`)
    const idle = (c1: number[], c0: number[]): number => (sum(c1) - sum(c0)) / (o.idleMs / 1000) / n
    const rss = async (pids: number[]): Promise<number> => sum(await Promise.all(pids.map(childRssBytes))) / n
    const [aRss, rRss] = [await rss(a.pids()), await rss(r.pids())]

    // Agency's k-th, then raw's k-th with the size agency's had on the wire.
    const busyStart = Date.now()
    const sizes: number[] = []
    for (let k = 0; k < 2 * o.perKind; k++) {
      const size = await a.publish(k)
      await sleep(o.spacingMs / 2)
      if (size > 0) sizes.push(size)
      r.publish(k, size > 0 ? size : 300)
      await sleep(o.spacingMs / 2)
    }
    await waitFor(async () => r.complete() && (await a.complete()), {
      what: 'every message at every node',
      timeoutMs: o.waitMs,
      intervalMs: 100
    }).catch(() => {})
    profileMark(a.daemons)
    const [a2, r2] = [await cpuOf(a.pids()), await cpuOf(r.pids())]
    const busySeconds = (Date.now() - busyStart) / 1000
    const m2 = await a.scrapes()
    if (m1 !== undefined && m2 !== undefined) o.log(`    agency busy ${countsLine('publishing', m1, m2, busySeconds)}`)
    const payloadBytes = sizes.length === 0 ? 0 : Math.round(sum(sizes) / sizes.length)

    const acks = a.published.map(p => p.acked - p.at)
    // CPU beyond idling per delivery: the window's CPU less the idle rate over it, all nodes.
    const perDelivery = (c2: number[], c1: number[], c0: number[], records: VisibilityRecord[]): number | undefined => {
      const deliveries = sum(records.map(x => x.delays.length))
      return deliveries === 0 ? undefined : (1000 * (sum(c2) - sum(c1) - idle(c1, c0) * n * busySeconds)) / deliveries
    }
    await a.readLogs()
    if (process.env.BENCH_MESH_DUMP != null)
      await writeFile(
        process.env.BENCH_MESH_DUMP,
        JSON.stringify({ agency: timesOf(a.sent(), a.sightings, n), raw: timesOf(r.sent(), r.sightings, n) })
      )
    const [aRecords, rRecords] = [a.sightings.records(a.published, n, 'call'), r.sightings.records(r.published, n, 'call')]
    const spans = (records: VisibilityRecord[]): SetupResult['gossipOnly'] => {
      const { allPeers, perPeer } = summarize(records, n - 1)
      return { allPeers, perPeer }
    }
    o.log(
      `    agency × ${n} processes: the author's answer (gossiped, durable) after p50 ${percentile(acks, 0.5).toFixed(0)} / p99 ${percentile(acks, 0.99).toFixed(0)} ms`
    )
    for (const [name, sent] of [
      ['agency', a.sent()],
      ['raw gossipsub', r.sent()]
    ] as const) {
      for (const kind of new Set(sent.map(p => p.kind))) {
        const before = sent.filter(p => p.kind === kind && p.sentAt !== undefined).map(p => (p.sentAt as number) - p.at)
        if (before.length > 0)
          o.log(
            `    ${name} ${kind === 'raw' ? 'payload' : kind}s: from the publish call to the author's send p50 ${percentile(before, 0.5).toFixed(0)} / p99 ${percentile(before, 0.99).toFixed(0)} ms`
          )
      }
    }
    for (const kind of ['claim', 'finding']) {
      const lasts = a.sightings
        .records(
          a.published.filter(p => p.kind === kind),
          n,
          'call'
        )
        .filter(x => x.missing === 0)
        .map(x => Math.max(...x.delays))
      if (lasts.length > 0)
        o.log(`    agency ${kind}s at every peer: p50 ${percentile(lasts, 0.5).toFixed(0)} / p99 ${percentile(lasts, 0.99).toFixed(0)} ms`)
    }
    return [
      {
        setup: SETUP,
        system: 'agency',
        nodes: n,
        ...summarize(aRecords, n - 1),
        gossipOnly: spans(a.sightings.records(a.sent(), n, 'send')),
        payloadBytes,
        ackMs: { p50: percentile(acks, 0.5), p99: percentile(acks, 0.99) },
        idleCpuPerNode: idle(a1, a0),
        busyCpuPerNode: (sum(a2) - sum(a1)) / busySeconds / n,
        cpuPerDeliveryMs: perDelivery(a2, a1, a0, aRecords),
        rssPerNodeBytes: aRss,
        startSeconds: a.startSeconds,
        note: "each daemon's time is its entry's accepted_at, read from its log after the window"
      },
      {
        setup: SETUP,
        system: 'raw gossipsub',
        nodes: n,
        ...summarize(rRecords, n - 1),
        gossipOnly: spans(r.sightings.records(r.sent(), n, 'send')),
        payloadBytes,
        idleCpuPerNode: idle(r1, r0),
        busyCpuPerNode: (sum(r2) - sum(r1)) / busySeconds / n,
        cpuPerDeliveryMs: perDelivery(r2, r1, r0, rRecords),
        rssPerNodeBytes: rRss,
        startSeconds: r.startSeconds,
        note: `each node's time is the one it printed with the message${r.compiled ? '' : '; nodes ran under tsx (run npm run build first), which inflates their CPU and RSS'}`
      }
    ]
  } finally {
    raw?.stop()
    await agency?.stop()
  }
}
