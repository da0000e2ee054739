// Stalls of this process: a timer armed every `periodMs`, each firing late by
// the time the process stood still (a SIGSTOP, a VM frozen, an event loop
// busy elsewhere). A daemon that stood still heard nothing meanwhile, so its
// board must not trust what it saw before (core/board/claim-protocol
// `stalled`). One timer per process, however many daemons run in it; it runs
// only while someone listens, and keeps no process alive.

export type StallListener = (ms: number, now: number) => void

export interface StallWatchInit {
  periodMs?: number
  /** stalls shorter than this are not reported */
  floorMs?: number
  /** the monotonic clock */
  now?: () => number
  timers?: { set: (fn: () => void, ms: number) => unknown; clear: (t: unknown) => void }
}

export class StallWatch {
  private readonly periodMs: number
  private readonly floorMs: number
  private readonly now: () => number
  private readonly timers: NonNullable<StallWatchInit['timers']>
  private readonly listeners = new Set<StallListener>()
  private timer: unknown
  private due = 0

  constructor(init: StallWatchInit = {}) {
    this.periodMs = init.periodMs ?? 250
    this.floorMs = init.floorMs ?? 500
    this.now = init.now ?? (() => performance.now())
    this.timers = init.timers ?? {
      set: (fn, ms) => {
        const t = setTimeout(fn, ms)
        t.unref()
        return t
      },
      clear: t => {
        clearTimeout(t as NodeJS.Timeout)
      }
    }
  }

  /** Calls `fn` with each stall from now on (its length and when it ended); returns the unsubscribe. */
  subscribe(fn: StallListener): () => void {
    this.listeners.add(fn)
    if (this.listeners.size === 1) this.arm(this.now())
    return () => {
      if (!this.listeners.delete(fn) || this.listeners.size > 0) return
      this.timers.clear(this.timer)
    }
  }

  /**
   * Reports a stall still going on at `now` (the timer is due but has not
   * run): for a caller about to act on what it saw before, in the stall's
   * wake, before the timer's turn comes.
   */
  poll(now = this.now()): void {
    if (this.listeners.size === 0) return
    const late = now - this.due
    if (late < this.floorMs) return
    this.timers.clear(this.timer)
    this.fire(late, now)
  }

  private arm(from: number): void {
    this.due = from + this.periodMs
    this.timer = this.timers.set(() => {
      const now = this.now()
      this.fire(now - this.due, now)
    }, this.periodMs)
  }

  private fire(late: number, now: number): void {
    this.arm(now)
    if (late < this.floorMs) return
    for (const fn of [...this.listeners]) fn(late, now)
  }
}

/** This process's stalls, shared by every daemon in it. */
export const processStalls = new StallWatch()
