// Three real agentd processes on 127.0.0.1: the second and third bootstrap
// from the first, find each other, hear each other's announcements and carry
// a direct message exactly once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PROCESS_TEST_TIMEOUT_MS, ProcessCluster, type AgentdProcess } from '../../helpers/agentd-process.js'
import { waitFor } from '../../helpers/wait-for.js'
import { connectAgency } from '../../../src/client/agency.js'
import type { AgencyClient, Event, InboxMessage, PeerInfo } from '../../../src/gen/agency/v1/api.js'

const cluster = new ProcessCluster()
let first: AgentdProcess
let second: AgentdProcess
let third: AgentdProcess

beforeAll(async () => {
  first = await cluster.start({ name: 'first' })
  ;[second, third] = await Promise.all([
    cluster.start({ name: 'second', peers: [first.listenAddr] }),
    cluster.start({ name: 'third', peers: [first.listenAddr] })
  ])
}, PROCESS_TEST_TIMEOUT_MS)

afterAll(async () => {
  await cluster.cleanup()
})

function livePeerIds(peers: PeerInfo[]): string[] {
  return peers
    .filter(p => p.live)
    .map(p => p.peerId)
    .sort()
}

describe('three agentd processes', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('each lists the other two as live peers within 10 s', async () => {
    const daemons = [first, second, third]
    const othersOf = (d: AgentdProcess): string[] =>
      daemons
        .filter(o => o !== d)
        .map(o => o.peerId)
        .sort()
    // Polled over gRPC (a CLI process per poll is slow on a busy machine), then checked with the CLI.
    await waitFor(
      async () => {
        const views = await Promise.all(daemons.map(async d => livePeerIds(await d.peers()).join() === othersOf(d).join()))
        return views.every(Boolean)
      },
      { timeoutMs: 10_000, what: 'all three to list the other two' }
    )
    const listed = await Promise.all(daemons.map(async d => await d.agency<PeerInfo[]>('peers')))
    daemons.forEach((d, i) => {
      expect(livePeerIds(listed[i])).toEqual(othersOf(d))
      // Names travel with presence, so `agency send <name>` works.
      expect(listed[i].map(p => p.name).sort()).toEqual(
        daemons
          .filter(o => o !== d)
          .map(o => o.name)
          .sort()
      )
    })
  })

  it('delivers an announcement from the third to the other two', async () => {
    // One watcher through the CLI, one through the gRPC client, so both paths are covered.
    const cliEvents = cluster.follow<Event>(first.grpcAddr, ['events', '--follow'])
    const grpcEvents: Event[] = []
    const client = connectAgency(second.grpcAddr)
    const stream = client.stream(c => c.watchEvents({}))
    const reading = (async () => {
      for await (const e of stream) grpcEvents.push(e)
    })().catch(() => {})
    const thirdEvents = cluster.follow<Event>(third.grpcAddr, ['events', '--follow'])
    try {
      const text = `build is green ${Date.now()}`
      const heard = (events: Event[]): boolean =>
        events.some(e => e.type === 'announcement' && e.peerId === third.peerId && e.text === text)
      const res = await third.agency<{ id: string }>('announce', text)
      expect(res.id).not.toBe('')
      // A watcher's subscription is not acknowledged (and the CLI watcher may
      // still be starting), so announce again until both have heard it.
      await waitFor(
        async () => {
          if (heard(cliEvents.lines) && heard(grpcEvents)) return true
          await third.api.call((c: AgencyClient) => c.announce, { text })
          return false
        },
        { timeoutMs: 30_000, intervalMs: 1000, what: 'the announcement at the first and the second' }
      )
      const event = cliEvents.lines.find(e => e.type === 'announcement')!
      expect(event.peerName).toBe('third')
      // Gossip does not echo an announcement back to its author.
      expect(thirdEvents.lines.filter(e => e.type === 'announcement')).toEqual([])
    } finally {
      stream.cancel()
      await reading
      client.close()
      await cliEvents.stop()
      await thirdEvents.stop()
    }
  })

  it('delivers a direct message from the second to the third exactly once', async () => {
    const text = `please review src/mesh ${Date.now()}`
    const sent = await second.agency<{ id: string; to: string; thread: string }>('send', third.peerId, text)
    expect(sent.to).toBe(third.peerId)
    expect(sent.thread).toBe(sent.id)

    const copies = async (): Promise<InboxMessage[]> => (await third.inbox()).filter(m => m.id === sent.id)
    await waitFor(async () => (await copies()).length > 0, { what: "the message in the third's inbox" })
    // Retries are over once the sender's outbox is empty. A copy still on its
    // way was written before the ack emptied it; a later message from the
    // same sender (one delivery attempt per peer at a time) lands after it.
    await waitFor(async () => (await second.status()).outboxPending === 0, { what: "the second's outbox to drain" })
    const marker = await second.agency<{ id: string }>('send', third.peerId, `after ${sent.id}`)
    await waitFor(async () => (await third.inbox()).some(m => m.id === marker.id), { what: "the later message in the third's inbox" })
    const inbox = await third.agency<InboxMessage[]>('inbox')
    expect(inbox.filter(m => m.id === sent.id)).toHaveLength(1)
    expect(inbox.find(m => m.id === sent.id)).toMatchObject({ from: second.peerId, fromName: 'second', text, thread: sent.id, replyTo: '' })
    expect((await third.status()).inboxCount).toBe(2)
    // Nobody else got it.
    expect(await first.inbox()).toEqual([])
  })
})
