// A simulated network on virtual time: messages are delivered after a
// per-link latency drawn from a seeded PRNG, may be lost, duplicated or held
// back (and so reordered), are cut by partitions and are dropped at nodes
// that are down. Nothing runs on real timers, so a thousand nodes fit in one
// test process and a seed replays a run.

import { EventQueue } from './event-queue.js'
import type { Random } from './random.js'

export type Handler<M> = (msg: M, from: string, sentAt: number) => void

export interface NetworkInit<M = unknown> {
  rng: Random
  /** each link gets a base latency uniform in [minMs, maxMs) */
  minLatencyMs?: number
  maxLatencyMs?: number
  /** extra per-message latency, uniform in [0, jitterMs) */
  jitterMs?: number
  /** probability that a message is lost */
  loss?: number
  /** probability that a message is delivered twice (the copy with its own latency) */
  duplicate?: number
  /** probability that a message is held back by up to reorderMs more (so later ones overtake it) */
  reorder?: number
  reorderMs?: number
  /** hears of every message that does not arrive */
  onDrop?: (from: string, to: string, msg: M, why: 'lost' | 'cut') => void
}

export interface NetworkStats {
  sent: number
  delivered: number
  lost: number
  cut: number
  duplicated: number
}

/** The faults a network has on every message; they can change during a run. */
export interface MessageFaults {
  loss: number
  duplicate: number
  reorder: number
  reorderMs: number
}

export class SimNetwork<M> {
  private readonly rng: Random
  private readonly opts: { minLatencyMs: number; maxLatencyMs: number; jitterMs: number }
  private faults: MessageFaults
  private readonly onDrop: NetworkInit<M>['onDrop']
  private readonly queue = new EventQueue()
  private readonly handlers = new Map<string, Handler<M>>()
  private readonly down = new Set<string>()
  private readonly linkLatency = new Map<string, number>()
  private groupOf: Map<string, number> | undefined
  private clock = 0
  readonly stats: NetworkStats = { sent: 0, delivered: 0, lost: 0, cut: 0, duplicated: 0 }

  constructor(init: NetworkInit<M>) {
    this.rng = init.rng
    this.opts = {
      minLatencyMs: init.minLatencyMs ?? 5,
      maxLatencyMs: init.maxLatencyMs ?? 50,
      jitterMs: init.jitterMs ?? 5
    }
    this.faults = { loss: init.loss ?? 0, duplicate: init.duplicate ?? 0, reorder: init.reorder ?? 0, reorderMs: init.reorderMs ?? 0 }
    this.onDrop = init.onDrop
  }

  /** Changes the faults every message meets from now on (a quiet network: all zero). */
  setFaults(faults: Partial<MessageFaults>): void {
    this.faults = { ...this.faults, ...faults }
  }

  /** Virtual time, ms. */
  get now(): number {
    return this.clock
  }

  get pending(): number {
    return this.queue.size
  }

  /** Registered node ids, in registration order. */
  nodes(): string[] {
    return [...this.handlers.keys()]
  }

  register(id: string, handler: Handler<M>): void {
    this.handlers.set(id, handler)
  }

  /** A node that is down neither sends nor receives (a crashed process). */
  setDown(id: string, down: boolean): void {
    if (down) this.down.add(id)
    else this.down.delete(id)
  }

  isDown(id: string): boolean {
    return this.down.has(id)
  }

  /** Splits the network; nodes not named form one more group together. */
  partition(groups: string[][]): void {
    this.groupOf = new Map()
    groups.forEach((g, i) => {
      for (const id of g) this.groupOf?.set(id, i)
    })
  }

  heal(): void {
    this.groupOf = undefined
  }

  canReach(from: string, to: string): boolean {
    if (this.down.has(from) || this.down.has(to)) return false
    if (this.groupOf === undefined) return true
    return (this.groupOf.get(from) ?? -1) === (this.groupOf.get(to) ?? -1)
  }

  send(from: string, to: string, msg: M): void {
    if (from === to || !this.handlers.has(to)) return
    this.stats.sent++
    if (!this.canReach(from, to)) {
      this.stats.cut++
      this.onDrop?.(from, to, msg, 'cut')
      return
    }
    const f = this.faults
    if (f.loss > 0 && this.rng.chance(f.loss)) {
      this.stats.lost++
      this.onDrop?.(from, to, msg, 'lost')
      return
    }
    const sentAt = this.clock
    const copies = f.duplicate > 0 && this.rng.chance(f.duplicate) ? 2 : 1
    if (copies === 2) this.stats.duplicated++
    for (let i = 0; i < copies; i++) {
      let latency = this.latency(from, to) + this.rng.next() * this.opts.jitterMs
      if (f.reorder > 0 && this.rng.chance(f.reorder)) latency += this.rng.next() * f.reorderMs
      this.queue.push(sentAt + latency, () => {
        // A partition or crash that started while the message was in flight cuts it too.
        if (!this.canReach(from, to)) {
          this.stats.cut++
          this.onDrop?.(from, to, msg, 'cut')
          return
        }
        this.stats.delivered++
        this.handlers.get(to)?.(msg, from, sentAt)
      })
    }
  }

  /** Sends to every other registered node. */
  broadcast(from: string, msg: M): void {
    for (const to of this.handlers.keys()) if (to !== from) this.send(from, to, msg)
  }

  /** Runs `fn` at virtual time now + delayMs. */
  schedule(delayMs: number, fn: () => void): void {
    this.queue.push(this.clock + Math.max(0, delayMs), fn)
  }

  /** Processes events in time order up to `until` (inclusive) or until none are left; returns how many ran. */
  run(until = Infinity, maxEvents = 10_000_000): number {
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

  private latency(from: string, to: string): number {
    const key = from < to ? `${from}\u0000${to}` : `${to}\u0000${from}`
    let base = this.linkLatency.get(key)
    if (base === undefined) {
      base = this.rng.between(this.opts.minLatencyMs, this.opts.maxLatencyMs)
      this.linkLatency.set(key, base)
    }
    return base
  }
}
