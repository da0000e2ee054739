// Protects the daemon from peers that flood or misbehave: per-peer rate
// limits on direct messages and sync requests, strikes for invalid data, and
// a temporary ban (disconnect, and refuse to reconnect) for a peer that keeps
// sending it. An optional allow-list admits only the listed peer ids; the
// operator's membership (setMembership) adds an allow-list of its own, which
// admits peers besides the static one, and removed members, refused for good.
import { RateLimiter } from '@libp2p/utils'
import type { PeerId } from '@libp2p/interface'

export type GuardedProtocol = 'dm' | 'sync'

export interface PeerGuardInit {
  /** direct-message frames per peer per window */
  dmPerWindow?: number
  /** sync exchanges a peer may start per window */
  syncPerWindow?: number
  windowSeconds?: number
  /** times per window a peer over its rate may be told to come back later before it is struck */
  busyPerWindow?: number
  /** invalid messages a peer may send per minute before it is banned */
  strikesPerMinute?: number
  banSeconds?: number
  /** when non-empty, only these peer ids may connect */
  allowPeers?: string[]
  onBan?: (peer: string, reason: string) => void
  onLimited?: (peer: string, protocol: GuardedProtocol) => void
}

export class PeerGuard {
  private readonly limiters: Record<GuardedProtocol, RateLimiter>
  private readonly strikes: RateLimiter
  /** "busy, try later" answers a peer may get per window before they count as strikes */
  private readonly busyAnswers: RateLimiter
  private readonly banned = new Map<string, number>()
  private readonly allow?: Set<string>
  /** the operator's allow-list (empty: none) and the members it removed */
  private operatorAllow = new Set<string>()
  private removed = new Set<string>()
  private readonly banMs: number
  private readonly init: PeerGuardInit
  /** told of every ban: the node drops the peer's connections (it is built after the guard, which it consults) */
  private readonly banListeners = new Set<(peer: string) => void>()

  constructor(init: PeerGuardInit = {}) {
    this.init = init
    const duration = init.windowSeconds ?? 10
    this.limiters = {
      dm: new RateLimiter({ points: init.dmPerWindow ?? 500, duration }),
      sync: new RateLimiter({ points: init.syncPerWindow ?? 30, duration })
    }
    this.strikes = new RateLimiter({ points: init.strikesPerMinute ?? 20, duration: 60 })
    this.busyAnswers = new RateLimiter({ points: init.busyPerWindow ?? 20, duration })
    this.banMs = (init.banSeconds ?? 300) * 1000
    if (init.allowPeers != null && init.allowPeers.length > 0) this.allow = new Set(init.allowPeers)
  }

  /**
   * May this peer connect at all? Not a removed member; and when there is an
   * allow-list (the static one, the operator's, or both), only a peer on
   * one of them.
   */
  admits(peer: PeerId | string): boolean {
    const id = peer.toString()
    if (this.removed.has(id)) return false
    const listed = this.allow?.has(id) === true || this.operatorAllow.has(id)
    if ((this.allow != null || this.operatorAllow.size > 0) && !listed) return false
    return !this.isBanned(id)
  }

  /** The operator's allow-list and removed members, as the log has them now (replacing the last). */
  setMembership(m: { allowed: readonly string[]; removed: readonly string[] }): void {
    this.operatorAllow = new Set(m.allowed)
    this.removed = new Set(m.removed)
  }

  isBanned(peer: string): boolean {
    const until = this.banned.get(peer)
    if (until == null) return false
    if (Date.now() >= until) {
      this.banned.delete(peer)
      return false
    }
    return true
  }

  /** Counts one request against the peer's budget; false when over it. */
  allowRequest(protocol: GuardedProtocol, peer: string): boolean {
    if (this.isBanned(peer)) return false
    try {
      this.limiters[protocol].consume(peer)
      return true
    } catch {
      this.init.onLimited?.(peer, protocol)
      this.strike(peer, `over the ${protocol} rate limit`)
      return false
    }
  }

  /**
   * Counts one request against the peer's budget like allowRequest, but over
   * the budget it is not a strike: the answer says how long until the budget
   * is back, for protocols whose honest senders wait when told (a sender with
   * a backlog after a restart is not a flood). Being told too often in a
   * window is a strike.
   */
  throttle(protocol: GuardedProtocol, peer: string): { allowed: true } | { allowed: false; retryAfterMs: number } {
    if (this.isBanned(peer)) return { allowed: false, retryAfterMs: Math.max(0, (this.banned.get(peer) ?? 0) - Date.now()) }
    try {
      this.limiters[protocol].consume(peer)
      return { allowed: true }
    } catch (err) {
      this.init.onLimited?.(peer, protocol)
      try {
        this.busyAnswers.consume(`${protocol}:${peer}`)
      } catch {
        this.strike(peer, `keeps coming back over the ${protocol} rate limit`)
      }
      const msBeforeNext = (err as { msBeforeNext?: number }).msBeforeNext
      return { allowed: false, retryAfterMs: typeof msBeforeNext === 'number' && msBeforeNext > 0 ? Math.ceil(msBeforeNext) : 1000 }
    }
  }

  /** Records invalid data from a peer; too many in a minute bans it for a while. */
  strike(peer: string, reason: string): void {
    if (this.isBanned(peer)) return
    try {
      this.strikes.consume(peer)
    } catch {
      this.banned.set(peer, Date.now() + this.banMs)
      this.init.onBan?.(peer, reason)
      for (const l of this.banListeners) l(peer)
    }
  }

  /** Calls back on every ban from now on; returns the unsubscribe function. */
  onBanned(listener: (peer: string) => void): () => void {
    this.banListeners.add(listener)
    return () => {
      this.banListeners.delete(listener)
    }
  }

  bannedPeers(): string[] {
    return [...this.banned.keys()].filter(p => this.isBanned(p))
  }
}
