// When a claim may be answered. A claim is settled once it has been visible
// for the settle window with no better competitor; the window is a few times
// the p99 of observed round trips to peers, clamped, so a quiet LAN answers
// quickly and a slow mesh waits long enough for competing claims to arrive.
// A round trip is the unit because a claim must outwait one: its own entry
// going out, and a competitor's, written just before it arrived, coming back.
// And a round trip is timed on this node's own clock, so no other machine's
// clock, behind or ahead, can shorten the window.

import { InvalidArgumentError } from '../errors.js'
import type { Board } from './board.js'

export interface SettleWindowInit {
  /** window = k * p99 of the latency samples */
  k?: number
  minMs?: number
  maxMs?: number
  /** window before any sample is known */
  defaultMs?: number
  /** samples kept (the most recent) */
  maxSamples?: number
  /**
   * A sample older than this no longer counts (start-up round trips, timed
   * while every daemon was busy joining, would widen the window for as long
   * as they stay among the last `maxSamples`)...
   */
  maxAgeMs?: number
  /** ...unless fewer than this many are younger: the newest this many count then, whatever their age */
  minSamples?: number
}

export const SETTLE_DEFAULTS: Required<SettleWindowInit> = {
  k: 3,
  minMs: 250,
  maxMs: 10_000,
  defaultMs: 2_000,
  maxSamples: 512,
  maxAgeMs: 60_000,
  minSamples: 8
}

/**
 * The settle window from recent round trips. A sample carries the time it
 * was taken (this node's monotonic clock, given by the caller: the core has
 * no clock); a sample given without one ages by count only.
 */
export class SettleWindow {
  readonly options: Required<SettleWindowInit>
  /** ring buffer, oldest at `next` once full */
  private readonly samples: Array<{ ms: number; at: number }> = []
  private next = 0
  private cachedP99: number | undefined
  /** the cached p99 holds from cachedFrom until cachedUntil (when its oldest counted sample ages out) */
  private cachedFrom = Number.POSITIVE_INFINITY
  private cachedUntil = Number.NEGATIVE_INFINITY

  constructor(init: SettleWindowInit = {}) {
    const o = { ...SETTLE_DEFAULTS, ...init }
    if (
      !(o.k > 0) ||
      !(o.minMs >= 0) ||
      !(o.maxMs >= o.minMs) ||
      !(o.defaultMs >= 0) ||
      !(o.maxSamples >= 1) ||
      !(o.maxAgeMs > 0) ||
      !(o.minSamples >= 1)
    ) {
      throw new InvalidArgumentError(
        'settle window options must satisfy k > 0, 0 <= minMs <= maxMs, defaultMs >= 0, maxSamples >= 1, maxAgeMs > 0, minSamples >= 1'
      )
    }
    this.options = o
  }

  /**
   * Adds one observed round trip to a peer, in ms, timed on this node's
   * clock, taken at `at` (same clock). Negative or non-finite samples are
   * dropped.
   */
  addSample(latencyMs: number, at = Number.POSITIVE_INFINITY): void {
    if (!Number.isFinite(latencyMs) || latencyMs < 0 || Number.isNaN(at)) return
    const sample = { ms: latencyMs, at }
    if (this.samples.length < this.options.maxSamples) this.samples.push(sample)
    else this.samples[this.next] = sample
    this.next = (this.next + 1) % this.options.maxSamples
    this.cachedP99 = undefined
  }

  /** Samples kept, counted or not. */
  get sampleCount(): number {
    return this.samples.length
  }

  /** The samples that count at `now`: younger than maxAgeMs, or the newest minSamples. */
  private counted(now: number): Array<{ ms: number; at: number }> {
    const n = this.samples.length
    const newestFirst: Array<{ ms: number; at: number }> = []
    for (let i = 1; i <= n; i++) newestFirst.push(this.samples[(this.next - i + n) % n])
    const young = newestFirst.filter(x => now - x.at <= this.options.maxAgeMs)
    return young.length >= this.options.minSamples ? young : newestFirst.slice(0, this.options.minSamples)
  }

  /**
   * 99th percentile (nearest rank) of the samples that count at `now`, or
   * undefined without samples. Without `now`, of every sample kept.
   */
  p99(now?: number): number | undefined {
    if (this.samples.length === 0) return undefined
    if (now === undefined) return nearestRank99(this.samples.map(x => x.ms))
    if (this.cachedP99 === undefined || now >= this.cachedUntil || now < this.cachedFrom) {
      const counted = this.counted(now)
      this.cachedFrom = now
      this.cachedP99 = nearestRank99(counted.map(x => x.ms))
      // Until the oldest counted sample ages out; a set that is the newest
      // minSamples changes only when a sample is added.
      const young = counted.filter(x => now - x.at <= this.options.maxAgeMs)
      this.cachedUntil =
        young.length === counted.length && young.length > this.options.minSamples
          ? Math.min(...young.map(x => x.at)) + this.options.maxAgeMs
          : Number.POSITIVE_INFINITY
    }
    return this.cachedP99
  }

  /** clamp(k * p99, minMs, maxMs) of the samples that count at `now`, or defaultMs without samples. */
  windowMs(now?: number): number {
    const p99 = this.p99(now)
    if (p99 === undefined) return this.options.defaultMs
    return Math.min(this.options.maxMs, Math.max(this.options.minMs, this.options.k * p99))
  }
}

function nearestRank99(values: number[]): number {
  const sorted = values.sort((a, b) => a - b)
  return sorted[Math.ceil(0.99 * sorted.length) - 1]
}

export function createSettleWindow(init?: SettleWindowInit): SettleWindow {
  return new SettleWindow(init)
}

export type ClaimOutcome =
  | { outcome: 'HELD'; task: string; epoch: number }
  | {
      outcome: 'LOST'
      task: string
      epoch: number
      /** who holds the task now (or finished it); undefined when nobody does */
      winner?: string
      /**
       * outbid: a smaller claim at the same epoch; superseded: a higher epoch;
       * released: my claim is released; done: someone else finished the task;
       * missing: this board has no such claim of mine.
       */
      reason: 'outbid' | 'superseded' | 'released' | 'done' | 'missing'
    }

/** HELD when `me` holds `task` at `epoch` on this board, else LOST naming the winner. */
export function claimOutcome(board: Board, task: string, me: string, epoch: number): ClaimOutcome {
  const done = board.doneRecord(task)
  if (done !== undefined) {
    if (done.by === me && done.epoch === epoch) return { outcome: 'HELD', task, epoch }
    return { outcome: 'LOST', task, epoch, winner: done.by, reason: 'done' }
  }
  const holder = board.holder(task)
  if (holder?.holder === me && holder.epoch === epoch) return { outcome: 'HELD', task, epoch }
  const lost = (reason: Extract<ClaimOutcome, { outcome: 'LOST' }>['reason']): ClaimOutcome =>
    holder === undefined ? { outcome: 'LOST', task, epoch, reason } : { outcome: 'LOST', task, epoch, winner: holder.holder, reason }
  const mine = board.claimStatus(task, me, epoch)
  if (mine !== 'active') return lost(mine === 'released' ? 'released' : 'missing')
  if (holder !== undefined && holder.epoch > epoch) return lost('superseded')
  return lost('outbid')
}
