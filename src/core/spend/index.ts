// The swarm's spend, budget and shared rate limits, as folds over the log.
export { SpendBook, SPEND_GROUPINGS, type SpendGrouping, type RunSize } from './spend-book.js'
export { allInput, allTokens, zeroTotals, type SpendTotals } from './spend-totals.js'
export {
  BudgetHistory,
  changedBudget,
  hasAnyCap,
  NO_BUDGET,
  type BudgetCaps,
  type BudgetChange,
  type BudgetSetting,
  type GovernedBudget
} from './budget.js'
export { checkBudget, type BudgetVerdict, type SpendShare, type SpendView } from './budget-check.js'
export { SwarmWholeness } from './swarm-wholeness.js'
export { RateLimitHolds, resumeAt, type RateLimitHoldView } from './rate-limit-holds.js'
export { SpendFold } from './spend-fold.js'
