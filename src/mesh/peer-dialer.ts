// Keeps this node connected: dials the bootstrap addresses (`--peers`) with
// backoff until connected, redials them when they drop or restart, and keeps a
// few connections to other peers learned from presence, so that a host cut
// off and restored is found again whether or not it was a bootstrap peer.
// @libp2p/bootstrap is not used: it dials once, and ignores /memory addresses.
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr'
import type { MeshLibp2p } from './node.js'
import type { Connection } from '@libp2p/interface'
import type { Logger } from '../logger.js'

export interface PeerDialerInit {
  node: MeshLibp2p
  bootstrap: string[]
  log: Logger
  /** below this many connections, known peers are dialled too (default: gossipsub's mesh degree, DEFAULT_TARGET_CONNECTIONS) */
  targetConnections?: number
  minBackoffMs?: number
  maxBackoffMs?: number
  tickMs?: number
  /** how long a connection may go without gossip before identify is run again */
  identifyGraceMs?: number
}

interface DialTarget {
  addrs: Multiaddr[]
  /** the addresses as a peer's heartbeat gave them, joined: an unchanged list is not parsed again */
  said?: string
  peerId?: string
  failures: number
  nextAttempt: number
  bootstrap: boolean
}

/**
 * Gossipsub's mesh degree (D): a node's gossip goes to this many peers, so
 * more connections do not speed it up, and every connection costs both ends
 * libp2p's pings every 10 s (a stream each, negotiated and written to the
 * peer store), the largest part of an idle daemon's CPU.
 */
export const DEFAULT_TARGET_CONNECTIONS = 6

export class PeerDialer {
  private readonly node: MeshLibp2p
  private readonly log: Logger
  private readonly targets = new Map<string, DialTarget>()
  private readonly targetConnections: number
  private readonly minBackoffMs: number
  private readonly maxBackoffMs: number
  private readonly tickMs: number
  private timer?: NodeJS.Timeout
  private running = false
  private dialing = new Set<string>()
  private readonly identifyGraceMs: number
  /** when identify was last run again on a connection */
  private readonly identifiedAt = new WeakMap<Connection, number>()

  constructor (init: PeerDialerInit) {
    this.node = init.node
    this.log = init.log
    this.targetConnections = init.targetConnections ?? DEFAULT_TARGET_CONNECTIONS
    this.minBackoffMs = init.minBackoffMs ?? 500
    this.maxBackoffMs = init.maxBackoffMs ?? 15_000
    this.tickMs = init.tickMs ?? 500
    this.identifyGraceMs = init.identifyGraceMs ?? 5000
    for (const a of init.bootstrap) {
      const ma = multiaddr(a)
      const peerId = ma.getComponents().find(c => c.name === 'p2p')?.value
      this.targets.set(`boot:${a}`, { addrs: [ma], peerId, failures: 0, nextAttempt: 0, bootstrap: true })
    }
  }

  start (): void {
    this.running = true
    this.tick()
  }

  stop (): void {
    this.running = false
    if (this.timer != null) clearTimeout(this.timer)
  }

  /** Remembers a peer's addresses (from its presence) so it can be redialled later. */
  remember (peerId: string, addrs: string[]): void {
    if (peerId === this.node.peerId.toString() || addrs.length === 0) return
    const key = `peer:${peerId}`
    const known = this.targets.get(key)
    // Every heartbeat brings the peer's addresses: parsed each time, they
    // cost about a sixth of what handling a heartbeat costs its receiver.
    const said = addrs.join(' ')
    if (known?.said === said) return
    const parsed: Multiaddr[] = []
    for (const a of addrs) {
      try { parsed.push(multiaddr(a)) } catch { /* a peer's bad address is its problem */ }
    }
    if (parsed.length === 0) return
    if (known != null) { known.addrs = parsed; known.said = said; return }
    this.targets.set(key, { addrs: parsed, said, peerId, failures: 0, nextAttempt: 0, bootstrap: false })
  }

  /** Dial now, ignoring backoff (e.g. a DM is waiting for this peer). */
  async dialNow (peerId: string): Promise<void> {
    const t = this.targets.get(`peer:${peerId}`)
    if (t == null) return
    await this.attempt(`peer:${peerId}`, t)
  }

  private tick (): void {
    if (!this.running) return
    this.dialDue().catch(err => this.log.debug({ err }, 'dial round failed')).finally(() => {
      if (this.running) this.timer = setTimeout(() => { this.tick() }, this.tickMs)
    })
  }

  /** The peers with an open connection, as strings: parsing each target's peer id every tick cost more than the rest of the tick. */
  private connectedPeers (): Set<string> {
    return new Set(this.node.getConnections().map(c => c.remotePeer.toString()))
  }

  /**
   * Gossipsub only uses a connection once identify has said the peer speaks
   * gossipsub, and libp2p runs identify once per connection and drops its
   * errors. A connection whose identify failed on both ends carries no gossip
   * for as long as it stays open, and the dialer sees it as connected.
   */
  private async reidentifySilentConnections (): Promise<void> {
    const now = Date.now()
    const gossiping = new Set(this.node.services.pubsub.getPeers().map(p => p.toString()))
    const silent = this.node.getConnections().filter(c =>
      c.status === 'open' && !gossiping.has(c.remotePeer.toString()) && now - (this.identifiedAt.get(c) ?? c.timeline.open) > this.identifyGraceMs)
    await Promise.allSettled(silent.map(async c => {
      this.identifiedAt.set(c, now)
      await this.node.services.identify.identify(c, { signal: AbortSignal.timeout(10_000) })
    }))
  }

  private async dialDue (): Promise<void> {
    // Not awaited: a slow identify must not hold up dialling.
    void this.reidentifySilentConnections()
    const now = Date.now()
    const connections = this.node.getConnections().length
    const connected = this.connectedPeers()
    const due: Array<[string, DialTarget]> = []
    for (const [key, t] of this.targets) {
      if (t.peerId != null && connected.has(t.peerId)) { t.failures = 0; continue }
      if (t.nextAttempt > now || this.dialing.has(key)) continue
      // Bootstrap peers are always redialled; others only while we are short of connections.
      if (!t.bootstrap && connections + due.length >= this.targetConnections) continue
      due.push([key, t])
    }
    await Promise.allSettled(due.map(async ([key, t]) => { await this.attempt(key, t) }))
  }

  private async attempt (key: string, t: DialTarget): Promise<void> {
    if (this.dialing.has(key)) return
    this.dialing.add(key)
    try {
      const conn = await this.node.dial(t.addrs, { signal: AbortSignal.timeout(5000) })
      t.peerId = conn.remotePeer.toString()
      t.failures = 0
      t.nextAttempt = 0
    } catch (err) {
      t.failures++
      const backoff = Math.min(this.maxBackoffMs, this.minBackoffMs * 2 ** Math.min(t.failures, 10))
      t.nextAttempt = Date.now() + backoff * (0.75 + Math.random() * 0.5)
      this.log.debug({ target: key, failures: t.failures, err: (err as Error).message }, 'dial failed')
    } finally {
      this.dialing.delete(key)
    }
  }
}
