// How long each phase of a daemon's start took, on its monotonic clock: what
// a slow restart is looked into with (logged once the daemon serves, as
// `start phases`, in milliseconds). `modules` is the time from the process's
// start to the daemon's, mostly loading code.
import { performance } from 'node:perf_hooks'

export class StartPhases {
  private last = performance.now()
  readonly ms: Record<string, number> = { modules: Math.round(performance.now()) }

  /** Ends the phase called `name`, which began where the last one ended. */
  mark(name: string): void {
    const now = performance.now()
    this.ms[name] = Math.round((this.ms[name] ?? 0) + now - this.last)
    this.last = now
  }
}
