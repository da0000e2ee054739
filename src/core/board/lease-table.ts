// Leases ride on presence: a peer's claims stay live while its heartbeats
// keep arriving. Expiry is measured on THIS node's monotonic clock from the
// moment each heartbeat was received, never from the sender's timestamps, so
// clock skew between machines cannot expire (or revive) anybody.

import { InvalidArgumentError } from '../errors.js'
import type { Liveness } from './types.js'

export const DEFAULT_LEASE_MS = 15_000

export interface LeaseTableInit {
  /** this node's peer id: always live to itself */
  self: string
  /** a peer is live until this long after its last heartbeat was received */
  leaseMs?: number
  /**
   * monotonic time this node started. A peer never heard from counts as live
   * for one lease period after start, so a node that just (re)started does
   * not see every holder as expired before the first heartbeats reach it.
   */
  startedAt: number
}

export class LeaseTable implements Liveness {
  readonly self: string
  readonly leaseMs: number
  private readonly startedAt: number
  private readonly lastHeard = new Map<string, number>()

  constructor (init: LeaseTableInit) {
    const leaseMs = init.leaseMs ?? DEFAULT_LEASE_MS
    if (!(leaseMs > 0)) throw new InvalidArgumentError('leaseMs must be positive')
    this.self = init.self
    this.leaseMs = leaseMs
    this.startedAt = init.startedAt
  }

  /** Records a heartbeat from `peer`, received at `now` on this node's monotonic clock. */
  heartbeat (peer: string, now: number): void {
    // Monotonic input never goes back; keep the latest receipt if it seems to.
    this.lastHeard.set(peer, Math.max(now, this.lastHeard.get(peer) ?? -Infinity))
  }

  isLive (peer: string, now: number): boolean {
    if (peer === this.self) return true
    const last = this.lastHeard.get(peer)
    if (last === undefined) return now - this.startedAt < this.leaseMs
    return now - last < this.leaseMs
  }

  /** Monotonic time of the last heartbeat received from `peer`, if any. */
  lastSeen (peer: string): number | undefined {
    return this.lastHeard.get(peer)
  }

  /** Peers heard from whose lease is live at `now`, sorted. */
  livePeers (now: number): string[] {
    return [...this.lastHeard.keys()].filter(p => this.isLive(p, now)).sort()
  }

  forget (peer: string): void {
    this.lastHeard.delete(peer)
  }
}

export function createLeaseTable (init: LeaseTableInit): LeaseTable {
  return new LeaseTable(init)
}
