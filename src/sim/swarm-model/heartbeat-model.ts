// Presence heartbeats, computed instead of sent. A thousand daemons beating
// every two seconds would be half a million deliveries per virtual second;
// instead, node p's heartbeats go out on a fixed grid (phase_p + k * period)
// whenever p is up, and when a replica needs to know whether p is alive it
// asks for the latest beat that reached it, judged with the same latency,
// loss, partition and crash rules as any message. The result feeds the claim
// protocol's LeaseTable, so lease expiry is still the core's decision.

import type { LeaseTable } from '../../core/board/lease-table.js'
import { liveTimeoutForMs } from '../../core/presence/heartbeat-interval.js'
import type { Liveness } from '../../core/board/types.js'
import { hashUnit } from '../engine/hash.js'
import type { LinkLatency } from '../engine/link-latency.js'
import type { Topology } from '../engine/topology.js'

const SALT = 0x4842 // "HB": keeps heartbeat draws apart from entry draws

export interface HeartbeatModelInit {
  seed: number
  periodMs: number
  latency: LinkLatency
  topology: Topology
  loss?: number
}

export class HeartbeatModel {
  readonly periodMs: number
  private readonly seed: number
  private readonly latency: LinkLatency
  private readonly topology: Topology
  private readonly loss: number

  constructor(init: HeartbeatModelInit) {
    if (!(init.periodMs > 0)) throw new RangeError('heartbeat period must be positive')
    this.seed = init.seed
    this.periodMs = init.periodMs
    this.latency = init.latency
    this.topology = init.topology
    this.loss = init.loss ?? 0
  }

  phase(node: number): number {
    return hashUnit(this.seed, node, SALT) * this.periodMs
  }

  /** When the latest heartbeat from `p` sent after `notBefore` reached `q`, at or before `now`; undefined when none did. */
  lastReceipt(p: number, q: number, now: number, notBefore: number): number | undefined {
    const phase = this.phase(p)
    for (let k = Math.floor((now - phase) / this.periodMs); k >= 0; k--) {
      const sent = phase + k * this.periodMs
      if (sent < notBefore) return undefined
      if (!this.topology.isUp(p, sent)) continue
      const at = sent + this.latency.delay(p, q, k, SALT)
      if (at > now) continue
      if (this.loss > 0 && hashUnit(this.seed, p, q, k, SALT + 1) < this.loss) continue
      if (this.topology.eventful && !(this.topology.canReach(p, q, sent) && this.topology.canReach(p, q, at))) continue
      return at
    }
    return undefined
  }

  /** The longest a heartbeat can take. */
  get boundMs(): number {
    return this.latency.boundMs
  }

  /** Heartbeats node `p` sent in [from, to) (only while up). */
  sentBetween(p: number, from: number, to: number): number {
    const phase = this.phase(p)
    const first = Math.max(0, Math.ceil((from - phase) / this.periodMs))
    const end = Math.max(first, Math.ceil((to - phase) / this.periodMs))
    if (!this.topology.eventful) return end - first
    let n = 0
    for (let k = first; k < end; k++) if (this.topology.isUp(p, phase + k * this.periodMs)) n++
    return n
  }
}

/**
 * A replica's view of who is alive: the claim protocol's LeaseTable, fed on
 * demand with the receipt time of each peer's latest heartbeat (announcing
 * the modelled period, as agentd's heartbeats announce their interval).
 */
export class ModelledLiveness implements Liveness {
  readonly leases: LeaseTable
  private readonly model: HeartbeatModel
  private readonly self: number
  private readonly indexOf: (peer: string) => number | undefined
  /** the lease a heartbeat of the modelled period gives */
  private readonly leaseMs: number

  constructor(init: { model: HeartbeatModel; self: number; leases: LeaseTable; indexOf: (peer: string) => number | undefined }) {
    this.model = init.model
    this.self = init.self
    this.indexOf = init.indexOf
    this.leases = init.leases
    this.leaseMs = liveTimeoutForMs(init.model.periodMs, init.leases.policy)
  }

  isLive(peer: string, now: number): boolean {
    const p = this.indexOf(peer)
    if (p !== undefined && p !== this.self) {
      const heard = this.leases.lastSeen(peer)
      const at = this.model.lastReceipt(
        p,
        this.self,
        now,
        Math.max((heard ?? -Infinity) - this.model.boundMs, now - this.leaseMs - this.model.periodMs)
      )
      if (at !== undefined) this.leases.heartbeat(peer, at, this.model.periodMs)
    }
    return this.leases.isLive(peer, now)
  }
}
