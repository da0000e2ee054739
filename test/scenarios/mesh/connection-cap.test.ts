// Twelve daemons in one process over the memory transport, all started at
// once and every one bootstrapped from node 0 alone (the worst case for a
// hub), each keeping 3 connections and closing the oldest above 5. No node
// ends up connected to the whole swarm, node 0 included, and the swarm still
// works as one: every node sees the others live and every claim on every
// board, and a direct message reaches a peer its sender holds no connection
// to. (Until a daemon greeted a peer once gossipsub knew the peer's topics,
// rather than at the connection, the hub's trimming and the newcomers'
// redials kept every newcomer's heartbeats from reaching anyone: each saw only
// the hub, and the hub nobody, on an idle machine every time.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { InProcessDaemons, recordEvents } from '../../helpers/in-process-daemons.js'
import { waitFor } from '../../helpers/wait-for.js'
import type { Daemon } from '../../../src/daemon/daemon.js'

const COUNT = 12
const MAX = 5
const TIMING = {
  heartbeatMs: 500,
  liveTimeoutMs: 30_000,
  syncIntervalMs: 1000,
  dmRetryMs: 500,
  settle: { fixedMs: 300 },
  connections: { target: 3, max: MAX }
}
const fleet = new InProcessDaemons()
let nodes: Daemon[] = []

const peersOf = (d: Daemon): Set<string> => new Set(d.node.getConnections().map(c => c.remotePeer.toString()))
const describeMesh = (): string =>
  'live/connections per node: ' + nodes.map(n => `${n.name}:${n.peers(false).length}/${n.node.getConnections().length}`).join(' ')

beforeAll(async () => {
  const first = await fleet.start({ name: 'cap-00', ...TIMING })
  const rest = await Promise.all(
    Array.from(
      { length: COUNT - 1 },
      async (_, k) => await fleet.start({ name: `cap-${String(k + 1).padStart(2, '0')}`, peers: [first.listenAddrs()[0]], ...TIMING })
    )
  )
  nodes = [first, ...rest]
}, 120_000)

afterAll(async () => {
  await fleet.stopAll()
}, 60_000)

describe(`${COUNT} daemons bootstrapped from one, at most ${MAX} connections each`, { timeout: 120_000 }, () => {
  it('see each other live while no node, the bootstrap node included, holds more than the cap', async () => {
    await waitFor(() => nodes.every(n => n.peers(false).length === COUNT - 1 && n.node.getConnections().length <= MAX), {
      timeoutMs: 90_000,
      what: `every node to see ${COUNT - 1} live peers over at most ${MAX} connections`
    }).catch(err => {
      throw new Error(`${(err as Error).message}; ${describeMesh()}`)
    })
    expect(Math.max(...nodes.map(n => n.node.getConnections().length))).toBeLessThanOrEqual(MAX)
    // Below a full mesh: some pair of nodes holds no connection.
    expect(nodes.some(n => peersOf(n).size < COUNT - 1)).toBe(true)
  })

  it("shows every node's claim on every board", async () => {
    const tasks = nodes.map((_, i) => ({
      id: `cap-task-${i}`,
      title: `task ${i}`,
      description: '',
      deps: [],
      scope: [`src/cap-${i}/**`],
      priority: 0
    }))
    await nodes[0].boardService.addTasks(tasks)
    await waitFor(() => nodes.every(d => tasks.every(t => d.boardService.board.task(t.id, d.boardService.now()) !== undefined)), {
      what: 'the tasks on every board',
      timeoutMs: 60_000
    })
    const answers = await Promise.all(nodes.map(async (d, i) => await d.boardService.claim(tasks[i].id, [])))
    expect(answers.map(a => a.outcome)).toEqual(Array(COUNT).fill('HELD'))
    await waitFor(
      () => nodes.every(d => tasks.every((t, i) => d.boardService.board.task(t.id, d.boardService.now())?.holder === nodes[i].peerId)),
      {
        what: 'every claim on every board',
        timeoutMs: 60_000
      }
    ).catch(err => {
      throw new Error(`${(err as Error).message}; ${describeMesh()}`)
    })
  })

  it('delivers a direct message to a peer the sender holds no connection to', async () => {
    const pair = await waitFor(
      () => {
        for (const a of nodes) {
          const b = nodes.find(o => o !== a && !peersOf(a).has(o.peerId))
          if (b !== undefined) return [a, b] as const
        }
        return undefined
      },
      { what: 'two nodes without a connection between them', timeoutMs: 30_000 }
    )
    const [from, to] = pair
    const heard = recordEvents(to)
    try {
      const text = `across the mesh ${Date.now()}`
      await from.sendMessage({ to: to.peerId, text })
      await waitFor(() => heard.events.some(e => e.type === 'message' && e.text === text && e.peerId === from.peerId), {
        what: 'the message at its recipient',
        timeoutMs: 30_000
      })
    } finally {
      heard.stop()
    }
  })
})
