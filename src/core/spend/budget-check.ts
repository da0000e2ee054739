// Whether an agent may start a run (or an ACP turn) under the budget. Every
// daemon answers from the same recorded spend (the fold) plus what the runs
// going now may still spend, without a central counter:
//
//   recorded + runs in flight x allowance >= cap  =>  no new run
//
// The allowance of a run in flight is the largest run recorded so far (at
// least `minRunAllowance`): a run is counted at its worst before it reports.
// The runs in flight are the ones this daemon knows of (its own, about to
// start, and its live peers' whose harness is running, from heartbeats).
//
// While the swarm is not whole (a member has not been heard from: a partition
// or a crash), an agent may spend only its share of what was left when it last
// saw the whole swarm: its own spend then, plus the rest divided by the
// members. The shares of all agents add up to the cap, so the halves of a
// partition cannot both spend the remainder. docs/spend.md states the bound
// on the overshoot that is left (runs already going when the cap is reached).
import { allTokens, type SpendTotals } from './spend-totals.js'
import type { BudgetCaps } from './budget.js'
import type { RunSize } from './spend-book.js'

export interface SpendView {
  /** the swarm's recorded spend, as this replica holds it */
  total: SpendTotals
  /** this agent's recorded spend */
  own: SpendTotals
  largestRun: RunSize
  /** runs going now that this daemon knows of, the one about to start included */
  runsInFlight: number
  /** this agent's runs in flight (1 when it is about to start one) */
  ownInFlight: number
  /** set while the swarm is not whole: what this agent may still spend */
  share?: SpendShare
}

/** What one agent may spend while it cannot see the whole swarm. */
export interface SpendShare {
  /** the swarm's recorded spend when it was last seen whole */
  totalAtWhole: SpendTotals
  /** this agent's recorded spend then */
  ownAtWhole: SpendTotals
  /** agents in the swarm then */
  members: number
}

export interface BudgetVerdict {
  reached: boolean
  /** the caps reached, in words */
  reasons: string[]
  /** what the runs in flight were counted at, micro-dollars */
  inFlightMicroUsd: number
}

export interface BudgetCheckOptions {
  /** the least a run in flight is counted at, before any run is recorded */
  minRunAllowance?: RunSize
}

const usd = (micro: number): string => `$${(micro / 1e6).toFixed(micro < 1e6 ? 4 : 2)}`
const hours = (ms: number): string => `${(ms / 3_600_000).toFixed(2)} h`

export function checkBudget(caps: BudgetCaps, view: SpendView, o: BudgetCheckOptions = {}): BudgetVerdict {
  const floor = o.minRunAllowance ?? { microUsd: 0, tokens: 0, wallMs: 0 }
  const allowance: RunSize = {
    microUsd: Math.max(view.largestRun.microUsd, floor.microUsd),
    tokens: Math.max(view.largestRun.tokens, floor.tokens),
    wallMs: Math.max(view.largestRun.wallMs, floor.wallMs)
  }
  const n = Math.max(0, view.runsInFlight)
  const own = Math.max(0, view.ownInFlight)
  const reasons: string[] = []
  const over = (cap: number, recorded: number, flight: number, what: string, show: (x: number) => string): void => {
    if (cap > 0 && recorded + flight >= cap)
      reasons.push(`${what}: ${show(recorded)} spent${flight > 0 ? ` + ${show(flight)} in flight` : ''} of ${show(cap)}`)
  }
  over(caps.microUsd, view.total.microUsd, n * allowance.microUsd, 'dollars', usd)
  over(caps.tokens, allTokens(view.total), n * allowance.tokens, 'tokens', String)
  over(caps.agentSeconds * 1000, view.total.wallMs, n * allowance.wallMs, 'agent-hours', hours)
  over(caps.perAgentMicroUsd, view.own.microUsd, own * allowance.microUsd, "this agent's dollars", usd)
  if (view.share != null) {
    const s = view.share
    const m = Math.max(1, s.members)
    const shareOf = (cap: number, totalThen: number, ownThen: number): number => ownThen + Math.max(0, cap - totalThen) / m
    const shareOver = (
      cap: number,
      totalThen: number,
      ownThen: number,
      ownNow: number,
      flight: number,
      what: string,
      show: (x: number) => string
    ): void => {
      if (cap <= 0) return
      const mine = shareOf(cap, totalThen, ownThen)
      if (ownNow + flight >= mine)
        reasons.push(
          `${what}, this agent's share while the swarm is split: ${show(ownNow)} spent${flight > 0 ? ` + ${show(flight)} in flight` : ''} of ${show(Math.floor(mine))}`
        )
    }
    shareOver(caps.microUsd, s.totalAtWhole.microUsd, s.ownAtWhole.microUsd, view.own.microUsd, own * allowance.microUsd, 'dollars', usd)
    shareOver(
      caps.tokens,
      allTokens(s.totalAtWhole),
      allTokens(s.ownAtWhole),
      allTokens(view.own),
      own * allowance.tokens,
      'tokens',
      String
    )
    shareOver(
      caps.agentSeconds * 1000,
      s.totalAtWhole.wallMs,
      s.ownAtWhole.wallMs,
      view.own.wallMs,
      own * allowance.wallMs,
      'agent-hours',
      hours
    )
  }
  return { reached: reasons.length > 0, reasons, inFlightMicroUsd: n * allowance.microUsd }
}
