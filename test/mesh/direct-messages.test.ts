// Direct messages: an ack that arrives while its message expires ends as
// delivered, once, never as both delivered and failed; a backlog larger than
// the receiver's rate is told to wait, not banned, and all of it arrives; the
// retry pass that skips an outbox it found empty still sends what is queued
// after that; a message the receiver cannot store is retried, not lost, and
// the sender is not struck for the receiver's full disk.
import { generateKeyPair } from '@libp2p/crypto/keys'
import { multiaddr } from '@multiformats/multiaddr'
import { afterEach, describe, expect, it } from 'vitest'
import { DirectMessage } from '../../src/gen/agency/v1/wire.js'
import { DirectMessaging, type DirectMessageStore } from '../../src/mesh/direct-messages.js'
import { createMeshNode, type MeshLibp2p } from '../../src/mesh/node.js'
import { openStore, type AgencyStore } from '../../src/store/open-store.js'
import { componentLogger } from '../../src/logger.js'
import { PeerGuard } from '../../src/mesh/peer-guard.js'
import { memoryAddr } from '../helpers/in-process-daemons.js'
import { waitFor } from '../helpers/wait-for.js'
import { tempDirs } from '../store/helpers.js'

const dirs = tempDirs()
const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
  await dirs.cleanup()
})

async function peer(): Promise<{ node: MeshLibp2p; store: AgencyStore }> {
  const node = await createMeshNode({ privateKey: await generateKeyPair('Ed25519'), listen: [memoryAddr('dm')] })
  await node.start()
  const store = await openStore(await dirs.make())
  cleanups.push(async () => {
    await node.stop()
    await store.close()
  })
  return { node, store }
}

/** A peer's message store as DirectMessaging sees it, with some of its calls replaced by the test's. */
function storeOf(p: { store: AgencyStore }, replaced: Partial<DirectMessageStore> = {}): DirectMessageStore {
  const m = p.store.messages
  return {
    listOutbox: async () => await m.listOutbox(),
    markDelivered: async id => await m.markDelivered(id),
    drop: async (id, reason) => await m.drop(id, reason),
    deliver: async (msg, at) => await m.deliver(msg, at),
    ...replaced
  }
}

/** A gate the test opens: until then, whatever awaits `closed` waits. */
function gate(): { closed: Promise<void>; open: () => void } {
  let open = (): void => {}
  const closed = new Promise<void>(resolve => {
    open = resolve
  })
  return { closed, open }
}

describe('direct messages', () => {
  it('an ack that arrives while the message expires ends as delivered, once', async () => {
    const [a, b] = [await peer(), await peer()]
    await a.node.dial(multiaddr(b.node.getMultiaddrs()[0]))

    // The receiver stores the message only when the test says so: the ack waits.
    const storing = gate()
    let storeCalls = 0
    const receiverStore = storeOf(b, {
      deliver: async (msg, at) => {
        storeCalls++
        await storing.closed
        return await b.store.messages.deliver(msg, at)
      }
    })
    const receiver = new DirectMessaging({ node: b.node, store: receiverStore, log: componentLogger('test-dm-b') })
    await receiver.start()

    // The sender's wall clock is the test's to move.
    let clock = 1_000_000
    let listings = 0
    const senderStore = storeOf(a, {
      listOutbox: async () => {
        listings++
        return await a.store.messages.listOutbox()
      }
    })
    const outcomes: string[] = []
    const sender = new DirectMessaging({
      node: a.node,
      store: senderStore,
      log: componentLogger('test-dm-a'),
      now: () => clock,
      attemptTimeoutMs: 60_000,
      hooks: {
        onDelivered: msg => {
          outcomes.push(`delivered ${msg.id}`)
        },
        onFailed: (msg, reason) => {
          outcomes.push(`failed ${msg.id} (${reason})`)
        }
      }
    })
    await sender.start()
    cleanups.push(async () => {
      await sender.stop()
      await receiver.stop()
    })

    const to = b.node.peerId.toString()
    const msg = DirectMessage.fromPartial({
      id: 'm1',
      from: a.node.peerId.toString(),
      fromName: 'a',
      to,
      thread: 'm1',
      text: 'hello',
      time: clock
    })
    await a.store.messages.enqueue(msg, { expiresAt: clock + 1000 })

    // The message is on the wire and the receiver is storing it ...
    const sending = sender.flushPeer(to)
    await waitFor(() => storeCalls === 1, { what: 'the receiver to be storing the message' })
    // ... when its TTL runs out and the retry timer looks at the outbox.
    clock += 5000
    const seen = listings
    const expiring = sender.flushAll()
    await waitFor(() => listings > seen, { what: 'the expiry pass to read the outbox' })
    storing.open()
    await Promise.all([sending, expiring])
    await sender.flushAll()

    expect(outcomes).toEqual(['delivered m1'])
    expect(await a.store.messages.outboxCount()).toBe(0)
    expect((await b.store.messages.inboxAfter(0, 10)).map(r => r.message.id)).toEqual(['m1'])
  }, 60_000)

  it("a backlog over the receiver's rate is answered busy and sent when there is room: nothing lost, no strike, no ban", async () => {
    const [a, b] = [await peer(), await peer()]
    await a.node.dial(multiaddr(b.node.getMultiaddrs()[0]))
    const bans: string[] = []
    // Budget: 5 messages per peer per second.
    const guard = new PeerGuard({
      dmPerWindow: 5,
      windowSeconds: 1,
      strikesPerMinute: 2,
      onBan: p => {
        bans.push(p)
      }
    })
    const receiver = new DirectMessaging({ node: b.node, store: b.store.messages, guard, log: componentLogger('test-dm-b') })
    const delivered: string[] = []
    const sender = new DirectMessaging({
      node: a.node,
      store: a.store.messages,
      log: componentLogger('test-dm-a'),
      hooks: {
        onDelivered: m => {
          delivered.push(m.id)
        }
      }
    })
    await receiver.start()
    await sender.start()
    cleanups.push(async () => {
      await sender.stop()
      await receiver.stop()
    })

    const to = b.node.peerId.toString()
    const ids = Array.from({ length: 17 }, (_, i) => `m${String(i).padStart(2, '0')}`)
    for (const id of ids) {
      await a.store.messages.enqueue(
        DirectMessage.fromPartial({ id, from: a.node.peerId.toString(), fromName: 'a', to, thread: id, text: id, time: Date.now() }),
        { expiresAt: Date.now() + 600_000 }
      )
    }
    // The first attempt delivers the budget and is told to come back.
    await sender.flushPeer(to)
    expect(delivered).toEqual(ids.slice(0, 5))
    expect(await a.store.messages.outboxCount()).toBe(12)
    // The retry timer's passes: none sends before the receiver has room again.
    await waitFor(
      async () => {
        await sender.flushAll()
        return delivered.length === ids.length
      },
      { what: 'the whole backlog to be delivered', timeoutMs: 30_000, intervalMs: 100 }
    )
    expect(delivered).toEqual(ids)
    expect((await b.store.messages.inboxAfter(0, 100)).map(r => r.message.id)).toEqual(ids)
    expect(bans).toEqual([])
    expect(guard.isBanned(a.node.peerId.toString())).toBe(false)
  }, 60_000)

  it('a message queued after a retry pass found the outbox empty is still retried until it is delivered', async () => {
    const [a, b] = [await peer(), await peer()]
    await a.node.dial(multiaddr(b.node.getMultiaddrs()[0]))
    let listings = 0
    const senderStore = storeOf(a, {
      listOutbox: async () => {
        listings++
        return await a.store.messages.listOutbox()
      }
    })
    const delivered: string[] = []
    const sender = new DirectMessaging({
      node: a.node,
      store: senderStore,
      log: componentLogger('test-dm-a'),
      hooks: {
        onDelivered: m => {
          delivered.push(m.id)
        }
      }
    })
    await sender.start()
    const receiver = new DirectMessaging({ node: b.node, store: b.store.messages, log: componentLogger('test-dm-b') })
    cleanups.push(async () => {
      await sender.stop()
      await receiver.stop()
    })

    // An empty outbox is read once; the passes after it read nothing.
    await sender.flushAll()
    await sender.flushAll()
    expect(listings).toBe(1)

    // Queued as the outbox queues (enqueue, then flushPeer); the receiver does not speak the protocol yet, so the attempt fails.
    const to = b.node.peerId.toString()
    await a.store.messages.enqueue(
      DirectMessage.fromPartial({
        id: 'late',
        from: a.node.peerId.toString(),
        fromName: 'a',
        to,
        thread: 'late',
        text: 'hello',
        time: Date.now()
      }),
      { expiresAt: Date.now() + 600_000 }
    )
    await sender.flushPeer(to)
    expect(delivered).toEqual([])

    // Once it does, the retry passes deliver it.
    await receiver.start()
    await waitFor(
      async () => {
        await sender.flushAll()
        return delivered.length === 1
      },
      { what: 'the queued message to be delivered by a retry pass', timeoutMs: 30_000, intervalMs: 100 }
    )
    expect(delivered).toEqual(['late'])
    expect((await b.store.messages.inboxAfter(0, 10)).map(r => r.message.id)).toEqual(['late'])
    expect(await a.store.messages.outboxCount()).toBe(0)
  }, 60_000)

  it('a message the receiver cannot store is not acked, nor the sender struck: a retry delivers it once', async () => {
    const [a, b] = [await peer(), await peer()]
    await a.node.dial(multiaddr(b.node.getMultiaddrs()[0]))
    // One strike more than this bans the sender.
    const guard = new PeerGuard({ strikesPerMinute: 1 })
    const malformed: string[] = []
    // The receiver's disk is full for its first two writes.
    let failures = 2
    const receiverStore = storeOf(b, {
      deliver: async (msg, at) => {
        if (failures > 0) {
          failures--
          throw new Error('IO error: 000003.log: No space left on device')
        }
        return await b.store.messages.deliver(msg, at)
      }
    })
    const receiver = new DirectMessaging({
      node: b.node,
      store: receiverStore,
      guard,
      log: componentLogger('test-dm-b'),
      hooks: {
        onMalformed: (p, why) => {
          malformed.push(`${p}: ${why}`)
        }
      }
    })
    const delivered: string[] = []
    const sender = new DirectMessaging({
      node: a.node,
      store: a.store.messages,
      log: componentLogger('test-dm-a'),
      hooks: {
        onDelivered: m => {
          delivered.push(m.id)
        }
      }
    })
    await receiver.start()
    await sender.start()
    cleanups.push(async () => {
      await sender.stop()
      await receiver.stop()
    })

    const to = b.node.peerId.toString()
    await a.store.messages.enqueue(
      DirectMessage.fromPartial({
        id: 'm1',
        from: a.node.peerId.toString(),
        fromName: 'a',
        to,
        thread: 'm1',
        text: 'hello',
        time: Date.now()
      }),
      { expiresAt: Date.now() + 600_000 }
    )
    // Not stored, not acked: the sender keeps it.
    await sender.flushPeer(to)
    expect(delivered).toEqual([])
    expect(await a.store.messages.outboxCount()).toBe(1)
    await sender.flushPeer(to)
    expect(delivered).toEqual([])

    // Room again: the retry is stored and acked, once.
    await waitFor(
      async () => {
        await sender.flushAll()
        return delivered.length === 1
      },
      { what: 'the message to be delivered by a retry', timeoutMs: 30_000, intervalMs: 100 }
    )
    expect(delivered).toEqual(['m1'])
    expect(await a.store.messages.outboxCount()).toBe(0)
    expect((await b.store.messages.inboxAfter(0, 10)).map(r => r.message.id)).toEqual(['m1'])
    expect(malformed).toEqual([])
    expect(guard.isBanned(a.node.peerId.toString())).toBe(false)
  }, 60_000)
})
