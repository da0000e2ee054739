// Round trips to peers, computed instead of sent, as heartbeats are
// (heartbeat-model.ts): node p pings one peer on its own grid (phase_p +
// k * period) while it is up, as agentd's RoundTripProbe pings one connected
// peer per heartbeat interval, and, as the probe pings every new connection,
// pings its first CONNECT_PINGS peers just after it comes up. The peers and
// both legs' delays are pure functions of the seed, so when a replica is
// about to claim it can ask which of its pings were answered meanwhile and
// what they measured, judged with the same latency, loss, partition and
// crash rules as any message.

import { hash32, hashUnit } from '../engine/hash.js'
import type { LinkLatency } from '../engine/link-latency.js'
import type { Topology } from '../engine/topology.js'

const SALT = 0x5049 // "PI"
/** the connections a daemon makes when it starts (gossipsub's mesh degree), each pinged once */
const CONNECT_PINGS = 6
/** how long after the start the connections are up and pinged */
const CONNECT_DELAY_MS = 100

export interface PingModelInit {
  seed: number
  periodMs: number
  nodes: number
  latency: LinkLatency
  topology: Topology
  loss?: number
}

export class PingModel {
  readonly periodMs: number
  private readonly seed: number
  private readonly nodes: number
  private readonly latency: LinkLatency
  private readonly topology: Topology
  private readonly loss: number

  constructor(init: PingModelInit) {
    if (!(init.periodMs > 0)) throw new RangeError('ping period must be positive')
    this.seed = init.seed
    this.periodMs = init.periodMs
    this.nodes = init.nodes
    this.latency = init.latency
    this.topology = init.topology
    this.loss = init.loss ?? 0
  }

  private phase(p: number): number {
    return hashUnit(this.seed, p, SALT) * this.periodMs
  }

  /** The peer node `p` pings the `k`th time. */
  private target(p: number, k: number): number {
    const r = hash32(this.seed, p, k, SALT) % (this.nodes - 1)
    return r >= p ? r + 1 : r
  }

  /**
   * Round trips of `p`'s pings sent after `after` and answered by `now`, as
   * `p` timed them, newest last; at most `limit` (the newest).
   */
  roundTrips(p: number, after: number, now: number, limit: number): number[] {
    if (this.nodes < 2) return []
    const out: number[] = []
    const phase = this.phase(p)
    for (let k = Math.floor((now - phase) / this.periodMs); k >= 0 && out.length < limit; k--) {
      const sent = phase + k * this.periodMs
      if (sent <= after) break
      const rtt = this.roundTrip(p, this.target(p, k), k, sent)
      if (rtt !== undefined && sent + rtt <= now) out.push(rtt)
    }
    // the pings of the connections made when it came up
    const since = this.topology.upSince(p, now)
    const sent = since === undefined ? undefined : since + CONNECT_DELAY_MS
    if (sent !== undefined && sent > after && out.length < limit) {
      for (let j = 0; j < Math.min(CONNECT_PINGS, this.nodes - 1); j++) {
        const key = -1 - j - Math.floor(sent) * CONNECT_PINGS
        const r = (p + 1 + (hash32(this.seed, p, key, SALT) % (this.nodes - 1))) % this.nodes
        const rtt = this.roundTrip(p, r, key, sent)
        if (rtt !== undefined && sent + rtt <= now) out.push(rtt)
      }
    }
    return out.reverse()
  }

  private roundTrip(p: number, r: number, k: number, sent: number): number | undefined {
    const t = this.topology
    if (!t.isUp(p, sent)) return undefined
    const out = this.latency.delay(p, r, k, SALT)
    const back = this.latency.delay(r, p, k, SALT + 1)
    if (this.loss > 0 && (hashUnit(this.seed, p, k, SALT + 2) < this.loss || hashUnit(this.seed, p, k, SALT + 3) < this.loss))
      return undefined
    if (t.eventful && !(t.canReach(p, r, sent) && t.canReach(p, r, sent + out) && t.canReach(r, p, sent + out + back))) return undefined
    return out + back
  }

  /** Pings node `p` sent in [from, to) (only while up). */
  sentBetween(p: number, from: number, to: number): number {
    if (this.nodes < 2) return 0
    const phase = this.phase(p)
    const first = Math.max(0, Math.ceil((from - phase) / this.periodMs))
    const end = Math.max(first, Math.ceil((to - phase) / this.periodMs))
    let n = Math.min(CONNECT_PINGS, this.nodes - 1) * this.topology.startsBetween(p, from, to)
    if (!this.topology.eventful) return n + end - first
    for (let k = first; k < end; k++) if (this.topology.isUp(p, phase + k * this.periodMs)) n++
    return n
  }
}
