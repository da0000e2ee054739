// Twenty daemons in one process over the libp2p memory transport, each
// bootstrapped from node 0 and one earlier node, form one mesh: every node
// sees the other nineteen live, and every node hears one node's announcement.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { InProcessDaemons, memoryAddr, recordEvents } from '../../helpers/in-process-daemons.js'
import { waitFor } from '../../helpers/wait-for.js'
import type { Daemon } from '../../../src/daemon/daemon.js'

const COUNT = 20
const fleet = new InProcessDaemons()
let nodes: Daemon[] = []

beforeAll(async () => {
  // The default heartbeat (2 s): twenty daemons share one process and, in CI, two cores.
  const timing = { heartbeatMs: 2000, liveTimeoutMs: 15_000 }
  const first = await fleet.start({ name: 'node-00', ...timing })
  // The others start together. Their listen addresses are chosen up front so
  // each can bootstrap from node 0 and from one earlier node picked at random,
  // which may not be listening yet: the dialer retries it with backoff.
  const addrs = Array.from({ length: COUNT }, (_, i) => (i === 0 ? first.listenAddrs()[0] : memoryAddr(`mesh-${i}`)))
  const rest = await Promise.all(
    addrs.slice(1).map(async (listen, k) => {
      const i = k + 1
      const earlier = addrs[Math.floor(Math.random() * i)]
      return await fleet.start({
        name: `node-${String(i).padStart(2, '0')}`,
        listen: [listen],
        peers: [...new Set([addrs[0], earlier])],
        ...timing
      })
    })
  )
  nodes = [first, ...rest]
}, 240_000)

afterAll(async () => {
  await fleet.stopAll()
}, 60_000)

// Limits are generous: twenty libp2p nodes in one process are slow on a busy machine.
describe(`${COUNT} in-process daemons over the memory transport`, { timeout: 150_000 }, () => {
  it('listen on memory addresses only', () => {
    for (const n of nodes) expect(n.listenAddrs().every(a => a.startsWith('/memory/'))).toBe(true)
  })

  it('form one mesh: every node sees the other nineteen live', async () => {
    await waitFor(() => nodes.every(n => n.peers(false).length === COUNT - 1), {
      timeoutMs: 120_000,
      intervalMs: 250,
      what: 'every node to see 19 live peers'
    }).catch(err => {
      throw new Error(`${(err as Error).message}; ${describeMesh(nodes)}`)
    })
    for (const n of nodes) {
      const seen = n
        .peers(false)
        .map(p => p.peerId)
        .sort()
      expect(seen).toEqual(
        nodes
          .filter(o => o !== n)
          .map(o => o.peerId)
          .sort()
      )
    }
  })

  it("carries one node's announcement to every other node", async () => {
    const announcer = nodes[COUNT - 7]
    const recorders = nodes.map(n => recordEvents(n))
    try {
      const text = `stand-up in five ${Date.now()}`
      const id = await announcer.announce(text)
      const heard = (i: number): boolean =>
        recorders[i].events.some(e => e.type === 'announcement' && e.text === text && JSON.parse(e.detailJson).id === id)
      const others = nodes.map((_, i) => i).filter(i => nodes[i] !== announcer)
      await waitFor(() => others.every(heard), { timeoutMs: 60_000, what: 'the announcement at every node' }).catch(err => {
        const missing = others.filter(i => !heard(i)).map(i => nodes[i].name)
        throw new Error(`${(err as Error).message}; not heard by ${missing.join(', ')}; ${describeMesh(nodes)}`)
      })
      for (const i of others) {
        const e = recorders[i].events.find(e => e.type === 'announcement')!
        expect(e.peerId).toBe(announcer.peerId)
        expect(e.peerName).toBe(announcer.name)
      }
      // Exactly once at each node, and never echoed back to the announcer.
      for (const i of others) expect(recorders[i].events.filter(e => e.type === 'announcement')).toHaveLength(1)
      expect(recorders[nodes.indexOf(announcer)].events.filter(e => e.type === 'announcement')).toEqual([])
    } finally {
      for (const r of recorders) r.stop()
    }
  })
})

/** Per node: live peers, open connections and gossip subscribers, to tell a dial problem from a gossip problem. */
function describeMesh(nodes: Daemon[]): string {
  return (
    'live/connections/subscribers per node: ' +
    nodes.map(n => `${n.name}:${n.peers(false).length}/${n.node.getConnections().length}/${n.gossip.subscribers()}`).join(' ')
  )
}
