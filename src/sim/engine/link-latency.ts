// One-way latency of a message between two simulated nodes: a base latency
// per link (each link drawn once, uniform in [minMs, maxMs)), jitter per
// message, and a rare slow tail per message (retransmits, a busy peer). Every
// value is a pure function of the seed and the ids involved, so a million links
// cost no memory, and the maximum is bounded, which lets receivers decide when
// a message that has not arrived never will.

import { hashUnit } from './hash.js'

export interface LinkLatencyInit {
  seed: number
  /** each link's base latency is uniform in [minMs, maxMs) */
  minMs?: number
  maxMs?: number
  /** per-message extra, uniform in [0, jitterMs) */
  jitterMs?: number
  /** probability that a message takes the slow tail */
  tailChance?: number
  /** the slow tail adds uniform [0, tailMs) */
  tailMs?: number
}

export const LINK_LATENCY_DEFAULTS = { minMs: 5, maxMs: 50, jitterMs: 5, tailChance: 0.01, tailMs: 200 }

export class LinkLatency {
  readonly minMs: number
  readonly maxMs: number
  readonly jitterMs: number
  readonly tailChance: number
  readonly tailMs: number
  private readonly seed: number

  constructor(init: LinkLatencyInit) {
    const o = { ...LINK_LATENCY_DEFAULTS, ...init }
    if (!(o.minMs >= 0) || !(o.maxMs >= o.minMs) || !(o.jitterMs >= 0) || !(o.tailMs >= 0) || !(o.tailChance >= 0 && o.tailChance <= 1)) {
      throw new RangeError('latency must satisfy 0 <= minMs <= maxMs, jitterMs >= 0, tailMs >= 0, 0 <= tailChance <= 1')
    }
    this.seed = o.seed
    this.minMs = o.minMs
    this.maxMs = o.maxMs
    this.jitterMs = o.jitterMs
    this.tailChance = o.tailChance
    this.tailMs = o.tailMs
  }

  /** The largest delay any message can have. */
  get boundMs(): number {
    return this.maxMs + this.jitterMs + this.tailMs
  }

  /** The link's base latency (symmetric). */
  base(a: number, b: number): number {
    const [lo, hi] = a < b ? [a, b] : [b, a]
    return this.minMs + hashUnit(this.seed, lo, hi, 1) * (this.maxMs - this.minMs)
  }

  /** Delay of message `key` (any integer naming it) from `from` to `to`. */
  delay(from: number, to: number, key: number, salt = 0): number {
    let d = this.base(from, to) + hashUnit(this.seed, key, to, 2, salt) * this.jitterMs
    if (this.tailChance > 0 && hashUnit(this.seed, key, to, 3, salt) < this.tailChance)
      d += hashUnit(this.seed, key, to, 4, salt) * this.tailMs
    return d
  }
}
