// A simulated network on virtual time: messages are delivered after a
// per-link latency drawn from a seeded PRNG, may be lost, are cut by
// partitions and are dropped at nodes that are down. Nothing runs on real
// timers, so a thousand nodes fit in one test process and a seed replays a run.

import { EventQueue } from './event-queue.js'
import type { Random } from './random.js'

export type Handler<M> = (msg: M, from: string, sentAt: number) => void

export interface NetworkInit {
  rng: Random
  /** each link gets a base latency uniform in [minMs, maxMs) */
  minLatencyMs?: number
  maxLatencyMs?: number
  /** extra per-message latency, uniform in [0, jitterMs) */
  jitterMs?: number
  /** probability that a message is lost */
  loss?: number
}

export interface NetworkStats { sent: number, delivered: number, lost: number, cut: number }

export class SimNetwork<M> {
  private readonly rng: Random
  private readonly opts: Required<Omit<NetworkInit, 'rng'>>
  private readonly queue = new EventQueue()
  private readonly handlers = new Map<string, Handler<M>>()
  private readonly down = new Set<string>()
  private readonly linkLatency = new Map<string, number>()
  private groupOf: Map<string, number> | undefined
  private clock = 0
  readonly stats: NetworkStats = { sent: 0, delivered: 0, lost: 0, cut: 0 }

  constructor (init: NetworkInit) {
    this.rng = init.rng
    this.opts = {
      minLatencyMs: init.minLatencyMs ?? 5,
      maxLatencyMs: init.maxLatencyMs ?? 50,
      jitterMs: init.jitterMs ?? 5,
      loss: init.loss ?? 0
    }
  }

  /** Virtual time, ms. */
  get now (): number {
    return this.clock
  }

  get pending (): number {
    return this.queue.size
  }

  /** Registered node ids, in registration order. */
  nodes (): string[] {
    return [...this.handlers.keys()]
  }

  register (id: string, handler: Handler<M>): void {
    this.handlers.set(id, handler)
  }

  /** A node that is down neither sends nor receives (a crashed process). */
  setDown (id: string, down: boolean): void {
    if (down) this.down.add(id)
    else this.down.delete(id)
  }

  isDown (id: string): boolean {
    return this.down.has(id)
  }

  /** Splits the network; nodes not named form one more group together. */
  partition (groups: string[][]): void {
    this.groupOf = new Map()
    groups.forEach((g, i) => { for (const id of g) this.groupOf?.set(id, i) })
  }

  heal (): void {
    this.groupOf = undefined
  }

  canReach (from: string, to: string): boolean {
    if (this.down.has(from) || this.down.has(to)) return false
    if (this.groupOf === undefined) return true
    return (this.groupOf.get(from) ?? -1) === (this.groupOf.get(to) ?? -1)
  }

  send (from: string, to: string, msg: M): void {
    if (from === to || !this.handlers.has(to)) return
    this.stats.sent++
    if (!this.canReach(from, to)) { this.stats.cut++; return }
    if (this.opts.loss > 0 && this.rng.chance(this.opts.loss)) { this.stats.lost++; return }
    const sentAt = this.clock
    const latency = this.latency(from, to) + this.rng.next() * this.opts.jitterMs
    this.queue.push(sentAt + latency, () => {
      // A partition or crash that started while the message was in flight cuts it too.
      if (!this.canReach(from, to)) { this.stats.cut++; return }
      this.stats.delivered++
      this.handlers.get(to)?.(msg, from, sentAt)
    })
  }

  /** Sends to every other registered node. */
  broadcast (from: string, msg: M): void {
    for (const to of this.handlers.keys()) if (to !== from) this.send(from, to, msg)
  }

  /** Runs `fn` at virtual time now + delayMs. */
  schedule (delayMs: number, fn: () => void): void {
    this.queue.push(this.clock + Math.max(0, delayMs), fn)
  }

  /** Processes events in time order up to `until` (inclusive) or until none are left; returns how many ran. */
  run (until = Infinity, maxEvents = 10_000_000): number {
    let n = 0
    for (;;) {
      const next = this.queue.peek()
      if (next === undefined || next.at > until) break
      if (n >= maxEvents) throw new Error(`simulation did not settle within ${maxEvents} events`)
      this.queue.pop()
      this.clock = Math.max(this.clock, next.at)
      next.run()
      n++
    }
    if (until !== Infinity) this.clock = Math.max(this.clock, until)
    return n
  }

  private latency (from: string, to: string): number {
    const key = from < to ? `${from}\u0000${to}` : `${to}\u0000${from}`
    let base = this.linkLatency.get(key)
    if (base === undefined) {
      base = this.rng.between(this.opts.minLatencyMs, this.opts.maxLatencyMs)
      this.linkLatency.set(key, base)
    }
    return base
  }
}
