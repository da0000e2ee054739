// Hostile input against a running daemon, from a raw libp2p node that speaks
// the swarm's gossip and sync protocols but follows none of the rules. A third,
// honest node is connected only through the daemon: whatever the daemon
// forwards, it sees. Forged, tampered, replayed-and-changed and oversized
// entries are rejected, counted and never forwarded; a fork is detected and
// reported; malformed bytes on gossip and on the sync stream crash nothing.
import { randomBytes } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { lpStream, type LengthPrefixedStream } from '@libp2p/utils'
import type { Stream } from '@libp2p/interface'
import { createSigner, type Signer } from '../../../src/core/log/crypto.js'
import { encodeEntry, entryId, idOfBytes, signEntry } from '../../../src/core/log/entry.js'
import { encodeBody } from '../../../src/core/log/kinds.js'
import { MAX_ENTRY_BYTES } from '../../../src/core/log/limits.js'
import type { Daemon } from '../../../src/daemon/daemon.js'
import type { Event } from '../../../src/gen/agency/v1/api.js'
import { Entry } from '../../../src/gen/agency/v1/log.js'
import { ForkProof, SyncBatch, SyncRequest } from '../../../src/gen/agency/v1/wire.js'
import { logInfo } from '../../../src/api/log-handlers.js'
import { SYNC_PROTOCOL, swarmTopic } from '../../../src/mesh/constants.js'
import { encodeEntryGossip, encodeForkProofGossip, GossipType } from '../../../src/mesh/gossip-codec.js'
import { createMeshNode, type MeshLibp2p } from '../../../src/mesh/node.js'
import { vectorToWire } from '../../../src/core/log/version-vector.js'
import { addrsOf, InProcessDaemons, memoryAddr, counterValue } from './helpers.js'
import { makeIdentity, type TestIdentity as Identity } from '../../helpers/identity.js'
import { waitFor } from '../../helpers/wait-for.js'

const TOPIC = swarmTopic('default')

/** One author's feed, built by hand so that it can also be abused. */
class Feed {
  seq = 0
  lamport = 0
  prev: Uint8Array = new Uint8Array(0)
  constructor(readonly signer: Signer) {}

  /** The next entry, signed but not yet part of the feed. */
  draft(text: string): Entry {
    return signEntry(this.signer, {
      seq: this.seq + 1,
      prev: this.prev,
      lamport: this.lamport + 1,
      time: Date.now(),
      kind: 'finding',
      body: encodeBody('finding', { kind: 'note', text })
    })
  }

  /** Makes `e` (a draft of this feed) the feed's last entry. */
  commit(e: Entry): Entry {
    this.seq = e.seq
    this.lamport = e.lamport
    this.prev = entryId(e)
    return e
  }

  next(text: string): Entry {
    return this.commit(this.draft(text))
  }
}

function idOf(e: Entry): string {
  return idOfBytes(encodeEntry(e))
}

/** A raw node on the memory transport with the daemon's libp2p settings and no validator. */
async function rawNode(id: Identity, label: string): Promise<MeshLibp2p> {
  const node = await createMeshNode({ privateKey: id.privateKey, listen: [memoryAddr(label)] })
  await node.start()
  node.services.pubsub.subscribe(TOPIC)
  return node
}

/** What the gossipsub implementation offers beyond its public interface. */
interface GossipInternals {
  getMeshPeers: (topic: string) => string[]
  getScore: (peer: string) => number
}

function internals(node: MeshLibp2p): GossipInternals {
  return node.services.pubsub as unknown as GossipInternals
}

describe('a daemon under hostile input', () => {
  const daemons = new InProcessDaemons()
  const rawNodes: MeshLibp2p[] = []
  let target: Daemon
  let observer: MeshLibp2p
  /** an author whose entries any raw node may publish */
  let mallory: Feed
  const seenByObserver = new Set<string>()
  const events: Event[] = []

  const seen = (frame: Uint8Array): boolean => seenByObserver.has(Buffer.from(frame).toString('hex'))

  /**
   * A raw node connected to the daemon only, in its gossip mesh. Each case
   * gets its own, so that the score one earns does not decide the next case.
   */
  async function connectRaw(label: string, id?: Identity): Promise<MeshLibp2p> {
    const node = await rawNode(id ?? (await makeIdentity()), label)
    rawNodes.push(node)
    await node.dial(target.node.getMultiaddrs())
    await waitFor(
      () =>
        node.services.pubsub.getSubscribers(TOPIC).some(p => p.equals(target.node.peerId)) &&
        target.node.services.pubsub.getSubscribers(TOPIC).some(p => p.equals(node.peerId)),
      { what: `${label} and the daemon to see each other on the topic` }
    )
    return node
  }

  async function publish(from: MeshLibp2p, frame: Uint8Array): Promise<void> {
    await from.services.pubsub.publish(TOPIC, frame)
  }

  async function entryVerdicts(verdict: string): Promise<number> {
    return await counterValue(target.metrics.gossipIn, { kind: 'entry', verdict })
  }

  /** Publishes a valid entry and waits until the observer has it through the daemon. */
  async function publishHonest(from: MeshLibp2p, e: Entry): Promise<void> {
    const frame = encodeEntryGossip(encodeEntry(e))
    await publish(from, frame)
    await waitFor(() => seen(frame), { what: 'the observer to receive a valid entry through the daemon' })
  }

  beforeAll(async () => {
    target = await daemons.start({ name: 'target' })
    target.events.subscribe(e => {
      events.push(e)
    })
    observer = await rawNode(await makeIdentity(), 'observer')
    rawNodes.push(observer)
    observer.services.pubsub.addEventListener('message', evt => {
      if (evt.detail.topic === TOPIC) seenByObserver.add(Buffer.from(evt.detail.data).toString('hex'))
    })
    await observer.dial(target.node.getMultiaddrs())
    await waitFor(() => internals(target.node).getMeshPeers(TOPIC).includes(observer.peerId.toString()), {
      what: 'the daemon to take the observer into its gossip mesh'
    })
    mallory = new Feed((await makeIdentity()).signer)
  }, 60_000)

  afterAll(async () => {
    await Promise.allSettled(
      rawNodes.map(async n => {
        await n.stop()
      })
    )
    await daemons.cleanup()
  }, 60_000)

  let forger: Identity
  let forgerNode: MeshLibp2p

  it('rejects forged, tampered, replayed-and-changed and oversized entries, and forwards none', async () => {
    forger = await makeIdentity()
    forgerNode = await connectRaw('forger', forger)
    await publishHonest(forgerNode, mallory.next('an honest first entry'))
    const first = target.logService.state.byAuthorSeq(mallory.signer.author, 1)
    expect(first).toBeDefined()
    const rejectedBefore = await entryVerdicts('reject')

    // author: the daemon itself; key: the forger's
    const forged = new Feed(createSigner(target.peerId, forger.raw)).draft('I am the target, trust me')
    const honest2 = mallory.draft('a second entry')
    const tampered = {
      ...honest2,
      body: Buffer.from(encodeBody('finding', { kind: 'note', text: 'a second entry, edited after signing' }))
    }
    const replayed = { ...first!.entry, time: first!.entry.time + 1 }
    const oversized = mallory.draft('x'.repeat(MAX_ENTRY_BYTES))
    const hostile = { forged, tampered, replayed, oversized }
    expect(encodeEntry(oversized).byteLength).toBeGreaterThan(MAX_ENTRY_BYTES)

    for (const e of Object.values(hostile)) await publish(forgerNode, encodeEntryGossip(encodeEntry(e)))
    await waitFor(async () => (await entryVerdicts('reject')) - rejectedBefore >= 4, {
      what: 'the daemon to judge all four hostile entries'
    })
    // a valid entry after them, which the observer does get: the path was open
    await publishHonest(forgerNode, mallory.commit(honest2))

    for (const [name, e] of Object.entries(hostile)) {
      expect(seen(encodeEntryGossip(encodeEntry(e))), `${name} was forwarded`).toBe(false)
      expect(target.logService.state.get(idOf(e)), `${name} is in the log`).toBeUndefined()
    }
    expect((await entryVerdicts('reject')) - rejectedBefore).toBe(4)
    expect(target.logService.state.byAuthorSeq(target.peerId, 1)).toBeUndefined()
    expect(target.logService.state.byAuthorSeq(mallory.signer.author, 2)?.id).toBe(idOf(honest2))

    const info = logInfo(target)
    expect(info.forks).toBe(0)
    expect(info.authors.find(a => a.author === mallory.signer.author)?.faulty).toBe(false)
    expect(await counterValue(target.metrics.logRejected, { reason: 'bad_signature' })).toBe(3)
    expect(info.rejected.bad_signature).toBe(3)
    // the oversized entry is counted as too large, in LogInfo and in metrics
    expect(await counterValue(target.metrics.logRejected, { reason: 'too_large' })).toBe(1)
    expect(info.rejected).toEqual({ bad_signature: 3, too_large: 1 })
  })

  it('bans a peer that keeps sending rejected entries, and forwards none of them', async () => {
    const spammerId = await makeIdentity()
    const spammer = await connectRaw('spammer', spammerId)
    const victim = new Feed(createSigner(target.peerId, spammerId.raw))
    const frames: Uint8Array[] = []
    // Far more than the guard tolerates in a minute; publishing stops working once it is banned.
    for (let i = 0; i < 40 && !target.guard.bannedPeers().includes(spammerId.id); i++) {
      const frame = encodeEntryGossip(encodeEntry(victim.draft(`forged ${i}`)))
      frames.push(frame)
      await publish(spammer, frame).catch(() => {})
      await sleep(20)
    }
    await waitFor(() => target.guard.bannedPeers().includes(spammerId.id), { what: 'the daemon to ban the spammer' })
    await waitFor(() => target.node.getConnections(spammer.peerId).length === 0, {
      what: 'the daemon to drop its connection to the spammer'
    })
    await expect(spammer.dial(target.node.getMultiaddrs())).rejects.toThrow()
    expect(frames.some(seen)).toBe(false)
    expect(target.logService.state.byAuthorSeq(target.peerId, 1)).toBeUndefined()
  })

  it('detects and reports a fork sent over gossip, and does not forward the second branch', async () => {
    const node = await connectRaw('forker')
    const a = mallory.draft('branch a')
    const b = mallory.draft('branch b')
    expect(idOf(a)).not.toBe(idOf(b))
    await publishHonest(node, mallory.commit(a))
    await publish(node, encodeEntryGossip(encodeEntry(b)))
    await waitFor(() => events.some(e => e.type === 'fork' && e.peerId === mallory.signer.author), { what: 'the fork to be reported' })

    const info = logInfo(target)
    expect(info.forks).toBe(1)
    expect(info.rejected.fork).toBe(1)
    expect(info.authors.find(x => x.author === mallory.signer.author)).toMatchObject({ seq: a.seq, faulty: true })
    expect(target.logService.state.forks[0]).toMatchObject({ author: mallory.signer.author, seq: a.seq })
    expect(target.logService.state.get(idOf(b))).toBeUndefined()
    // the next entry of the faulty author still arrives; the second branch never did
    await publishHonest(node, mallory.next('after the fork'))
    expect(seen(encodeEntryGossip(encodeEntry(b)))).toBe(false)
    // ...but the proof did: both entries, for replicas that hold only one branch.
    const proofs = [...seenByObserver]
      .map(hex => Buffer.from(hex, 'hex'))
      .filter(f => f[0] === GossipType.forkProof)
      .map(f => ForkProof.decode(f.subarray(1)))
    expect(proofs.map(p => [idOf(p.a as Entry), idOf(p.b as Entry)])).toEqual([[idOf(a), idOf(b)]])
  })

  it('marks a forked author faulty on a replica that only ever saw one branch, from the proof a peer gossiped', async () => {
    // A second daemon connected to the target only: the forker never reaches it.
    const bystander = await daemons.start({ name: 'bystander', peers: addrsOf(target) })
    const heard: Event[] = []
    bystander.events.subscribe(e => {
      heard.push(e)
    })
    await waitFor(() => internals(target.node).getMeshPeers(TOPIC).includes(bystander.node.peerId.toString()), {
      what: "the bystander in the target's gossip mesh"
    })
    const node = await connectRaw('second-forker')
    const author = new Feed((await makeIdentity()).signer)
    const a = author.draft('the branch everyone sees')
    const b = author.draft('the branch only the target sees')
    await publishHonest(node, author.commit(a))
    await waitFor(() => bystander.logService.state.get(idOf(a)) != null, { what: 'branch a at the bystander' })
    await publish(node, encodeEntryGossip(encodeEntry(b)))
    await waitFor(() => bystander.logService.state.isFaulty(author.signer.author), { what: 'the bystander to mark the author faulty' })
    expect(bystander.logService.state.get(idOf(b))).toBeUndefined()
    // (The bystander also learns, by sync, of the forks found before it joined: only this author's are counted here.)
    expect(heard.filter(e => e.type === 'fork' && e.peerId === author.signer.author)).toHaveLength(1)
    expect(bystander.logService.state.forks.filter(f => f.author === author.signer.author).map(f => [idOf(f.a), idOf(f.b)])).toEqual([
      [idOf(a), idOf(b)]
    ])
  })

  it('rejects a fork proof that does not prove a fork, and penalises its sender', async () => {
    const node = await connectRaw('false-accuser')
    const honest = new Feed((await makeIdentity()).signer)
    const one = honest.next('one')
    const other = new Feed((await makeIdentity()).signer).next('someone else at seq 1')
    const rejectedBefore = await counterValue(target.metrics.gossipIn, { kind: 'fork_proof', verdict: 'reject' })
    // Two authors, and the same entry twice: neither is a fork.
    await publish(node, encodeForkProofGossip({ a: one, b: other }))
    await publish(node, encodeForkProofGossip({ a: one, b: one }))
    await waitFor(
      async () => (await counterValue(target.metrics.gossipIn, { kind: 'fork_proof', verdict: 'reject' })) >= rejectedBefore + 2,
      { what: 'both proofs rejected' }
    )
    expect(target.logService.state.isFaulty(honest.signer.author)).toBe(false)
  })

  it('detects a fork delivered over the sync stream', async () => {
    const node = await connectRaw('sync-forker')
    const forksBefore = logInfo(target).forks
    const other = new Feed((await makeIdentity()).signer)
    const held = other.next('held by the daemon')
    await publishHonest(node, held)
    const conflicting = signEntry(other.signer, {
      seq: 1,
      prev: new Uint8Array(0),
      lamport: 1,
      time: Date.now(),
      kind: 'finding',
      body: encodeBody('finding', { kind: 'bug', text: 'the other branch' })
    })

    const stream = await node.dialProtocol(target.node.peerId, SYNC_PROTOCOL)
    const lp = lpStream(stream, { maxDataLength: 4 * 1024 * 1024 })
    await lp.write(SyncRequest.encode({ have: vectorToWire(target.logService.state.vector()), digest: Buffer.alloc(0) }).finish())
    // The daemon's batches (nothing we lack), each acknowledged with an empty frame.
    for (let last = false; !last;) {
      last = SyncBatch.decode((await lp.read()).subarray()).last
      await lp.write(new Uint8Array(0))
    }
    await lp.write(SyncBatch.encode({ entries: [conflicting], last: true, have: [], forks: [] }).finish())
    expect((await lp.read()).byteLength).toBe(0) // stored: acknowledged
    await stream.close().catch(() => {})

    await waitFor(() => events.some(e => e.type === 'fork' && e.peerId === other.signer.author), {
      what: 'the fork from sync to be reported'
    })
    expect(logInfo(target).forks).toBe(forksBefore + 1)
    expect(target.logService.state.isFaulty(other.signer.author)).toBe(true)
    expect(target.logService.state.byAuthorSeq(other.signer.author, 1)?.id).toBe(idOf(held))
  })

  it('survives malformed bytes on gossip and on the sync stream, and keeps serving', async () => {
    const node = await connectRaw('garbler')
    const malformedBefore = await counterValue(target.metrics.syncRejected)
    const gossipRejectedBefore = await counterValue(target.metrics.gossipIn, { verdict: 'reject' })
    const garbage: Uint8Array[] = [
      Buffer.concat([Buffer.from([0x7f]), randomBytes(100)]), // unknown type
      Buffer.concat([Buffer.from([GossipType.entry]), Buffer.alloc(40, 0xff)]), // not an entry
      Buffer.concat([Buffer.from([GossipType.entry]), randomBytes(500)]),
      Buffer.concat([Buffer.from([GossipType.presence]), Buffer.alloc(40, 0xff)]),
      Buffer.concat([Buffer.from([GossipType.announcement]), Buffer.from([0x0f, 0x0f, 0x0f])])
    ]
    for (const frame of garbage) await publish(node, frame)

    const dialSync = async (): Promise<{ raw: Stream; lp: LengthPrefixedStream }> => {
      const raw = await node.dialProtocol(target.node.peerId, SYNC_PROTOCOL)
      return { raw, lp: lpStream(raw, { maxDataLength: 8 * 1024 * 1024 }) }
    }
    // Streams that end early are not malformed; each of the others must be
    // closed and counted as malformed.
    const endEarly: Array<() => Promise<void>> = [
      // raw random bytes, no framing (whatever they decode to)
      async () => {
        const s = await dialSync()
        s.raw.send(randomBytes(2000))
        await s.raw.close()
      },
      // a request that stops half way through its frame
      async () => {
        const s = await dialSync()
        s.raw.send(Buffer.from([0x80, 0x01, 0x0a, 0x05]))
        await s.raw.close()
      }
    ]
    const malformed: Array<[string, () => Promise<void>]> = [
      [
        'a valid length prefix around bytes that are not a SyncRequest',
        async () => {
          const s = await dialSync()
          await s.lp.write(Buffer.alloc(64, 0xff))
          await s.raw.close()
        }
      ],
      [
        'a request with an impossible wire type',
        async () => {
          const s = await dialSync()
          await s.lp.write(Buffer.from([0x0f, 0x0f, 0x0f, 0x0f]))
          await s.raw.close()
        }
      ],
      [
        'a length prefix far over the frame limit',
        async () => {
          const s = await dialSync()
          s.raw.send(Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f]))
          s.raw.send(randomBytes(100))
          await s.raw.close()
        }
      ],
      [
        'a valid request, then a garbage batch',
        async () => {
          const s = await dialSync()
          await s.lp.write(SyncRequest.encode({ have: [], digest: Buffer.alloc(0) }).finish())
          while (!SyncBatch.decode((await s.lp.read()).subarray()).last) {
            /* what the daemon sends */
          }
          await s.lp.write(Buffer.alloc(700, 0xff))
          await s.raw.close()
        }
      ]
    ]
    for (const attempt of endEarly) await attempt().catch(() => {})
    for (const [what, attempt] of malformed) {
      // The daemon refuses a stream, uncounted, while its own exchange with
      // this peer runs (one at a time per pair): send again until it counts.
      const before = await counterValue(target.metrics.syncRejected)
      await waitFor(
        async () => {
          await attempt().catch(() => {})
          return (await counterValue(target.metrics.syncRejected)) > before
        },
        { what: `the daemon to close and count ${what}` }
      )
    }
    expect((await counterValue(target.metrics.syncRejected)) - malformedBefore).toBeGreaterThanOrEqual(malformed.length)
    await waitFor(
      async () => (await counterValue(target.metrics.gossipIn, { verdict: 'reject' })) - gossipRejectedBefore >= garbage.length,
      { what: 'the daemon to reject the malformed gossip' }
    )

    // It answers the daemon's own sync requests with garbage too.
    let garbageAnswers = 0
    await node.handle(SYNC_PROTOCOL, stream => {
      garbageAnswers++
      const lp = lpStream(stream)
      lp.read()
        .then(async () => {
          if (garbageAnswers % 2 === 0) stream.send(randomBytes(300))
          else await lp.write(Buffer.alloc(64, 0xff))
          await stream.close()
        })
        .catch(() => {
          stream.abort(new Error('done'))
        })
    })
    // the daemon's own sync requests, answered with garbage (started here: the
    // periodic round picks a random peer, and backs off while nothing moves)
    await waitFor(
      async () => {
        expect(await target.logService.syncWith(node.peerId)).toBe(false) // never a completed exchange
        return garbageAnswers >= 2
      },
      { what: 'the daemon to have synced with the garbage-answering node twice' }
    )
    await sleep(200)

    // Still serving: its own entries replicate by gossip...
    const after = await target.logService.append('finding', { kind: 'discovery', text: 'still standing' })
    await waitFor(() => seen(encodeEntryGossip(after.bytes)), { what: "the observer to receive the daemon's new entry" })
    // ...and by sync, to a late joiner, which ends up with exactly the daemon's log
    const late = await daemons.start({ name: 'late', peers: addrsOf(target) })
    await waitFor(
      () => Buffer.compare(late.logService.digest(), target.logService.digest()) === 0 && late.logService.state.get(after.id) != null,
      { what: 'a late joiner to catch up with the daemon' }
    )
    expect(late.logService.state.size).toBe(target.logService.state.size)
    // nothing hostile reached it either
    expect(logInfo(late).rejected).toEqual({})
    expect(target.node.status).toBe('started')
  }, 60_000)
})
