// How long an agent held at the budget keeps its claims. While the budget
// holds the harness, the agent's claims ride on heartbeats as usual (its work
// is on the wip refs, nothing is lost); once the hold has lasted the stated
// time (--budget-keep-leases, like a pause's --keep-leases) the held tasks are
// given back with a hand-off note, so an agent stopped by its own per-agent
// cap, or a swarm whose cap stays where it is, does not strand them. Raising
// the cap before then ends the hold and keeps the claims. The time is counted
// on this daemon's clock from the first start the budget held.

export interface BudgetLeaseKeeperInit {
  /** how long the claims are kept once the budget holds the harness; 0: as long as it holds */
  keepMs: number
  /** whether the budget still holds this agent (asked when the time is up) */
  stillHeld: () => boolean
  /** gives the held tasks back with a hand-off note */
  releaseHeld: (note: string) => Promise<void>
  /** the claims were given back (for the daemon's log) */
  onReleased?: (note: string) => void
  onError: (err: unknown) => void
}

/** Beyond what a timer holds (about 24 days) the claims are kept for the whole hold. */
const MAX_TIMER_MS = 2 ** 31 - 1

export class BudgetLeaseKeeper {
  private readonly init: BudgetLeaseKeeperInit
  private timer: NodeJS.Timeout | undefined

  constructor(init: BudgetLeaseKeeperInit) {
    this.init = init
  }

  /** The start gate's answer: held by the budget now, or not. The first held answer starts the count; a free one ends it. */
  observe(held: boolean): void {
    if (!held) {
      this.clear()
      return
    }
    const ms = this.init.keepMs
    if (this.timer != null || ms <= 0 || ms > MAX_TIMER_MS) return
    this.timer = setTimeout(() => {
      this.timer = undefined
      this.timeUp()
    }, ms)
    this.timer.unref()
  }

  stop(): void {
    this.clear()
  }

  private timeUp(): void {
    if (!this.init.stillHeld()) return
    const note = `the budget held this agent longer than the ${describe(this.init.keepMs)} its tasks are kept for; the work so far is on the task's wip ref`
    this.init.releaseHeld(note).then(() => this.init.onReleased?.(note), this.init.onError)
  }

  private clear(): void {
    clearTimeout(this.timer)
    this.timer = undefined
  }
}

function describe(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`
  if (ms % 60_000 === 0) return `${ms / 60_000} min`
  return `${Math.round(ms / 100) / 10} s`
}
