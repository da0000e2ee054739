// Leases ride on presence: a peer's claims stay live while its heartbeats
// keep arriving. Expiry is measured on THIS node's monotonic clock from the
// moment each heartbeat was received, never from the sender's timestamps, so
// clock skew between machines cannot expire (or revive) anybody. Each
// heartbeat says when the next one is due; the lease lasts the timeout the
// heartbeat policy scales from that interval (core/presence/heartbeat-interval).
//
// A node that just (re)started has heard from nobody: for the timeout a swarm
// of the size it knows of would have, a peer it has never heard from counts as
// live, so it does not see every holder as expired before the first
// heartbeats reach it.

import { InvalidArgumentError } from '../errors.js'
import { heartbeatIntervalMs, heartbeatPolicy, liveTimeoutForMs, type HeartbeatPolicy } from '../presence/heartbeat-interval.js'
import type { Liveness } from './types.js'

/** agentd's --heartbeat-ms and --live-timeout-ms defaults. */
export const DEFAULT_HEARTBEAT_MS = 2_000
export const DEFAULT_LEASE_MS = 10_000

export interface LeaseTableInit {
  /** this node's peer id: always live to itself */
  self: string
  /** monotonic time this node started (the start-up grace runs from it) */
  startedAt: number
  /** the heartbeat policy; default: heartbeats every 2 s, a lease of `leaseMs` */
  policy?: HeartbeatPolicy
  /** the lease at the base interval, when no policy is given (default 10 s) */
  leaseMs?: number
  /** how many other daemons this node knows of (e.g. authors in its log), for the start-up grace */
  knownPeers?: () => number
}

interface Lease {
  heardAt: number
  timeoutMs: number
}

export class LeaseTable implements Liveness {
  readonly self: string
  readonly policy: HeartbeatPolicy
  private readonly startedAt: number
  private readonly knownPeers: () => number
  private readonly leases = new Map<string, Lease>()
  /** the start-up grace can last no longer than this, however big the swarm */
  private readonly longestGraceMs: number

  constructor(init: LeaseTableInit) {
    const policy = init.policy ?? heartbeatPolicy(DEFAULT_HEARTBEAT_MS, init.leaseMs ?? DEFAULT_LEASE_MS)
    if (!(policy.liveTimeoutMs > 0) || !(policy.baseMs > 0))
      throw new InvalidArgumentError('the lease and the heartbeat interval must be positive')
    this.self = init.self
    this.policy = policy
    this.startedAt = init.startedAt
    this.knownPeers = init.knownPeers ?? (() => 0)
    this.longestGraceMs = liveTimeoutForMs(policy.maxIntervalMs, policy)
  }

  /** The lease at the base interval. */
  get leaseMs(): number {
    return this.policy.liveTimeoutMs
  }

  /**
   * Records a heartbeat from `peer`, received at `now` on this node's
   * monotonic clock, announcing its next one in `intervalMs` (default: the
   * base interval). A receipt older than the one kept changes nothing.
   */
  heartbeat(peer: string, now: number, intervalMs = this.policy.baseMs): void {
    const known = this.leases.get(peer)
    if (known !== undefined && known.heardAt > now) return
    this.leases.set(peer, { heardAt: now, timeoutMs: liveTimeoutForMs(intervalMs, this.policy) })
  }

  isLive(peer: string, now: number): boolean {
    if (peer === this.self) return true
    const lease = this.leases.get(peer)
    if (lease === undefined) return this.inStartupGrace(now)
    return now - lease.heardAt <= lease.timeoutMs
  }

  /**
   * Whether a peer never heard from still counts as live: for the timeout
   * that the interval of a swarm of the size this node knows would have.
   * Once even the longest grace has passed it answers without counting.
   */
  inStartupGrace(now: number): boolean {
    const elapsed = now - this.startedAt
    if (elapsed >= this.longestGraceMs) return false
    // The grace grows with the swarm: try the cheap count first.
    if (elapsed < this.graceFor(this.knownPeers())) return true
    return elapsed < this.graceFor(this.livePeers(now).length)
  }

  /**
   * This node stood still for `ms` up to `now` (its process stopped, its
   * event loop stalled) and heard nothing meanwhile: a peer's silence in that
   * time says nothing of the peer, so every lease moves on by the stall (no
   * further than `now`). A holder that did go quiet is still found expired,
   * a stall later than it would have been.
   */
  stalled(ms: number, now: number): void {
    if (!(ms > 0) || !Number.isFinite(ms)) return
    for (const lease of this.leases.values()) lease.heardAt = Math.min(now, lease.heardAt + ms)
  }

  /** Monotonic time of the last heartbeat received from `peer`, if any. */
  lastSeen(peer: string): number | undefined {
    return this.leases.get(peer)?.heardAt
  }

  /** Peers heard from whose lease is live at `now`, sorted. */
  livePeers(now: number): string[] {
    const out: string[] = []
    for (const [peer, lease] of this.leases) if (now - lease.heardAt <= lease.timeoutMs) out.push(peer)
    return out.sort()
  }

  /** When the last of the live peers' leases runs out, if no heartbeat comes (undefined: no peer is live at `now`). */
  liveUntil(now: number): number | undefined {
    let until: number | undefined
    for (const lease of this.leases.values()) {
      const end = lease.heardAt + lease.timeoutMs
      if (end >= now && (until === undefined || end > until)) until = end
    }
    return until
  }

  forget(peer: string): void {
    this.leases.delete(peer)
  }

  private graceFor(peers: number): number {
    return liveTimeoutForMs(heartbeatIntervalMs(peers, this.policy), this.policy)
  }
}

export function createLeaseTable(init: LeaseTableInit): LeaseTable {
  return new LeaseTable(init)
}
