// bench:claims --daemons-per-process K: the swarm's daemons spread over
// ceil(N / K) processes of K daemons each (claims-host.ts), TCP on loopback,
// a gRPC server each; the bench's process keeps only the clients. Daemon i
// runs in process i mod P, daemon 0 first, then in batches of 8, each bootstrapped from
// daemon 0 and one earlier daemon (as the other forms).
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { forkIpcHost, type IpcHost } from './ipc-host.js'
import { connectAgency } from '../../src/client/agency.js'
import { absoluteNow, ClaimsTrace, type AgentTrace, type GossipCounts, type LoopDelay } from './claims-trace.js'

type Host = IpcHost

function startHost(): Host {
  return forkIpcHost(fileURLToPath(new URL('./claims-host.ts', import.meta.url)), { what: 'a daemon process' })
}

export interface HostedSwarm {
  mode: string
  clients: ReturnType<typeof connectAgency>[]
  peerIds: string[]
  views: () => Promise<Array<{ live: number; entries: number; connections: number }>>
  readyCounts: () => Promise<number[]>
  addTasks: (tasks: unknown[]) => Promise<void>
  windows: () => Promise<Array<{ settleMs: number; p99?: number }>>
  diagnose: () => Promise<string>
  cpuSeconds: () => Promise<number>
  trace?: { t: ClaimsTrace; start: () => Promise<void>; collect: () => Promise<void> }
  /** profiles every daemon process from now; the function returned writes <dir>/<name>-<process>.cpuprofile */
  profile: () => Promise<(dir: string, name: string) => Promise<void>>
  stop: () => Promise<void>
}

export async function hostedSwarm(n: number, root: string, perProcess: number, trace: boolean): Promise<HostedSwarm> {
  const hosts = Array.from({ length: Math.ceil(n / perProcess) }, startHost)
  const hostOf = (i: number): Host => hosts[i % hosts.length]
  const started: Array<{ peerId: string; addr: string; grpc: string }> = []
  const stop = async (): Promise<void> => {
    await Promise.allSettled(hosts.map(async h => await h.call('stop')))
    for (const h of hosts) h.child.kill()
  }
  try {
    // daemon 0 first: every other is bootstrapped from it (TCP addresses are known once a daemon listens)
    started[0] = await hostOf(0).call('start', { i: 0, peers: [], dataDir: join(root, 'a0') })
    for (let b = 1; b < n; b += 8) {
      await Promise.all(
        Array.from({ length: Math.min(8, n - b) }, async (_, k) => {
          const i = b + k
          const peers = [...new Set([started[0].addr, started[Math.floor(Math.random() * b)].addr])]
          started[i] = await hostOf(i).call('start', { i, peers, dataDir: join(root, `a${i}`) })
        })
      )
    }
  } catch (err) {
    await stop()
    throw err
  }
  const clients = started.map(s => connectAgency(s.grpc))
  // per host, its daemons' answers, put back in daemon order
  const gather = async <T extends { i: number }>(op: string): Promise<T[]> => {
    const out: T[] = []
    for (const part of await Promise.all(hosts.map(async h => await h.call<T[]>(op)))) for (const x of part) out[x.i] = x
    return out
  }
  const t = trace ? new ClaimsTrace(n) : undefined
  let orders: number[][] = []
  return {
    mode: `${n} daemons in ${hosts.length} processes of up to ${perProcess}, TCP on loopback, a gRPC server each on 127.0.0.1`,
    clients,
    peerIds: started.map(s => s.peerId),
    views: async () => await gather<{ i: number; live: number; entries: number; connections: number }>('views'),
    readyCounts: async () => (await gather<{ i: number; count: number }>('ready')).map(r => r.count),
    addTasks: async tasks => {
      await hosts[0].call('addTasks', { tasks })
    },
    windows: async () => await gather<{ i: number; settleMs: number; p99?: number }>('windows'),
    // Answered in the protocol (HELD at the daemon) against HELD at the clients: where an answer waits.
    diagnose: async () => {
      const all = (await Promise.all(hosts.map(async h => await h.call<Array<{ settled: boolean; settling: boolean }>>('settled')))).flat()
      return `daemons with a claim settled ${all.filter(x => x.settled).length}, settling ${all.filter(x => x.settling).length}`
    },
    cpuSeconds: async () => (await Promise.all(hosts.map(async h => await h.call<number>('cpu')))).reduce((x, y) => x + y, 0),
    profile: async () => {
      await Promise.all(
        hosts.map(async h => {
          await h.call('profileStart')
        })
      )
      return async (dir, name) => {
        await Promise.all(
          hosts.map(async (h, k) => {
            await h.call('profileStop', { file: join(dir, `${name}-${k}.cpuprofile`) })
          })
        )
      }
    },
    ...(t === undefined
      ? {}
      : {
          trace: {
            t,
            start: async () => {
              orders = await Promise.all(hosts.map(async h => await h.call<number[]>('traceInit')))
              const t0 = absoluteNow()
              t.start(t0)
              await Promise.all(
                hosts.map(async h => {
                  await h.call('traceStart', { t0 })
                })
              )
            },
            collect: async () => {
              const steps = await Promise.all(
                hosts.map(async h => await h.call<{ agents: AgentTrace[]; loop: LoopDelay; counts: GossipCounts }>('traceSteps'))
              )
              steps.forEach((s, h) => {
                s.agents.forEach((a, k) => {
                  t.merge(orders[h][k], a)
                })
                t.mergeLoop(s.loop)
                t.mergeCounts(s.counts)
              })
            }
          }
        }),
    stop: async () => {
      for (const c of clients) c.close()
      await stop()
    }
  }
}
