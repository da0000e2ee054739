// Fifty daemons in one process, meshed over the libp2p memory transport, all
// claim the same task at the same moment. The settle window must let every
// competing claim arrive before anyone answers: exactly one HELD, 49 LOST, and
// every node names the same winner, the one the holder rule picks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Daemon } from '../../../src/daemon/daemon.js'
import type { ClaimAnswer } from '../../../src/daemon/board-service.js'
import { compareOrder } from '../../../src/core/board/index.js'
import { Claim } from '../../../src/gen/agency/v1/log.js'
import { MemoryCluster, keepLinked, livePeerIds } from './helpers.js'
import { waitFor } from '../../helpers/wait-for.js'

const NODES = 50
const TASK = 'herd-task'

// Fifty daemons share one thread here, so everything one of them does costs
// fifty times over. Heartbeats are slow (liveness plays no part in the race),
// and the settle window, derived from gossip latency as in production, gets a
// floor above the time this one process needs to carry fifty claims to fifty
// nodes: in a real swarm each node has its own CPU and disk.
const TIMING = {
  heartbeatMs: 20_000,
  liveTimeoutMs: 600_000,
  syncIntervalMs: 5000,
  dmRetryMs: 60_000,
  settle: { minMs: 20_000, maxMs: 60_000 }
}

/**
 * Connects each node to two random earlier nodes (the second to the first
 * only): a mesh with redundant paths and no hub. The daemons' own dialers are
 * stopped first, or each would fill up to eight connections from the
 * addresses in the heartbeats, and those handshakes would cost more than the
 * race being tested.
 */
async function wire(nodes: Daemon[]): Promise<Array<[Daemon, Daemon]>> {
  for (const d of nodes) d.dialer.stop()
  const links: Array<[Daemon, Daemon]> = []
  for (let i = 1; i < nodes.length; i++) {
    const parents = new Set([Math.floor(Math.random() * i), Math.floor(Math.random() * i)])
    for (const j of parents) links.push([nodes[i], nodes[j]])
  }
  await keepLinked(links)
  return links
}

/** Every connection of every node carries the swarm topic. */
function gossipReady(nodes: Daemon[]): boolean {
  return nodes.every(d => {
    const subscribers = d.node.services.pubsub.getSubscribers(d.gossip.topic).length
    return subscribers > 0 && subscribers >= d.node.getConnections().length
  })
}

describe(`a thundering herd of ${NODES} daemons claiming one task`, () => {
  const cluster = new MemoryCluster()
  const nodes: Daemon[] = []
  let answers: ClaimAnswer[] = []
  let links: Array<[Daemon, Daemon]> = []

  beforeAll(async () => {
    for (let i = 0; i < NODES; i++) nodes.push(await cluster.start(TIMING))
    links = await wire(nodes)
    await waitFor(
      async () => {
        await keepLinked(links)
        return gossipReady(nodes)
      },
      { what: 'the gossip topic on every connection', timeoutMs: 180_000, intervalMs: 250 }
    )
    // A status line goes out in a heartbeat: every node hears of every other.
    for (const [i, d] of nodes.entries()) await d.setStatusLine(`herd member ${i}`)
    await waitFor(
      async () => {
        await keepLinked(links)
        return nodes.every(d => livePeerIds(d).length >= NODES - 1)
      },
      { what: `every node to see ${NODES - 1} live peers`, timeoutMs: 180_000, intervalMs: 250 }
    )
    await nodes[0].boardService.addTask({
      id: TASK,
      title: 'everyone wants this',
      description: '',
      deps: [],
      scope: ['src/herd/**'],
      priority: 0
    })
    await waitFor(
      async () => {
        await keepLinked(links)
        return nodes.every(d => d.boardService.board.task(TASK, d.boardService.now()) != null)
      },
      { what: `task ${TASK} on every node`, timeoutMs: 180_000, intervalMs: 250 }
    )
    // Each call checks and appends its claim before any gossip is handled:
    // fifty claims at epoch 1, at once.
    answers = await Promise.all(nodes.map(async d => await d.boardService.claim(TASK, [])))
  }, 600_000)

  afterAll(async () => {
    await cluster.cleanup()
  }, 60_000)

  it('answers HELD to exactly one node and LOST to all the others', () => {
    const held = answers.filter(a => a.outcome === 'HELD')
    const lost = answers.filter(a => a.outcome === 'LOST')
    expect(held).toHaveLength(1)
    expect(lost).toHaveLength(NODES - 1)
    expect(answers.every(a => a.epoch === 1)).toBe(true)
  })

  it('has every LOST answer name the node that got HELD', () => {
    const winnerIndex = answers.findIndex(a => a.outcome === 'HELD')
    const winner = nodes[winnerIndex].peerId
    expect(answers[winnerIndex].winner).toBe(winner)
    const named = new Set(answers.filter(a => a.outcome === 'LOST').map(a => a.winner))
    expect([...named]).toEqual([winner])
  })

  it('picks the winner by the holder rule: the smallest (lamport, author) claim', () => {
    const winner = answers.find(a => a.outcome === 'HELD')?.winner
    const claims = nodes[0].logService.state
      .afterCursor(0)
      .filter(e => e.entry.kind === 'claim')
      .map(e => ({ id: e.id, author: e.entry.author, seq: e.entry.seq, lamport: e.entry.lamport, body: Claim.decode(e.entry.body) }))
      .filter(c => c.body.task === TASK && c.body.epoch === 1)
    expect(claims).toHaveLength(NODES)
    const smallest = [...claims].sort(compareOrder)[0]
    expect(smallest.author).toBe(winner)
  })

  it('converges every board on the same holder, with the losers released', async () => {
    const winner = answers.find(a => a.outcome === 'HELD')?.winner
    // Every loser releases its claim; wait until each node has all of them.
    const short = (): string =>
      nodes
        .map((d, i) => {
          const kinds = d.logService.state.countsByKind()
          return { i, claims: kinds.get('claim') ?? 0, releases: kinds.get('release') ?? 0 }
        })
        .filter(n => n.claims !== NODES || n.releases !== NODES - 1)
        .map(n => `node ${n.i}: ${n.claims} claims, ${n.releases} releases`)
        .join('; ')
    await waitFor(
      async () => {
        await keepLinked(links)
        const missing = short()
        if (missing !== '') throw new Error(missing)
        return true
      },
      { what: 'every node to hold every claim and release', timeoutMs: 240_000, intervalMs: 250 }
    )
    const holders = nodes.map(d => d.boardService.board.holder(TASK))
    for (const h of holders) expect(h).toMatchObject({ holder: winner, epoch: 1 })
    // The winner's heartbeat carries the lease; the losers hold nothing.
    for (const d of nodes) expect(d.boardService.held().map(h => h.task)).toEqual(d.peerId === winner ? [TASK] : [])
    // Losing a race leaves no hand-off notes: only a holder has any to give.
    for (const d of nodes) expect(d.boardService.task(TASK).handoff).toBeUndefined()
  }, 300_000)
})
