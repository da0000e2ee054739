// A daemon's identity and mail survive it: a message sent while it is dead is
// delivered exactly once after it restarts on the same data dir; a second
// daemon on a data dir in use is refused; SIGTERM and SIGINT shut down
// cleanly; a restarted bootstrap peer is found again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PROCESS_TEST_TIMEOUT_MS, ProcessCluster, unusedPort, type AgentdProcess } from '../helpers/agentd-process.js'
import { waitFor } from '../helpers/wait-for.js'
import type { InboxMessage } from '../../src/gen/agency/v1/api.js'

const cluster = new ProcessCluster()
let first: AgentdProcess
let third: AgentdProcess

beforeAll(async () => {
  // The "first" and "third": the third bootstraps from the first.
  // (The second daemon of the three-daemon test plays no part in a restart.)
  // The first keeps one port, so that its address survives its own restart.
  first = await cluster.start({ name: 'first', listen: `/ip4/127.0.0.1/tcp/${await unusedPort()}`, liveTimeoutMs: 2000 })
  third = await cluster.start({ name: 'third', peers: [first.listenAddr], liveTimeoutMs: 2000 })
  await waitFor(async () => (await first.peers()).some(p => p.peerId === third.peerId && p.live), { what: 'the first to see the third' })
}, PROCESS_TEST_TIMEOUT_MS)

afterAll(async () => {
  await cluster.cleanup()
})

async function inboxCopies(d: AgentdProcess, id: string): Promise<InboxMessage[]> {
  return (await d.inbox()).filter(m => m.id === id)
}

async function sees(viewer: AgentdProcess, peerId: string, live: boolean): Promise<boolean> {
  return (await viewer.peers()).some(p => p.peerId === peerId && p.live === live)
}

describe('restarting a daemon', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('delivers a message queued while the recipient was killed exactly once, after it restarts with the same peer id', async () => {
    const peerId = third.peerId
    const killed = await third.kill('SIGKILL')
    expect(killed.signal).toBe('SIGKILL')
    // Its heartbeats stop, so it stops being live (but stays known). A daemon
    // that holds nothing beats up to 8 times less often and is waited for as
    // much longer: 16 s at this cluster's 2 s timeout.
    await waitFor(async () => await sees(first, peerId, false), { timeoutMs: 60_000, what: 'the killed third to stop being live' })

    const text = `queued while you were down ${Date.now()}`
    const sent = await first.agency<{ id: string; to: string }>('send', peerId, text)
    expect(sent.to).toBe(peerId)
    // Nobody is there to ack it: it waits in the outbox.
    expect((await first.agency('status', '--full')).outboxPending).toBe(1)

    await third.restart()
    expect(third.peerId).toBe(peerId)

    const [got] = await waitFor(
      async () => {
        const c = await inboxCopies(third, sent.id)
        return c.length > 0 ? c : undefined
      },
      { timeoutMs: 30_000, what: 'the queued message at the restarted daemon' }
    )
    expect(got).toMatchObject({ from: first.peerId, fromName: 'first', text })
    // Retries are over once the sender's outbox is empty. A copy still on its
    // way was written before the ack emptied it; a later message from the
    // same sender (one delivery attempt per peer at a time) lands after it.
    await waitFor(async () => (await first.status()).outboxPending === 0, { what: "the first's outbox to drain" })
    const marker = await first.agency<{ id: string }>('send', peerId, `after ${sent.id}`)
    await waitFor(async () => (await inboxCopies(third, marker.id)).length > 0, { what: 'the later message at the restarted daemon' })
    expect(await inboxCopies(third, sent.id)).toHaveLength(1)
    expect((await third.agency('status', '--full')).inboxCount).toBe(2)
  })

  it('refuses a second agentd on a data dir in use, and leaves the first running', async () => {
    const intruder = cluster.onDataDir(first.dataDir, { name: 'intruder' })
    const err = await intruder.start().then(
      () => undefined,
      (e: Error) => e
    )
    expect(err?.message).toContain('exited (1) before ready')
    expect(intruder.stderr).toContain(`data dir ${first.dataDir} is in use by another agentd`)
    expect(intruder.running).toBe(false)

    expect((await first.status()).self?.peerId).toBe(first.peerId)
  })

  it('exits 0 on SIGTERM and keeps its identity and inbox across a restart', async () => {
    const peerId = third.peerId
    const before = await third.inbox()
    expect(before).toHaveLength(2)

    expect(await third.stop()).toEqual({ code: 0, signal: null })
    expect(third.stderr).toContain('SIGTERM, shutting down')

    await third.restart()
    expect(third.peerId).toBe(peerId)
    expect(await third.agency<InboxMessage[]>('inbox')).toEqual(before)
    // And it rejoins the swarm (its peer directory starts empty on every start).
    await waitFor(async () => await sees(third, first.peerId, true), { what: 'the restarted third to see the first' })
  })

  it('is found again by a peer that bootstraps from it after it restarts', async () => {
    const { peerId, listenAddr } = first
    expect(await first.stop()).toEqual({ code: 0, signal: null })
    await waitFor(async () => await sees(third, peerId, false), { timeoutMs: 60_000, what: 'the third to notice the first is gone' })

    await first.restart()
    expect(first.peerId).toBe(peerId)
    expect(first.listenAddr).toBe(listenAddr)
    // The restarted first knows nobody; only the third's redialling can reconnect them.
    await waitFor(async () => (await third.peers()).some(p => p.peerId === peerId && p.live && p.connected), {
      timeoutMs: 30_000,
      what: 'the third to redial the first'
    })
    await waitFor(async () => await sees(first, third.peerId, true), { what: 'the first to see the third again' })
  })

  it('exits 0 on SIGINT', async () => {
    expect(await first.kill('SIGINT')).toEqual({ code: 0, signal: null })
    expect(first.stderr).toContain('SIGINT, shutting down')
  })
})
