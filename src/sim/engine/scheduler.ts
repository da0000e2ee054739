// Virtual time for a whole simulated run: one clock and one queue of timed
// events. Nothing waits on real timers, so hours of a swarm's work run in
// seconds, and ties run in scheduling order, so a seed replays a run exactly.

import { EventQueue } from './event-queue.js'

export class Scheduler {
  private readonly queue = new EventQueue()
  private clock = 0
  private ran = 0

  /** Virtual time, ms. */
  get now(): number {
    return this.clock
  }

  /** Events run so far. */
  get eventsRun(): number {
    return this.ran
  }

  get pending(): number {
    return this.queue.size
  }

  /** Runs `fn` at virtual time `at` (never before now). */
  at(at: number, fn: () => void): void {
    this.queue.push(Math.max(this.clock, at), fn)
  }

  /** Runs `fn` at now + delayMs. */
  after(delayMs: number, fn: () => void): void {
    this.queue.push(this.clock + Math.max(0, delayMs), fn)
  }

  /**
   * Runs events in time order until `stop()` holds, no event is left, or the
   * next event is later than `until`. Returns how many ran.
   */
  run({ until = Infinity, stop, maxEvents = Infinity }: { until?: number; stop?: () => boolean; maxEvents?: number } = {}): number {
    let n = 0
    for (;;) {
      if (stop?.() === true) break
      const next = this.queue.peek()
      if (next === undefined || next.at > until) break
      if (n >= maxEvents) throw new Error(`simulation did not finish within ${maxEvents} events`)
      this.queue.pop()
      this.clock = Math.max(this.clock, next.at)
      next.run()
      n++
    }
    if (until !== Infinity && stop?.() !== true) this.clock = Math.max(this.clock, until)
    this.ran += n
    return n
  }
}
