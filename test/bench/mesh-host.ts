// A process of the hosted mesh benchmark (mesh-hosted.ts): some of a swarm's
// nodes, each on TCP loopback, so a swarm of hundreds spreads over a few
// processes (both cores, a socket read per message) instead of hundreds of
// processes or one event loop; the pattern of claims-host.ts. The nodes are
// agentd daemons or raw gossipsub nodes (agentd's libp2p stack and gossipsub
// options, nothing else), as the first `start` says. Each node notes when it
// took each message in, by the wall clock (one host, one clock), and the
// bench reads those times after the window, so nothing watches the nodes
// while they publish. Requests come over the IPC channel: { id, op, args } ->
// { id, value } or { id, error }.
import './quiet-logs.js'
import '../../src/polyfill.js'
import { randomUUID } from 'node:crypto'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { multiaddr } from '@multiformats/multiaddr'
import { Daemon } from '../../src/daemon/daemon.js'
import { createMeshNode, type MeshLibp2p } from '../../src/mesh/node.js'

type Args = Record<string, any>

/** the wall clock in ms with sub-ms precision: comparable between the processes of one host */
const wallNow = (): number => performance.timeOrigin + performance.now()

const daemons = new Map<number, Daemon>()
const raws = new Map<number, MeshLibp2p>()
/** per node: message key (entry id, or raw seq) -> when it took it in */
const seen = new Map<number, Map<string, number>>()
/** per node: when it started (its start call), for late joiners */
const startedAt = new Map<number, number>()
/** per daemon: the id of its latest own claim entry */
const lastOwnClaim = new Map<number, string>()

function note(i: number, key: string): void {
  let m = seen.get(i)
  if (m === undefined) seen.set(i, (m = new Map()))
  if (!m.has(key)) m.set(key, wallNow())
}

const findingBody = (k: number): { kind: string; text: string; paths: string[]; tags: string[] } => ({
  kind: 'failure',
  text: `approach ${k} does not work in the parser: the property tests fail on nested groups (bench ${randomUUID()})`,
  paths: [`src/parser/m${k}.ts`],
  tags: ['parser', `approach:${k}`]
})

const ops: Record<string, (a: Args) => unknown> = {
  startAgency: async ({ i, peers, dataDir, heartbeatMs, liveTimeoutMs, heartbeatMaxRate }) => {
    startedAt.set(i, wallNow())
    const d = new Daemon({
      dataDir,
      name: `n${i as number}`,
      listen: ['/ip4/127.0.0.1/tcp/0'],
      peers,
      grpc: null,
      metrics: null,
      processMetrics: false,
      heartbeatMs,
      liveTimeoutMs,
      heartbeatMaxRate
    })
    await d.start()
    // from its start on (a late joiner's catch-up is read from its log's size instead)
    d.logService.onAccepted(e => {
      note(i, e.id)
      if (e.entry.kind === 'claim' && e.entry.author === d.peerId) lastOwnClaim.set(i, e.id)
    })
    daemons.set(i, d)
    return {
      addr: d.node
        .getMultiaddrs()
        .map(String)
        .find(a => a.includes('/tcp/'))
    }
  },
  startRaw: async ({ i, peers, topic }) => {
    startedAt.set(i, wallNow())
    const node = await createMeshNode({ privateKey: await generateKeyPair('Ed25519'), listen: ['/ip4/127.0.0.1/tcp/0'] })
    await node.start()
    node.services.pubsub.subscribe(topic)
    node.services.pubsub.addEventListener('message', evt => {
      const data = evt.detail.data
      if (data.length >= 5) note(i, String(Buffer.from(data).readUInt32BE(1)))
    })
    for (const p of peers as string[]) await node.dial(multiaddr(p)).catch(() => {})
    raws.set(i, node)
    return {
      addr: node
        .getMultiaddrs()
        .map(String)
        .find(a => a.includes('/tcp/'))
    }
  },
  /** the fewest gossip subscribers any node here has */
  subscribers: ({ topic }) =>
    Math.min(
      ...[...daemons.values()].map(d => d.gossip.subscribers()),
      ...[...raws.values()].map(r => r.services.pubsub.getSubscribers(topic).length)
    ),
  addTasks: async ({ tasks }) => {
    await daemons
      .get(0)
      ?.boardService.addTasks(
        (tasks as string[]).map(id => ({ id, title: id, description: '', deps: [], scope: [`src/t/${id}.ts`], priority: 0 }))
      )
  },
  /** the fewest of `tasks` any daemon here sees */
  tasksSeen: ({ tasks }) =>
    Math.min(
      ...[...daemons.values()].map(
        d =>
          (tasks as string[]).filter(id => {
            try {
              d.boardService.task(id)
              return true
            } catch {
              return false
            }
          }).length
      )
    ),
  /** a claim (on `task`) or a finding from daemon i: its id, its size on the wire, and when the call began and ended */
  publishAgency: async ({ i, k, task }) => {
    const d = daemons.get(i) as Daemon
    const at = wallNow()
    if (task !== undefined) {
      lastOwnClaim.delete(i)
      await d.boardService.claim(task, [], true)
      const id = lastOwnClaim.get(i) ?? ''
      return { key: id, at, acked: wallNow(), bytes: (d.logService.state.get(id)?.bytes.length ?? 0) + 1 }
    }
    const stored = await d.logService.append('finding', findingBody(k))
    return { key: stored.id, at, acked: wallNow(), bytes: stored.bytes.length + 1 }
  },
  publishRaw: async ({ i, seq, bytes, topic }) => {
    const data = Buffer.alloc(bytes as number)
    data[0] = 1
    data.writeUInt32BE(seq, 1)
    for (let j = 5; j < data.length; j++) data[j] = Math.floor(Math.random() * 256)
    const at = wallNow()
    note(i, String(seq))
    await (raws.get(i) as MeshLibp2p).services.pubsub.publish(topic, data).catch(() => {})
    return { key: String(seq), at, acked: wallNow(), bytes }
  },
  /** per node here: when it took in each of `keys` (null: not yet), and when it started */
  seen: ({ keys }) =>
    [...new Set([...daemons.keys(), ...raws.keys()])].map(i => ({
      i,
      startedAt: startedAt.get(i),
      times: (keys as string[]).map(k => seen.get(i)?.get(k) ?? null)
    })),
  /** per daemon here: how many entries its log holds */
  logSizes: () => [...daemons].map(([i, d]) => ({ i, entries: d.logService.state.size })),
  connections: () =>
    [...daemons.values()].map(d => d.node.getConnections().length).concat([...raws.values()].map(r => r.getConnections().length)),
  cpu: () => {
    const u = process.cpuUsage()
    return (u.user + u.system) / 1e6
  },
  rss: () => process.memoryUsage().rss,
  stop: async () => {
    await Promise.allSettled(
      [...daemons.values()].map(async d => {
        await d.stop()
      })
    )
    await Promise.allSettled(
      [...raws.values()].map(async r => {
        await r.stop()
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
