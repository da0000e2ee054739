// Keeps this node connected to a few peers, not to all of them: while it holds
// fewer than `targetConnections` (gossipsub's lowest mesh degree) it dials, with
// backoff, the bootstrap addresses (`--peers`) and peers learned from
// presence (the bootstrap peers first while it holds no connection at all);
// a host cut off and restored, or a bootstrap peer restarted, is found again
// this way by the peers short of connections. Above `maxConnections` it
// closes its oldest connections, those outside the gossip mesh first, so a
// bootstrap peer that every newcomer dials does not end up connected to the
// whole swarm: each node holds about the mesh degree plus the newcomers that
// dialled it lately, whatever the swarm's size. While nothing is to be done
// (enough connections, none too many, each carrying gossip) it looks ten
// times less often, and a connection that opens or closes wakes it: an idle
// daemon pays little for it, which counts where one process hosts dozens.
// @libp2p/bootstrap is not used: it dials once, and ignores /memory addresses.
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr'
import type { MeshLibp2p } from './node.js'
import type { Connection } from '@libp2p/interface'
import type { Logger } from '../logger.js'
import { DEFAULT_MAX_CONNECTIONS } from './constants.js'

export interface PeerDialerInit {
  node: MeshLibp2p
  bootstrap: string[]
  log: Logger
  /**
   * below this many connections, bootstrap and known peers are dialled (default: gossipsub's lowest mesh degree,
   * DEFAULT_TARGET_CONNECTIONS)
   */
  targetConnections?: number
  /** above this many, the oldest connections outside the gossip mesh are closed (default DEFAULT_MAX_CONNECTIONS) */
  maxConnections?: number
  minBackoffMs?: number
  maxBackoffMs?: number
  tickMs?: number
  /**
   * how often it looks while it holds enough connections, each carrying gossip (default 5 s); a connection opened or closed brings the next
   * look forward to within tickMs
   */
  steadyTickMs?: number
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
 * Gossipsub's lowest mesh degree (Dlo): below it gossipsub grafts more peers.
 * Every node dials up to this many and others dial it, so a node holds about
 * one and a half times it, and gossipsub's mesh takes nearly all of them:
 * each message reaches a node once per mesh link (a publish goes to every
 * connection), so each connection beyond what the mesh needs is another copy
 * of every message to decrypt, decode and drop as seen. At the mesh degree
 * (D, 6) daemons held 7.8 connections where the bench's raw gossipsub nodes
 * (3 bootstrap dials each) hold 4.6.
 */
export const DEFAULT_TARGET_CONNECTIONS = 4
/** how often the dialer looks for peers to dial, by default */
export const DEFAULT_DIAL_TICK_MS = 500
/** how long one dial attempt may take */
export const DIAL_ATTEMPT_TIMEOUT_MS = 5000

export class PeerDialer {
  private readonly node: MeshLibp2p
  private readonly log: Logger
  private readonly targets = new Map<string, DialTarget>()
  private readonly targetConnections: number
  private readonly maxConnections: number
  private readonly minBackoffMs: number
  private readonly maxBackoffMs: number
  private readonly tickMs: number
  private readonly steadyTickMs: number
  private timer?: NodeJS.Timeout
  /** when the armed tick is due (Date.now() ms) */
  private dueAt = 0
  private ticking = false
  private running = false
  private dialing = new Set<string>()
  private readonly identifyGraceMs: number
  /** when identify was last run again on a connection */
  private readonly identifiedAt = new WeakMap<Connection, number>()

  constructor(init: PeerDialerInit) {
    this.node = init.node
    this.log = init.log
    this.targetConnections = init.targetConnections ?? DEFAULT_TARGET_CONNECTIONS
    this.maxConnections = Math.max(this.targetConnections, init.maxConnections ?? DEFAULT_MAX_CONNECTIONS)
    this.minBackoffMs = init.minBackoffMs ?? 500
    this.maxBackoffMs = init.maxBackoffMs ?? 15_000
    this.tickMs = init.tickMs ?? DEFAULT_DIAL_TICK_MS
    this.steadyTickMs = Math.max(this.tickMs, init.steadyTickMs ?? 5000)
    this.identifyGraceMs = init.identifyGraceMs ?? 5000
    for (const a of init.bootstrap) {
      const ma = multiaddr(a)
      const peerId = ma.getComponents().find(c => c.name === 'p2p')?.value
      this.targets.set(`boot:${a}`, { addrs: [ma], peerId, failures: 0, nextAttempt: 0, bootstrap: true })
    }
  }

  start(): void {
    this.running = true
    this.node.addEventListener('connection:open', this.wake)
    this.node.addEventListener('connection:close', this.wake)
    this.tick()
  }

  stop(): void {
    this.running = false
    this.node.removeEventListener('connection:open', this.wake)
    this.node.removeEventListener('connection:close', this.wake)
    if (this.timer != null) clearTimeout(this.timer)
  }

  /** A connection opened or closed: the next look is within tickMs (one under way decides its next when it ends). */
  private readonly wake = (): void => {
    if (!this.running || this.ticking) return
    if (this.dueAt - Date.now() > this.tickMs) this.arm(this.tickMs)
  }

  private arm(ms: number): void {
    if (this.timer != null) clearTimeout(this.timer)
    this.dueAt = Date.now() + ms
    this.timer = setTimeout(() => {
      this.tick()
    }, ms)
  }

  /** Nothing to do: enough connections and not too many, none being dialled, each open and carrying gossip. */
  private steady(): boolean {
    const connections = this.node.getConnections()
    if (connections.length < this.targetConnections || connections.length > this.maxConnections || this.dialing.size > 0) return false
    const gossiping = new Set(this.node.services.pubsub.getPeers().map(p => p.toString()))
    return connections.every(c => c.status === 'open' && gossiping.has(c.remotePeer.toString()))
  }

  /** Remembers a peer's addresses (from its presence) so it can be redialled later. */
  remember(peerId: string, addrs: string[]): void {
    if (peerId === this.node.peerId.toString() || addrs.length === 0) return
    const key = `peer:${peerId}`
    const known = this.targets.get(key)
    // Every heartbeat brings the peer's addresses: parsed each time, they
    // cost about a sixth of what handling a heartbeat costs its receiver.
    const said = addrs.join(' ')
    if (known?.said === said) return
    const parsed: Multiaddr[] = []
    for (const a of addrs) {
      try {
        parsed.push(multiaddr(a))
      } catch {
        /* a peer's bad address is its problem */
      }
    }
    if (parsed.length === 0) return
    if (known != null) {
      known.addrs = parsed
      known.said = said
      return
    }
    this.targets.set(key, { addrs: parsed, said, peerId, failures: 0, nextAttempt: 0, bootstrap: false })
  }

  /** The addresses a peer's heartbeat gave (empty: not known), for a dial outside the dialer's own (a direct message). */
  addressesOf(peerId: string): Multiaddr[] {
    return this.targets.get(`peer:${peerId}`)?.addrs ?? []
  }

  private tick(): void {
    if (!this.running) return
    this.ticking = true
    this.dialDue()
      .catch(err => this.log.debug({ err }, 'dial round failed'))
      .finally(() => {
        this.ticking = false
        if (this.running) this.arm(this.steady() ? this.steadyTickMs : this.tickMs)
      })
  }

  /** The peers with an open connection, as strings: parsing each target's peer id every tick cost more than the rest of the tick. */
  private connectedPeers(): Set<string> {
    return new Set(this.node.getConnections().map(c => c.remotePeer.toString()))
  }

  /**
   * Gossipsub only uses a connection once identify has said the peer speaks
   * gossipsub, and libp2p runs identify once per connection and drops its
   * errors. A connection whose identify failed on both ends carries no gossip
   * for as long as it stays open, and the dialer sees it as connected.
   */
  private async reidentifySilentConnections(): Promise<void> {
    const now = Date.now()
    const gossiping = new Set(this.node.services.pubsub.getPeers().map(p => p.toString()))
    const silent = this.node
      .getConnections()
      .filter(
        c =>
          c.status === 'open' &&
          !gossiping.has(c.remotePeer.toString()) &&
          now - (this.identifiedAt.get(c) ?? c.timeline.open) > this.identifyGraceMs
      )
    await Promise.allSettled(
      silent.map(async c => {
        this.identifiedAt.set(c, now)
        await this.node.services.identify.identify(c, { signal: AbortSignal.timeout(10_000) })
      })
    )
  }

  private async dialDue(): Promise<void> {
    // Not awaited: a slow identify must not hold up dialling.
    void this.reidentifySilentConnections()
    await this.trim()
    const connections = this.node.getConnections().length
    if (connections >= this.targetConnections) return
    const now = Date.now()
    const connected = this.connectedPeers()
    const boot: Array<[string, DialTarget]> = []
    const known: Array<[string, DialTarget]> = []
    for (const [key, t] of this.targets) {
      if (t.peerId != null && connected.has(t.peerId)) {
        t.failures = 0
        continue
      }
      if (t.nextAttempt > now || this.dialing.has(key)) continue
      ;(t.bootstrap ? boot : known).push([key, t])
    }
    // Peers learned from presence in random order, and before the bootstrap
    // peers once this node holds a connection: every node is short now and
    // then (a peer trimmed it), and all of them dialling the bootstrap peers
    // first, or the peers all learned of first, would make hubs of those.
    for (let i = known.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1))
      ;[known[i], known[j]] = [known[j], known[i]]
    }
    const order = connections === 0 ? [...boot, ...known] : [...known, ...boot]
    const due = order.slice(0, Math.max(0, this.targetConnections - connections - this.dialing.size))
    await Promise.allSettled(
      due.map(async ([key, t]) => {
        await this.attempt(key, t)
      })
    )
  }

  /**
   * Above maxConnections, closes the oldest connections, those to peers
   * outside this node's gossip mesh first (the mesh links carry the gossip,
   * and gossipsub replaces a mesh link that closes); a peer left short dials
   * another it knows of.
   */
  private async trim(): Promise<void> {
    const connections = this.node.getConnections().filter(c => c.status === 'open')
    const excess = connections.length - this.maxConnections
    if (excess <= 0) return
    // The implementation has getMeshPeers; the GossipSub interface libp2p exports does not name it.
    const pubsub = this.node.services.pubsub as MeshLibp2p['services']['pubsub'] & { getMeshPeers?: (topic: string) => string[] }
    const meshed = new Set(pubsub.getTopics().flatMap(t => pubsub.getMeshPeers?.(t) ?? []))
    const rank = (c: Connection): number => (meshed.has(c.remotePeer.toString()) ? 1 : 0)
    const closing = connections.sort((a, b) => rank(a) - rank(b) || a.timeline.open - b.timeline.open).slice(0, excess)
    await Promise.allSettled(
      closing.map(async c => {
        await c.close({ signal: AbortSignal.timeout(2000) })
      })
    )
  }

  private async attempt(key: string, t: DialTarget): Promise<void> {
    if (this.dialing.has(key)) return
    this.dialing.add(key)
    try {
      const conn = await this.node.dial(t.addrs, { signal: AbortSignal.timeout(DIAL_ATTEMPT_TIMEOUT_MS) })
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
