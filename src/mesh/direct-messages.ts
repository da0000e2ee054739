// /agency/dm/1.0.0: length-prefixed DirectMessage frames, each answered by a
// DirectAck. The sender keeps every message in a persistent outbox until it is
// acked, retrying while the peer is away, up to a TTL; the receiver stores a
// message and its id in one atomic write before acking, so a retry after a
// lost ack is recognised and delivery is exactly once, across restarts. A
// message the receiver cannot store is not acked (the sender tries again
// later), and the sender is not struck for it.
//
// Each message has one outcome, delivered or failed, decided by whoever takes
// it out of the outbox first. A message on the wire belongs to its delivery
// attempt: the TTL does not drop it while its ack may still come (a peer that
// acks has the message, so that attempt must end as delivered), and an attempt
// never sends a message the TTL is dropping.
//
// A peer this node holds no connection to (the mesh connects each node to a
// few peers, not to all) is dialled at the addresses its heartbeat gave; the
// connection stays until the dialer trims it (peer-dialer: above its cap, the
// oldest outside the gossip mesh), so a reply soon after finds it open.
//
// A sender over the receiver's rate is told ACK_BUSY with how long to wait,
// not struck: it ends the stream and comes back then (a backlog after a
// restart is not a flood). Another frame on a stream after ACK_BUSY is.
import { lpStream } from '@libp2p/utils'
import { peerIdFromString } from '@libp2p/peer-id'
import type { Connection, Stream } from '@libp2p/interface'
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr'
import { AckStatus, DirectAck, DirectMessage } from '../gen/agency/v1/wire.js'
import { DM_PROTOCOL, MAX_DM_FRAME_BYTES, MAX_DM_TEXT_BYTES } from './constants.js'
import type { MeshLibp2p } from './node.js'
import type { Logger } from '../logger.js'
import type { PeerGuard } from './peer-guard.js'

/** The persistence the protocol needs (implemented by src/store). */
export interface DirectMessageStore {
  listOutbox: () => Promise<Array<{ message: DirectMessage; expiresAt: number }>>
  /** true when the message was still queued (this call took it out) */
  markDelivered: (id: string) => Promise<boolean>
  /** true when the message was still queued (this call took it out) */
  drop: (id: string, reason: string) => Promise<boolean>
  deliver: (msg: DirectMessage, receivedAt: number) => Promise<{ stored: boolean; cursor: number }>
}

export interface DirectMessageHooks {
  /** a new message was stored in the inbox */
  onReceived?: (msg: DirectMessage, cursor: number) => void
  /** a message of ours was acked by its recipient, `latencyMs` after it was written */
  onDelivered?: (msg: DirectMessage, latencyMs: number) => void
  /** a message of ours was dropped: expired or refused */
  onFailed?: (msg: DirectMessage, reason: string) => void
  /** a peer sent something that is not a valid frame */
  onMalformed?: (peer: string, reason: string) => void
}

export interface DirectMessagingInit {
  node: MeshLibp2p
  store: DirectMessageStore
  log: Logger
  hooks?: DirectMessageHooks
  /** how long one delivery attempt may take */
  attemptTimeoutMs?: number
  /** wall clock, for TTLs and timestamps */
  now?: () => number
  guard?: PeerGuard
  /** where a peer not connected can be dialled (the addresses its heartbeat gave); none: libp2p's peer store only */
  addressesOf?: (peer: string) => Multiaddr[]
}

function isCleanEnd(err: unknown): boolean {
  const e = err as Error
  return e?.name === 'UnexpectedEOFError' && /reading 0\/1 bytes/.test(e.message)
}

export function utf8Length(text: string): number {
  return Buffer.byteLength(text, 'utf8')
}

export class DirectMessaging {
  private readonly node: MeshLibp2p
  private readonly store: DirectMessageStore
  private readonly log: Logger
  private readonly hooks: DirectMessageHooks
  private readonly attemptTimeoutMs: number
  private readonly now: () => number
  /** peers with a flush in progress, so that one peer gets one stream at a time */
  private readonly flushing = new Map<string, Promise<void>>()
  private readonly firstAttempt = new Map<string, number>()
  /** messages an attempt has on the wire, or the TTL is dropping: one owner at a time */
  private readonly owner = new Map<string, 'sending' | 'expiring'>()
  /** peers that answered ACK_BUSY: no attempt before this wall-clock time */
  private readonly notBefore = new Map<string, number>()
  private readonly guard?: PeerGuard
  private readonly addressesOf?: (peer: string) => Multiaddr[]
  /**
   * Bumped whenever the outbox may have gained a message (flushPeer is
   * called after every enqueue). The periodic pass skips reading the store
   * while the last read found it empty and nothing was queued since: an idle
   * daemon read its LevelDB outbox every 2 s for nothing.
   */
  private queuedGeneration = 0
  /** the generation the last pass found the outbox empty at (-1: not known to be empty) */
  private emptyAtGeneration = -1

  constructor(init: DirectMessagingInit) {
    this.node = init.node
    this.store = init.store
    this.log = init.log
    this.hooks = init.hooks ?? {}
    this.attemptTimeoutMs = init.attemptTimeoutMs ?? 5000
    this.now = init.now ?? Date.now
    this.guard = init.guard
    this.addressesOf = init.addressesOf
  }

  async start(): Promise<void> {
    await this.node.handle(
      DM_PROTOCOL,
      (stream, connection) => {
        this.handleIncoming(stream, connection).catch(err => {
          this.log.debug({ err }, 'dm stream ended with an error')
        })
      },
      { maxInboundStreams: 64 }
    )
  }

  async stop(): Promise<void> {
    await this.node.unhandle(DM_PROTOCOL)
    await Promise.allSettled([...this.flushing.values()])
  }

  /** Tries to deliver everything in the outbox; drops what has expired (unless it is on the wire). */
  async flushAll(): Promise<void> {
    const generation = this.queuedGeneration
    if (this.emptyAtGeneration === generation) return
    const pending = await this.store.listOutbox()
    if (pending.length === 0) {
      this.emptyAtGeneration = generation
      return
    }
    const now = this.now()
    const byPeer = new Map<string, DirectMessage[]>()
    for (const { message: msg, expiresAt } of pending) {
      if (expiresAt <= now) {
        // On the wire: its attempt decides (an ack means delivered; a failure leaves it for the next pass).
        if (this.owner.has(msg.id)) continue
        this.owner.set(msg.id, 'expiring')
        try {
          if (await this.store.drop(msg.id, 'expired')) {
            this.firstAttempt.delete(msg.id)
            this.hooks.onFailed?.(msg, 'expired')
          }
        } finally {
          this.owner.delete(msg.id)
        }
        continue
      }
      const list = byPeer.get(msg.to) ?? []
      list.push(msg)
      byPeer.set(msg.to, list)
    }
    await Promise.allSettled(
      [...byPeer.keys()].map(async peer => {
        await this.flushPeer(peer)
      })
    )
  }

  /** Delivers the outbox for one peer; concurrent calls share one attempt. */
  async flushPeer(peer: string): Promise<void> {
    // Called after every enqueue: the next periodic pass reads the outbox again.
    this.queuedGeneration++
    const running = this.flushing.get(peer)
    if (running != null) {
      await running
      return
    }
    const attempt = this.deliverTo(peer).finally(() => this.flushing.delete(peer))
    this.flushing.set(peer, attempt)
    await attempt
  }

  private async deliverTo(peer: string): Promise<void> {
    const wait = this.notBefore.get(peer)
    if (wait !== undefined) {
      if (this.now() < wait) return
      this.notBefore.delete(peer)
    }
    // Expired messages are the TTL pass's to drop, not ours to send.
    const msgs = (await this.store.listOutbox()).filter(o => o.message.to === peer && o.expiresAt > this.now()).map(o => o.message)
    if (msgs.length === 0) return
    let stream: Stream | undefined
    const signal = AbortSignal.timeout(this.attemptTimeoutMs + msgs.length * 200)
    let onWire: string | undefined
    try {
      stream = await this.node.dialProtocol(this.whereToDial(peer), DM_PROTOCOL, { signal })
      const lp = lpStream(stream, { maxDataLength: MAX_DM_FRAME_BYTES })
      for (const msg of msgs) {
        if (this.owner.has(msg.id)) continue // being dropped as expired
        this.owner.set(msg.id, 'sending')
        onWire = msg.id
        if (!this.firstAttempt.has(msg.id)) this.firstAttempt.set(msg.id, performance.now())
        await lp.write(DirectMessage.encode(msg).finish(), { signal })
        const ack = DirectAck.decode((await lp.read({ signal })).subarray())
        if (ack.id !== msg.id) throw new Error(`ack for ${ack.id} while waiting for ${msg.id}`)
        if (ack.status === AckStatus.ACK_BUSY) {
          // Not stored: the rest waits in the outbox until the receiver has room.
          this.notBefore.set(peer, this.now() + Math.max(100, ack.retryAfterMs))
          this.owner.delete(msg.id)
          onWire = undefined
          break
        }
        if (ack.status === AckStatus.ACK_OK) {
          if (await this.store.markDelivered(msg.id)) {
            const started = this.firstAttempt.get(msg.id) ?? performance.now()
            this.hooks.onDelivered?.(msg, performance.now() - started)
          }
        } else {
          const reason = ack.status === AckStatus.ACK_TOO_LARGE ? 'refused: too large' : 'refused: invalid'
          if (await this.store.drop(msg.id, reason)) this.hooks.onFailed?.(msg, reason)
        }
        this.firstAttempt.delete(msg.id)
        this.owner.delete(msg.id)
        onWire = undefined
      }
      await stream.close({ signal })
    } catch (err) {
      // The peer is away or the stream broke: the outbox keeps the rest for the next attempt.
      this.log.debug({ peer, err: (err as Error).message }, 'dm delivery attempt failed')
      stream?.abort(err as Error)
    } finally {
      if (onWire !== undefined) this.owner.delete(onWire)
    }
  }

  /**
   * The peer itself while a connection is open (or its addresses are unknown), else its heartbeat's addresses, each naming the peer so the
   * dial checks who answers.
   */
  private whereToDial(peer: string): ReturnType<typeof peerIdFromString> | Multiaddr[] {
    const id = peerIdFromString(peer)
    if (this.node.getConnections(id).length > 0) return id
    const addrs = (this.addressesOf?.(peer) ?? []).map(a =>
      a.getComponents().some(c => c.name === 'p2p') ? a : a.encapsulate(multiaddr(`/p2p/${peer}`))
    )
    return addrs.length > 0 ? addrs : id
  }

  private async handleIncoming(stream: Stream, connection: Connection): Promise<void> {
    const from = connection.remotePeer.toString()
    const lp = lpStream(stream, { maxDataLength: MAX_DM_FRAME_BYTES })
    const signal = AbortSignal.timeout(60_000)
    let toldBusy = false
    try {
      while (true) {
        let frame
        try {
          frame = await lp.read({ signal })
        } catch (err) {
          // The sender closing its side between frames ends the exchange (lpStream
          // reports it as EOF before the first byte of a length prefix); EOF
          // inside a frame, or anything else, is malformed.
          if (isCleanEnd(err)) {
            await stream.close().catch(() => {})
            return
          }
          throw err
        }
        if (toldBusy) throw new Error('direct-message rate limit exceeded: a frame after the busy answer')
        let msg: DirectMessage
        try {
          msg = DirectMessage.decode(frame.subarray())
        } catch (err) {
          throw new Error(`undecodable direct message: ${(err as Error).message}`, { cause: err })
        }
        const turn = this.guard?.throttle('dm', from) ?? { allowed: true }
        if (!turn.allowed) {
          toldBusy = true
          await lp.write(DirectAck.encode({ id: msg.id, status: AckStatus.ACK_BUSY, retryAfterMs: turn.retryAfterMs }).finish(), { signal })
          continue
        }
        const status = this.check(msg)
        if (status === AckStatus.ACK_OK) {
          // The connection authenticates the sender; the frame's own claim is ignored.
          const stored = { ...msg, from }
          let delivered
          try {
            delivered = await this.store.deliver(stored, this.now())
          } catch (err) {
            // Not on disk (a full disk, say): no ack, so the sender keeps it for
            // a later attempt; and no strike, the failure is this node's own.
            this.log.warn({ from, id: msg.id, err: (err as Error).message }, 'cannot store a direct message: not acked')
            stream.abort(err as Error)
            return
          }
          if (delivered.stored) this.hooks.onReceived?.(stored, delivered.cursor)
        }
        await lp.write(DirectAck.encode({ id: msg.id, status, retryAfterMs: 0 }).finish(), { signal })
        if (status === AckStatus.ACK_INVALID) throw new Error('invalid direct message')
      }
    } catch (err) {
      this.hooks.onMalformed?.(from, (err as Error).message)
      this.guard?.strike(from, `direct messages: ${(err as Error).message}`)
      stream.abort(err as Error)
    }
  }

  private check(msg: DirectMessage): AckStatus {
    if (utf8Length(msg.text) > MAX_DM_TEXT_BYTES) return AckStatus.ACK_TOO_LARGE
    if (msg.id.length === 0 || msg.id.length > 128) return AckStatus.ACK_INVALID
    if (msg.to !== this.node.peerId.toString()) return AckStatus.ACK_INVALID
    return AckStatus.ACK_OK
  }
}
