// The hosted half of the mesh benchmark: a swarm of N nodes spread over a
// few processes (mesh-host.ts, K nodes each, TCP on loopback), agency and
// then raw gossipsub with as many processes, so sizes of hundreds run on one
// machine without hundreds of processes or one event loop. Per swarm: the
// time until every peer has each claim or finding, idle CPU, bytes and RSS
// per node; for agency, a late joiner of J more daemons converging.
import { execFile } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { forkIpcHost, type IpcHost } from './ipc-host.js'
import { setTimeout as sleep } from 'node:timers/promises'
import { inProcessHeartbeatRate, type MeshRunOptions } from './mesh-agency.js'
import { percentile, summarize, type SetupResult, type VisibilityRecord } from './mesh-stats.js'
import { waitFor } from '../helpers/wait-for.js'

export interface HostedOptions extends MeshRunOptions {
  /** nodes per process */
  perProcess: number
  /** daemons that join the agency swarm once its window is over (0: none) */
  joiners: number
}

/** A late joiner's catch-up: from each joiner's start until its log holds every entry the swarm had. */
export interface JoinerResult {
  nodes: number
  joiners: number
  entries: number
  /** seconds per joiner */
  p50: number
  p99: number
  max: number
  /** from the first joiner's start until the last one had everything */
  allSeconds: number
  converged: number
}

type Host = IpcHost

function startHost(): Host {
  return forkIpcHost(fileURLToPath(new URL('./mesh-host.ts', import.meta.url)), {
    what: 'a node process',
    execArgv: [...process.execArgv, '--max-old-space-size=4096'],
    env: { ...process.env, AGENCY_LOG_LEVEL: process.env.AGENCY_LOG_LEVEL ?? 'warn' }
  })
}

function pickRandom<T>(items: readonly T[], below: number, k: number): T[] {
  const out = new Set<T>()
  for (let j = 0; j < Math.min(k, below) * 3 && out.size < Math.min(k, below); j++) out.add(items[Math.floor(Math.random() * below)])
  return [...out]
}

/** Bytes the given processes sent on their established TCP connections, by the kernel's counters (`ss -tinp`), per connection. */
async function tcpBytesSent(pids: readonly number[]): Promise<Map<string, number>> {
  const out = await new Promise<string>(resolve => {
    execFile('ss', ['-tinpH', 'state', 'established'], { maxBuffer: 64 * 2 ** 20 }, (err, stdout) => {
      resolve(err == null ? stdout : '')
    })
  })
  const seen = new Map<string, number>()
  const lines = out.split('\n')
  for (let i = 0; i < lines.length - 1; i++) {
    const m = /^\S+\s+\S+\s+(\S+)\s+(\S+)\s+users:.*pid=(\d+),/.exec(lines[i])
    if (m == null || !pids.includes(Number(m[3]))) continue
    const bytes = /bytes_sent:(\d+)/.exec(lines[i + 1])
    if (bytes != null) seen.set(`${m[1]}-${m[2]}`, Number(bytes[1]))
  }
  return seen
}

/** What was sent between two samples: connections in both by their difference, new ones whole. */
function sentBetween(a: Map<string, number>, b: Map<string, number>): number {
  let total = 0
  for (const [k, v] of b) total += v - (a.get(k) ?? 0)
  return total
}

interface Swarm {
  hosts: Host[]
  hostOf: (i: number) => Host
  addrs: string[]
  pids: number[]
  stop: () => Promise<void>
}

async function startSwarm(
  n: number,
  o: HostedOptions,
  start: (i: number, peers: string[]) => [string, Record<string, unknown>]
): Promise<Swarm> {
  const hosts = Array.from({ length: Math.ceil(n / o.perProcess) }, startHost)
  const hostOf = (i: number): Host => hosts[i % hosts.length]
  const addrs: string[] = []
  const stop = async (): Promise<void> => {
    await Promise.allSettled(hosts.map(async h => await h.call('stop')))
    for (const h of hosts) h.child.kill()
  }
  const swarm = { hosts, hostOf, addrs, pids: hosts.map(h => h.child.pid as number), stop }
  try {
    await startNodes(swarm, 0, n, o, start)
  } catch (err) {
    await stop()
    throw err
  }
  return swarm
}

/** Starts nodes from..to-1 in batches of 8, each bootstrapped to a few random earlier ones. */
async function startNodes(
  swarm: Swarm,
  from: number,
  to: number,
  o: HostedOptions,
  start: (i: number, peers: string[]) => [string, Record<string, unknown>]
): Promise<void> {
  const t0 = performance.now()
  const budget = o.startBudgetMs ?? 900_000
  const one = async (i: number, below: number): Promise<void> => {
    const [op, args] = start(i, pickRandom(swarm.addrs, below, o.bootstrap))
    swarm.addrs[i] = (await swarm.hostOf(i).call<{ addr: string }>(op, args)).addr
  }
  // a swarm's first node alone (it has no one to dial); a joiner dials into the swarm before it
  if (from === 0) await one(0, 0)
  for (let b = from === 0 ? 1 : from; b < to; b += 8) {
    if (performance.now() - t0 > budget)
      throw new Error(`only ${b - from} of ${to - from} nodes had started after ${(budget / 1000).toFixed(0)} s`)
    await Promise.all(
      Array.from({ length: Math.min(8, to - b) }, async (_, k) => {
        await one(b + k, from === 0 ? b : from)
      })
    )
  }
}

const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0)

interface Window {
  idleCpuPerNode: number
  idleBytesPerNodePerSecond: number
  rssPerNodeBytes: number
}

/** Idle CPU and bytes per node over the idle window, after the settling time; RSS per node (each process's own, modules included). */
async function idleWindow(swarm: Swarm, n: number, o: HostedOptions): Promise<Window> {
  await sleep(o.settleMs ?? 0)
  const cpu0 = sum(await Promise.all(swarm.hosts.map(async h => await h.call<number>('cpu'))))
  const bytes0 = await tcpBytesSent(swarm.pids)
  const t0 = performance.now()
  await sleep(o.idleMs)
  const bytes1 = await tcpBytesSent(swarm.pids)
  const cpu1 = sum(await Promise.all(swarm.hosts.map(async h => await h.call<number>('cpu'))))
  const seconds = (performance.now() - t0) / 1000
  const rss = sum(await Promise.all(swarm.hosts.map(async h => await h.call<number>('rss'))))
  return {
    idleCpuPerNode: (cpu1 - cpu0) / seconds / n,
    idleBytesPerNodePerSecond: sentBetween(bytes0, bytes1) / seconds / n,
    rssPerNodeBytes: rss / n
  }
}

interface Published {
  key: string
  at: number
  from: number
  bytes: number
}

/** Per published message, when each node other than its author took it in (the nodes' wall clocks). */
async function sightings(swarm: Swarm, published: readonly Published[]): Promise<Map<number, Array<number | null>>> {
  const keys = published.map(p => p.key)
  const out = new Map<number, Array<number | null>>()
  for (const part of await Promise.all(
    swarm.hosts.map(async h => await h.call<Array<{ i: number; times: Array<number | null> }>>('seen', { keys }))
  )) {
    for (const x of part) out.set(x.i, x.times)
  }
  return out
}

async function publishWindow(
  swarm: Swarm,
  n: number,
  o: HostedOptions,
  publish: (k: number, from: number) => Promise<Published>
): Promise<{ records: VisibilityRecord[]; busyCpuPerNode: number; published: Published[] }> {
  const published: Published[] = []
  const cpu0 = sum(await Promise.all(swarm.hosts.map(async h => await h.call<number>('cpu'))))
  const t0 = performance.now()
  for (let k = 0; k < 2 * o.perKind; k++) {
    published.push(await publish(k, Math.floor(Math.random() * n)))
    await sleep(o.spacingMs)
  }
  const complete = async (): Promise<boolean> => {
    const seen = await sightings(swarm, published)
    return published.every((p, k) => [...seen].every(([i, times]) => i >= n || times[k] !== null))
  }
  await waitFor(complete, { what: 'every message at every node', timeoutMs: o.waitMs, intervalMs: 1000 }).catch(() => {})
  const busyCpuPerNode =
    (sum(await Promise.all(swarm.hosts.map(async h => await h.call<number>('cpu')))) - cpu0) / ((performance.now() - t0) / 1000) / n
  const seen = await sightings(swarm, published)
  const records: VisibilityRecord[] = published.map((p, k) => {
    const delays: number[] = []
    for (const [i, times] of seen) if (i < n && i !== p.from && times[k] !== null) delays.push(times[k] - p.at)
    return { kind: 'entry', delays, missing: n - 1 - delays.length }
  })
  return { records, busyCpuPerNode, published }
}

/** agency: N daemons over K per process, then J late joiners. */
export async function agencyHosted(n: number, o: HostedOptions): Promise<{ result: SetupResult; joiner?: JoinerResult }> {
  const root = await mkdtemp(join(tmpdir(), 'agency-bench-hosted-'))
  const started = performance.now()
  const heartbeatMaxRate = o.heartbeatMaxRate ?? inProcessHeartbeatRate(n, o)
  const startDaemon = (i: number, peers: string[]): [string, Record<string, unknown>] => [
    'startAgency',
    { i, peers, dataDir: join(root, `n${i}`), heartbeatMs: o.heartbeatMs, liveTimeoutMs: o.liveTimeoutMs, heartbeatMaxRate }
  ]
  const swarm = await startSwarm(n, o, startDaemon)
  try {
    const startSeconds = (performance.now() - started) / 1000
    o.log(`    agency × ${n} in ${swarm.hosts.length} processes: started in ${startSeconds.toFixed(0)} s`)
    const topic = ''
    await waitFor(
      async () =>
        Math.min(...(await Promise.all(swarm.hosts.map(async h => await h.call<number>('subscribers', { topic }))))) >= Math.min(n - 1, 2),
      { what: 'every daemon to have gossip subscribers', timeoutMs: 300_000, intervalMs: 1000 }
    )
    const tasks = Array.from({ length: o.perKind }, (_, k) => `bench-task-${k}`)
    await swarm.hostOf(0).call('addTasks', { tasks })
    await waitFor(
      async () =>
        Math.min(...(await Promise.all(swarm.hosts.map(async h => await h.call<number>('tasksSeen', { tasks }))))) >= tasks.length,
      { what: 'the tasks at every daemon', timeoutMs: 600_000, intervalMs: 1000 }
    )
    const idle = await idleWindow(swarm, n, o)
    o.log(
      `    agency × ${n}: idle ${(idle.idleCpuPerNode * 100).toFixed(2)} % of a core and ${idle.idleBytesPerNodePerSecond.toFixed(0)} B/s per node`
    )
    const { records, busyCpuPerNode, published } = await publishWindow(swarm, n, o, async (k, from) => {
      const p = await swarm
        .hostOf(from)
        .call<{ key: string; at: number; bytes: number }>(
          'publishAgency',
          k % 2 === 0 ? { i: from, k, task: tasks[k / 2] } : { i: from, k }
        )
      return { ...p, from }
    })
    const sizes = published.map(p => p.bytes).filter(b => b > 1)
    const result: SetupResult = {
      setup: `processes of ${o.perProcess}, TCP loopback`,
      system: 'agency',
      nodes: n,
      ...summarize(records, n - 1),
      payloadBytes: sizes.length === 0 ? 0 : Math.round(sum(sizes) / sizes.length),
      idleCpuPerNode: idle.idleCpuPerNode,
      idleBytesPerNodePerSecond: idle.idleBytesPerNodePerSecond,
      busyCpuPerNode,
      rssPerNodeBytes: idle.rssPerNodeBytes,
      startSeconds,
      note: `heartbeats capped at ${heartbeatMaxRate} received per second per daemon; ${swarm.hosts.length} processes`
    }
    if (o.joiners === 0) return { result }
    return { result, joiner: await lateJoiners(swarm, n, o, startDaemon) }
  } finally {
    await swarm.stop()
    await rm(root, { recursive: true, force: true })
  }
}

async function lateJoiners(
  swarm: Swarm,
  n: number,
  o: HostedOptions,
  startDaemon: (i: number, peers: string[]) => [string, Record<string, unknown>]
): Promise<JoinerResult> {
  const sizes = async (): Promise<Map<number, number>> => {
    const out = new Map<number, number>()
    for (const part of await Promise.all(swarm.hosts.map(async h => await h.call<Array<{ i: number; entries: number }>>('logSizes'))))
      for (const x of part) out.set(x.i, x.entries)
    return out
  }
  const entries = Math.max(...(await sizes()).values())
  const first = performance.now()
  await startNodes(swarm, n, n + o.joiners, o, startDaemon)
  const done = new Map<number, number>()
  await waitFor(
    async () => {
      for (const [i, size] of await sizes()) if (i >= n && size >= entries && !done.has(i)) done.set(i, performance.now())
      return done.size === o.joiners
    },
    { what: 'every joiner to hold the whole log', timeoutMs: Math.max(o.waitMs, 300_000), intervalMs: 500 }
  ).catch(() => {})
  // each joiner from its own start (the nodes' wall clock: the same host) to the poll that found it whole
  const startedAt = new Map<number, number>()
  for (const part of await Promise.all(
    swarm.hosts.map(async h => await h.call<Array<{ i: number; startedAt: number }>>('seen', { keys: [] }))
  ))
    for (const x of part) startedAt.set(x.i, x.startedAt)
  const offset = performance.timeOrigin
  const seconds = [...done].map(([i, at]) => (offset + at - (startedAt.get(i) ?? offset + first)) / 1000)
  return {
    nodes: n,
    joiners: o.joiners,
    entries,
    p50: seconds.length === 0 ? NaN : percentile(seconds, 0.5),
    p99: seconds.length === 0 ? NaN : percentile(seconds, 0.99),
    max: seconds.length === 0 ? NaN : Math.max(...seconds),
    allSeconds: done.size === 0 ? NaN : (Math.max(...done.values()) - first) / 1000,
    converged: done.size
  }
}

/** raw gossipsub: N nodes over K per process, publishing payloads of the agency entries' size. */
export async function rawHosted(n: number, payloadBytes: number, o: HostedOptions): Promise<SetupResult> {
  const topic = `/agency/bench/${randomUUID()}`
  const started = performance.now()
  const swarm = await startSwarm(n, o, (i, peers) => ['startRaw', { i, peers, topic }])
  try {
    const startSeconds = (performance.now() - started) / 1000
    await waitFor(
      async () =>
        Math.min(...(await Promise.all(swarm.hosts.map(async h => await h.call<number>('subscribers', { topic }))))) >= Math.min(n - 1, 2),
      { what: 'every node to have subscribers', timeoutMs: 300_000, intervalMs: 1000 }
    ).catch(() => {})
    await sleep(3_000) // a few gossipsub heartbeats to build the mesh
    const idle = await idleWindow(swarm, n, o)
    o.log(
      `    raw × ${n}: idle ${(idle.idleCpuPerNode * 100).toFixed(2)} % of a core and ${idle.idleBytesPerNodePerSecond.toFixed(0)} B/s per node`
    )
    const { records, busyCpuPerNode } = await publishWindow(swarm, n, o, async (k, from) => {
      const p = await swarm
        .hostOf(from)
        .call<{ key: string; at: number; bytes: number }>('publishRaw', { i: from, seq: k, bytes: payloadBytes, topic })
      return { ...p, from }
    })
    return {
      setup: `processes of ${o.perProcess}, TCP loopback`,
      system: 'raw gossipsub',
      nodes: n,
      ...summarize(records, n - 1),
      payloadBytes,
      idleCpuPerNode: idle.idleCpuPerNode,
      idleBytesPerNodePerSecond: idle.idleBytesPerNodePerSecond,
      busyCpuPerNode,
      rssPerNodeBytes: idle.rssPerNodeBytes,
      startSeconds
    }
  } finally {
    await swarm.stop()
  }
}
