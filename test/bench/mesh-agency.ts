// The agency side of the mesh benchmark in one process: N agentd over the
// libp2p memory transport (the TCP processes are in mesh-tcp-pair.ts). Each
// publishes claims (on tasks added first) and findings; every daemon's log
// reports when it accepted each one.
import { randomUUID } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { Daemon } from '../../src/daemon/daemon.js'
import { ownCpuSeconds, summarize, type SetupResult, type VisibilityRecord } from './mesh-stats.js'
import { waitFor } from '../helpers/wait-for.js'

export interface MeshRunOptions {
  /** claims and findings published, each */
  perKind: number
  /** pause between two publications */
  spacingMs: number
  /** how long to wait for the last peer */
  waitMs: number
  /** CPU is sampled over this idle window */
  idleMs: number
  /**
   * how long every setup stays untouched before its idle window, once it is
   * up: an idle swarm is one that has had nothing to do for a while (agency's
   * quiet heartbeats and anti-entropy slow down over their first ~20 s); the
   * same wait for raw gossipsub
   */
  settleMs?: number
  /** each node bootstraps to this many random earlier nodes */
  bootstrap: number
  /** agentd's heartbeat and lease */
  heartbeatMs: number
  liveTimeoutMs: number
  /** agentd's --heartbeat-max-rate for the TCP processes (default 16) */
  heartbeatMaxRate?: number
  /**
   * the total heartbeats per second all the daemons of one process may receive (default 400): each gets 1/N of it, at most heartbeatMaxRate
   */
  processHeartbeatBudget?: number
  /**
   * TCP: start every agentd with a metrics endpoint and print the gossip messages per kind of each window (costs the daemons a little CPU)
   */
  counts?: boolean
  /** give up on a setup whose nodes have not all started after this long */
  startBudgetMs?: number
  log: (line: string) => void
}

/**
 * The heartbeat budget of each of n daemons sharing one process (one core):
 * every heartbeat costs each receiver its share of noise, yamux, gossipsub and
 * an Ed25519 check, so n daemons at agentd's default of 16 a second each
 * would saturate the process long before n = 200. Spread over separate
 * hosts, each daemon would get the default.
 */
export function inProcessHeartbeatRate(n: number, o: Pick<MeshRunOptions, 'heartbeatMaxRate' | 'processHeartbeatBudget'>): number {
  return Math.max(1, Math.min(o.heartbeatMaxRate ?? 16, Math.floor((o.processHeartbeatBudget ?? 400) / n)))
}

function pickEarlier(addrs: string[], i: number, k: number): string[] {
  const out = new Set<string>()
  for (let j = 0; j < Math.min(k, i) * 3 && out.size < Math.min(k, i); j++) out.add(addrs[Math.floor(Math.random() * i)])
  return [...out]
}

const findingBody = (k: number): { kind: string; text: string; paths: string[]; tags: string[] } => ({
  kind: 'failure',
  text: `approach ${k} does not work in the parser: the property tests fail on nested groups (bench ${randomUUID()})`,
  paths: [`src/parser/m${k}.ts`],
  tags: ['parser', `approach:${k}`]
})

/** N daemons in this process over the memory transport. */
export async function agencyInProcess(n: number, o: MeshRunOptions): Promise<SetupResult> {
  const rssBefore = process.memoryUsage().rss
  const started = performance.now()
  const daemons: Daemon[] = []
  const dirs: string[] = []
  const addrs = Array.from({ length: n }, () => `/memory/agency-bench-${randomUUID()}`)
  const unsubscribe: Array<() => void> = []
  try {
    // started in batches; each bootstraps to a few earlier nodes (the dialer retries one not yet listening)
    const budget = o.startBudgetMs ?? 900_000
    for (let b = 0; b < n; b += 10) {
      if (performance.now() - started > budget) {
        throw new Error(
          `only ${b} of ${n} daemons had started after ${(budget / 1000).toFixed(0)} s (each daemon's upkeep while idle, its share of presence, anti-entropy, gossipsub and dialling, costs about 1.5–2 % of a core: ${n} daemons in one process need more than this machine has)`
        )
      }
      await Promise.all(
        addrs.slice(b, b + 10).map(async (listen, k) => {
          const i = b + k
          const dataDir = await mkdtemp(join(tmpdir(), 'agency-bench-mesh-'))
          dirs.push(dataDir)
          const d = new Daemon({
            dataDir,
            name: `n${i}`,
            listen: [listen],
            peers: pickEarlier(addrs, i, o.bootstrap),
            grpc: null,
            metrics: null,
            processMetrics: false,
            heartbeatMs: o.heartbeatMs,
            liveTimeoutMs: o.liveTimeoutMs,
            heartbeatMaxRate: inProcessHeartbeatRate(n, o)
          })
          await d.start()
          daemons[i] = d
        })
      )
    }
    const startSeconds = (performance.now() - started) / 1000
    o.log(`    agency × ${n} in-process: started in ${startSeconds.toFixed(0)} s`)
    await waitFor(() => daemons.every(d => d.gossip.subscribers() >= Math.min(n - 1, 2)), {
      what: 'every daemon to have gossip subscribers',
      timeoutMs: 300_000,
      intervalMs: 250
    })

    // tasks to claim, from node 0, seen everywhere
    const tasks = Array.from({ length: o.perKind }, (_, k) => `bench-task-${k}`)
    for (const id of tasks)
      await daemons[0].boardService.addTask({ id, title: id, description: '', deps: [], scope: [`src/t/${id}.ts`], priority: 0 })
    await waitFor(
      () =>
        daemons.every(d =>
          tasks.every(id => {
            try {
              d.boardService.task(id)
              return true
            } catch {
              return false
            }
          })
        ),
      { what: 'the tasks at every daemon', timeoutMs: 300_000, intervalMs: 250 }
    )

    await sleep(o.settleMs ?? 0)
    const cpu0 = ownCpuSeconds()
    await sleep(o.idleMs)
    const idleCpuPerNode = (ownCpuSeconds() - cpu0) / (o.idleMs / 1000) / n
    const rssPerNodeBytes = (process.memoryUsage().rss - rssBefore) / n

    // every daemon notes when it accepted each entry
    const seen = new Map<string, Map<number, number>>()
    const local = new Map<number, (id: string, kind: string) => void>()
    daemons.forEach((d, i) => {
      unsubscribe.push(
        d.logService.onAccepted(e => {
          const at = performance.now()
          let m = seen.get(e.id)
          if (m === undefined) seen.set(e.id, (m = new Map()))
          if (!m.has(i)) m.set(i, at)
          if (e.entry.author === d.peerId) local.get(i)?.(e.id, e.entry.kind)
        })
      )
    })
    const published: Array<{ id: string; kind: string; at: number; from: number; bytes: number }> = []
    const busy0 = ownCpuSeconds()
    const busyStart = performance.now()
    for (let k = 0; k < 2 * o.perKind; k++) {
      const from = Math.floor(Math.random() * n)
      const d = daemons[from]
      const at = performance.now()
      if (k % 2 === 0) {
        const task = tasks[k / 2]
        let id = ''
        local.set(from, (entryId, kind) => {
          if (kind === 'claim') id = entryId
        })
        await d.boardService.claim(task, [], true)
        local.delete(from)
        const bytes = d.logService.state.get(id)?.bytes.length ?? 0
        published.push({ id, kind: 'claim', at, from, bytes })
      } else {
        const stored = await d.logService.append('finding', findingBody(k))
        published.push({ id: stored.id, kind: 'finding', at, from, bytes: stored.bytes.length + 1 })
      }
      await sleep(o.spacingMs)
    }
    const everyone = (): boolean => published.every(p => (seen.get(p.id)?.size ?? 0) >= n)
    await waitFor(everyone, { what: 'every entry at every daemon', timeoutMs: o.waitMs, intervalMs: 250 }).catch(() => {})
    const busyCpuPerNode = (ownCpuSeconds() - busy0) / ((performance.now() - busyStart) / 1000) / n

    const records: VisibilityRecord[] = published.map(p => {
      const m = seen.get(p.id) ?? new Map<number, number>()
      const delays = [...m].filter(([i]) => i !== p.from).map(([, t]) => t - p.at)
      return { kind: p.kind, delays, missing: n - 1 - delays.length }
    })
    const sizes = published.map(p => p.bytes).filter(b => b > 0)
    return {
      setup: 'in-process, memory transport',
      system: 'agency',
      nodes: n,
      ...summarize(records, n - 1),
      payloadBytes: sizes.length === 0 ? 0 : Math.round(sizes.reduce((a, b) => a + b, 0) / sizes.length),
      idleCpuPerNode,
      busyCpuPerNode,
      rssPerNodeBytes,
      startSeconds
    }
  } finally {
    for (const u of unsubscribe) u()
    await Promise.allSettled(
      daemons
        .filter(d => d !== undefined)
        .map(async d => {
          await d.stop()
        })
    )
    await Promise.all(
      dirs.map(async dir => {
        await rm(dir, { recursive: true, force: true })
      })
    )
  }
}
