// The swarm's budget: caps on dollars, tokens and agent-hours for the whole
// swarm, and on dollars per agent. Its fields and its fold are here and only
// here. In a swarm with an operator the budget is an operator's signed action
// (core/operator judges those: the latest in the operator's order holds) and
// the members' own budget entries count for nothing; without one, the latest
// budget entry in (lamport, author) order holds. Either way the same on every
// replica that holds the same entries.
import type { Budget } from '../../gen/agency/v1/log.js'
import { InvalidArgumentError } from '../errors.js'
import { compareOrder, type Ordered } from '../board/order.js'
import { MAX_BUDGET_MICRO_USD, MAX_BUDGET_SECONDS, MAX_BUDGET_TOKENS } from './spend-bounds.js'

/** The caps; 0 is no cap. */
export interface BudgetCaps {
  microUsd: number
  tokens: number
  agentSeconds: number
  perAgentMicroUsd: number
}

export interface BudgetSetting extends BudgetCaps {
  setBy: string
  entryId: string
}

export const NO_BUDGET: BudgetCaps = Object.freeze({ microUsd: 0, tokens: 0, agentSeconds: 0, perAgentMicroUsd: 0 })

export function hasAnyCap(b: BudgetCaps): boolean {
  return b.microUsd > 0 || b.tokens > 0 || b.agentSeconds > 0 || b.perAgentMicroUsd > 0
}

/**
 * The operators' part of the budget, from the board's judgement of their
 * actions (Board.operatorBudget): whether operators govern the swarm, and
 * the caps of their latest budget action.
 */
export interface GovernedBudget {
  governs: boolean
  latest?: { budget: Budget; setBy: string; entryId: string }
}

/** The budget entries folded: the latest holds, unless operators govern the swarm. */
export class BudgetHistory {
  private latest: (Ordered & { setting: BudgetSetting }) | undefined

  add(header: Ordered, b: Budget): boolean {
    const record = {
      ...header,
      setting: {
        microUsd: b.microUsd,
        tokens: b.tokens,
        agentSeconds: b.agentSeconds,
        perAgentMicroUsd: b.perAgentMicroUsd,
        setBy: header.author,
        entryId: header.id
      }
    }
    if (this.latest != null && compareOrder(this.latest, record) >= 0) return false
    this.latest = record
    return true
  }

  /** The budget in force: the operators' latest while they govern (`governed`), else the latest entry. */
  current(governed?: GovernedBudget): BudgetSetting | undefined {
    if (governed?.governs === true) {
      const l = governed.latest
      return l === undefined
        ? undefined
        : {
            microUsd: l.budget.microUsd,
            tokens: l.budget.tokens,
            agentSeconds: l.budget.agentSeconds,
            perAgentMicroUsd: l.budget.perAgentMicroUsd,
            setBy: l.setBy,
            entryId: l.entryId
          }
    }
    return this.latest == null ? undefined : { ...this.latest.setting }
  }
}

/** A change asked for: an unset field keeps the current cap; 0 removes it. */
export interface BudgetChange {
  usd?: number
  tokens?: number
  hours?: number
  perAgentUsd?: number
}

/** The caps after `change`, checked: a negative, non-numeric or absurd value is an InvalidArgumentError and changes nothing. */
export function changedBudget(current: BudgetCaps, change: BudgetChange): BudgetCaps {
  const money = (name: string, v: number | undefined, keep: number): number =>
    v == null ? keep : Math.round(checked(name, v, MAX_BUDGET_MICRO_USD / 1e6) * 1e6)
  const next: BudgetCaps = {
    microUsd: money('usd', change.usd, current.microUsd),
    tokens: change.tokens == null ? current.tokens : Math.round(checked('tokens', change.tokens, MAX_BUDGET_TOKENS)),
    agentSeconds:
      change.hours == null ? current.agentSeconds : Math.round(checked('hours', change.hours, MAX_BUDGET_SECONDS / 3600) * 3600),
    perAgentMicroUsd: money('per-agent-usd', change.perAgentUsd, current.perAgentMicroUsd)
  }
  return next
}

function checked(name: string, v: number, max: number): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new InvalidArgumentError(`budget ${name}: expected a number, got ${String(v)}`)
  if (v < 0) throw new InvalidArgumentError(`budget ${name}: must not be negative, got ${v}`)
  if (v > max) throw new InvalidArgumentError(`budget ${name}: ${v} is over the largest cap (${max})`)
  return v
}
