// A process of bench:claims that runs some of the swarm's daemons (forked by
// claims.bench.ts with --daemons-per-process): each daemon on TCP loopback
// with its own gRPC server on 127.0.0.1, as agentd runs them, so the
// daemons of one swarm spread over a few processes (both cores, a socket
// read per message) instead of 64 agentd processes or one event loop. It
// answers the bench's requests over the IPC channel: { id, op, args } ->
// { id, value } or { id, error }.
import './quiet-logs.js'
import '../../src/polyfill.js'
import { agencyHandlers, startGrpcServer, type GrpcServer } from '../../src/api/grpc-server.js'
import { Daemon } from '../../src/daemon/daemon.js'
import { ClaimsTrace } from './claims-trace.js'
import { Session } from 'node:inspector/promises'
import { mkdir, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'

const daemons = new Map<number, Daemon>()
const servers: GrpcServer[] = []
let trace: ClaimsTrace | undefined
let profiler: Session | undefined

type Args = Record<string, any>

const ops: Record<string, (a: Args) => unknown> = {
  start: async ({ i, peers, dataDir }) => {
    const d = new Daemon({
      dataDir,
      name: `a${i as number}`,
      listen: ['/ip4/127.0.0.1/tcp/0'],
      peers,
      grpc: null,
      metrics: null,
      processMetrics: false
    })
    await d.start()
    daemons.set(i, d)
    const s = await startGrpcServer('127.0.0.1:0', agencyHandlers(d))
    servers.push(s)
    return {
      peerId: d.peerId,
      addr: d.node
        .getMultiaddrs()
        .map(String)
        .find(a => a.includes('/tcp/')),
      grpc: s.address
    }
  },
  views: () =>
    [...daemons].map(([i, d]) => ({
      i,
      live: d.peers(false).length,
      entries: d.logService.state.size,
      connections: d.node.getConnections().length
    })),
  ready: () => [...daemons].map(([i, d]) => ({ i, count: d.boardService.board.ready(d.boardService.now()).length })),
  // the bench's task ids, as its other forms add them
  addTasks: async ({ tasks }) => {
    await daemons
      .get(0)
      ?.boardService.addTasks(
        (tasks as string[]).map(id => ({ id, title: id, description: '', deps: [], scope: [`src/${id}/**`], priority: 0 }))
      )
  },
  windows: () =>
    [...daemons].map(([i, d]) => ({ i, settleMs: d.boardService.settleMs(), p99: d.boardService.settle.p99(d.boardService.now()) })),
  settled: () =>
    [...daemons.values()].map(d => {
      const mine = d.boardService.protocol.mine()
      return { settled: mine.some(c => c.settled && c.done !== true), settling: mine.some(c => !c.settled) }
    }),
  cpu: () => {
    const u = process.cpuUsage()
    return (u.user + u.system) / 1e6
  },
  traceInit: () => {
    const order = [...daemons.keys()]
    trace = new ClaimsTrace(order.map(i => daemons.get(i) as Daemon))
    return order
  },
  traceStart: ({ t0 }) => {
    trace?.start(t0)
  },
  traceSteps: () => ({ agents: trace?.agents ?? [], loop: trace?.loopDelay(), counts: trace?.counts }),
  // --cpu-prof: this process's profile over the claims
  profileStart: async () => {
    profiler = new Session()
    profiler.connect()
    await profiler.post('Profiler.enable')
    await profiler.post('Profiler.start')
  },
  profileStop: async ({ file }) => {
    if (profiler === undefined) return
    const { profile } = await profiler.post('Profiler.stop')
    profiler.disconnect()
    profiler = undefined
    await mkdir(dirname(file as string), { recursive: true })
    await writeFile(file as string, JSON.stringify(profile))
  },
  stop: async () => {
    await Promise.allSettled(
      servers.map(async s => {
        await s.close()
      })
    )
    await Promise.allSettled(
      [...daemons.values()].map(async d => {
        await d.stop()
      })
    )
  }
}

process.on('message', (m: { id: number; op: string; args: Args }) => {
  void Promise.resolve()
    .then(async () => await ops[m.op](m.args ?? {}))
    .then(
      value => ({ id: m.id, value }),
      (err: Error) => ({ id: m.id, error: err.message })
    )
    .then(reply => {
      process.send?.(reply, () => {
        if (m.op === 'stop') process.exit(0)
      })
    })
})
process.on('disconnect', () => {
  process.exit(0)
})
