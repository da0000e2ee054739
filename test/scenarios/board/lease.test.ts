// Leases ride on presence, across real agentd processes. A holder that is
// SIGKILLed stops sending heartbeats; once its lease has run out on a peer's
// own clock, that peer can take the task over at the next epoch and receives
// the hand-off (notes and branch) and the previous holder's name. When the old
// holder comes back on the same data dir and hears of the takeover, it tells
// its agent that the claim is lost, and stops listing it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ClaimOutcome } from '../../../src/gen/agency/v1/api.js'
import { EventStream, ProcessCluster, readLog, rejectionOf, type AgentdProcess } from './helpers.js'
import { waitFor } from '../../helpers/wait-for.js'

const TASK = 'lease-task'
const NOTE = 'tried a trie first: too slow on 1e6 keys; see the branch'
const BRANCH = 'agency/c/lease-task'

async function taskOn(d: AgentdProcess): Promise<Record<string, any> | undefined> {
  return (await d.client.call(c => c.getTask, { id: TASK })).task as Record<string, any> | undefined
}

async function livePeers(d: AgentdProcess): Promise<string[]> {
  const { peers } = await d.client.call(c => c.listPeers, { includeOffline: false })
  return peers.map(p => p.peerId)
}

describe('a lease expires when its holder is killed', () => {
  const cluster = new ProcessCluster()
  let a: AgentdProcess // the holder that is killed and comes back
  let b: AgentdProcess // takes the task over
  let c: AgentdProcess // left notes on the task before a took it

  beforeAll(async () => {
    a = await cluster.start('a')
    b = await cluster.start('b', a.addrs)
    c = await cluster.start('c', [...a.addrs, ...b.addrs])
    for (const d of [a, b, c]) {
      const others = [a, b, c].filter(x => x !== d).map(x => x.peerId)
      await waitFor(async () => (await livePeers(d)).filter(p => others.includes(p)).length === 2, {
        what: `${d.name} to see the other two live`
      })
    }
    await c.client.call(x => x.addTask, {
      id: TASK,
      title: 'index the keys',
      description: '',
      deps: [],
      scope: ['src/index/**'],
      priority: 0
    })
    for (const d of [a, b]) await waitFor(async () => await taskOn(d).catch(() => undefined), { what: `${TASK} on ${d.name}` })
  }, 120_000)

  afterAll(async () => {
    await cluster.cleanup()
  }, 60_000)

  it("hands c's notes to a, who takes the released task at epoch 2", async () => {
    const first = await c.client.call(x => x.claim, { task: TASK, scope: [], noWait: false })
    expect(first).toMatchObject({ outcome: ClaimOutcome.CLAIM_HELD, epoch: 1 })
    await c.client.call(x => x.release, { task: TASK, note: NOTE, branch: BRANCH })
    await waitFor(async () => (await taskOn(a))?.state === 'open', { what: "c's release on a" })

    const taken = await a.client.call(x => x.claim, { task: TASK, scope: [], noWait: false })
    expect(taken).toMatchObject({ outcome: ClaimOutcome.CLAIM_HELD, epoch: 2, winner: a.peerId, handoff: NOTE, branch: BRANCH })
    await waitFor(async () => (await taskOn(b))?.holder === a.peerId, { what: "a's claim on b" })
  }, 60_000)

  it("refuses b a claim while a's lease is live", async () => {
    const err = await rejectionOf(async () => await b.client.call(x => x.claim, { task: TASK, scope: [], noWait: false }))
    expect(err.code).toBe('FAILED_PRECONDITION')
    expect(await taskOn(b)).toMatchObject({ state: 'claimed', holder: a.peerId, epoch: 2, holderLive: true })
  })

  it('lets b take the task over at epoch 3 once a is killed and its lease has run out', async () => {
    const heldBefore = a.peerId
    await a.kill('SIGKILL')
    // The lease runs out on b's clock: the task shows as expired, still naming a.
    const expired = await waitFor(
      async () => {
        const t = await taskOn(b)
        return t?.state === 'expired' && t
      },
      { what: 'the task to expire on b', timeoutMs: 30_000, intervalMs: 200 }
    )
    expect(expired).toMatchObject({ holder: heldBefore, epoch: 2, holderLive: false })
    const ready = await b.client.call(x => x.ready, {})
    expect(ready.tasks.map(t => t.id)).toContain(TASK)

    const takeover = await b.client.call(x => x.claim, { task: TASK, scope: [], noWait: false })
    // The takeover carries the hand-off that reached a (from c) forward.
    expect(takeover).toMatchObject({ outcome: ClaimOutcome.CLAIM_HELD, epoch: 3, winner: b.peerId, handoff: NOTE, branch: BRANCH })

    // The claim entry names the holder it takes over from, with the notes.
    const claims = (await readLog(b.client)).filter(e => e.kind === 'claim' && e.author === b.peerId).map(e => JSON.parse(e.bodyJson))
    expect(claims).toEqual([expect.objectContaining({ task: TASK, epoch: 3, takeoverOf: heldBefore, handoff: NOTE, branch: BRANCH })])

    await waitFor(
      async () => {
        const t = await taskOn(c)
        return t?.holder === b.peerId && t.epoch === 3
      },
      { what: 'c to see b as the holder at epoch 3' }
    )
    expect(await taskOn(c)).toMatchObject({ state: 'claimed', holder: b.peerId, epoch: 3, handoff: NOTE, branch: BRANCH })
  }, 60_000)

  it('tells the old holder, restarted on its data dir, that its claim is lost', async () => {
    // a comes back with no bootstrap peers, so nothing reaches it before it is watched.
    a.peers = []
    await a.start()
    const events = new EventStream(a.client)
    try {
      // Its own record still says it holds the task at epoch 2: it has not
      // heard. (This call, on the same channel, also comes back only after the
      // daemon has taken the WatchEvents call, so no event is missed.)
      const before = await a.client.call(x => x.getStatus, {})
      expect(before.self?.claims).toEqual([{ task: TASK, epoch: 2 }])

      // A fresh daemon joins both sides: a hears of b's takeover through it.
      await cluster.start('d', [...a.addrs, ...b.addrs])
      const lost = await waitFor(() => events.ofType('claim_lost', 'claim_superseded').find(e => e.task === TASK), {
        what: 'a claim_lost or claim_superseded event on a',
        timeoutMs: 30_000
      })
      expect(lost.peerId).toBe(b.peerId)
      expect(JSON.parse(lost.detailJson)).toMatchObject({ epoch: 2, winner: b.peerId })

      const after = await a.client.call(x => x.getStatus, {})
      expect(after.self?.claims).toEqual([])
      expect(await taskOn(a)).toMatchObject({ holder: b.peerId, epoch: 3 })
    } finally {
      events.stop()
    }
  }, 90_000)
})
