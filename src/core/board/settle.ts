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
}

export const SETTLE_DEFAULTS: Required<SettleWindowInit> = {
  k: 3,
  minMs: 250,
  maxMs: 10_000,
  defaultMs: 2_000,
  maxSamples: 512
}

export class SettleWindow {
  readonly options: Required<SettleWindowInit>
  private readonly samples: number[] = []
  private next = 0
  private cachedP99: number | undefined

  constructor (init: SettleWindowInit = {}) {
    const o = { ...SETTLE_DEFAULTS, ...init }
    if (!(o.k > 0) || !(o.minMs >= 0) || !(o.maxMs >= o.minMs) || !(o.defaultMs >= 0) || !(o.maxSamples >= 1)) {
      throw new InvalidArgumentError('settle window options must satisfy k > 0, 0 <= minMs <= maxMs, defaultMs >= 0, maxSamples >= 1')
    }
    this.options = o
  }

  /** Adds one observed round trip to a peer, in ms, timed on this node's clock. Negative or non-finite samples are dropped. */
  addSample (latencyMs: number): void {
    if (!Number.isFinite(latencyMs) || latencyMs < 0) return
    if (this.samples.length < this.options.maxSamples) this.samples.push(latencyMs)
    else this.samples[this.next] = latencyMs
    this.next = (this.next + 1) % this.options.maxSamples
    this.cachedP99 = undefined
  }

  get sampleCount (): number {
    return this.samples.length
  }

  /** 99th percentile of the kept samples (nearest rank), or undefined without samples. */
  p99 (): number | undefined {
    if (this.samples.length === 0) return undefined
    if (this.cachedP99 === undefined) {
      const sorted = [...this.samples].sort((a, b) => a - b)
      this.cachedP99 = sorted[Math.ceil(0.99 * sorted.length) - 1]
    }
    return this.cachedP99
  }

  /** clamp(k * p99, minMs, maxMs), or defaultMs without samples. */
  windowMs (): number {
    const p99 = this.p99()
    if (p99 === undefined) return this.options.defaultMs
    return Math.min(this.options.maxMs, Math.max(this.options.minMs, this.options.k * p99))
  }
}

export function createSettleWindow (init?: SettleWindowInit): SettleWindow {
  return new SettleWindow(init)
}

export type ClaimOutcome =
  | { outcome: 'HELD', task: string, epoch: number }
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
export function claimOutcome (board: Board, task: string, me: string, epoch: number): ClaimOutcome {
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
