// The three spend views folded from one stream of log entries: usage into the
// spend book, budget entries into the budget history, rate_limit entries into
// the holds. Other kinds pass by.
import { Budget, RateLimit, Usage } from '../../gen/agency/v1/log.js'
import { BudgetHistory } from './budget.js'
import { RateLimitHolds } from './rate-limit-holds.js'
import { SpendBook } from './spend-book.js'

export interface SpendEntry {
  id: string
  author: string
  seq: number
  lamport: number
  time: number
  kind: string
  /** the decoded body */
  body: unknown
}

export const SPEND_KINDS: ReadonlySet<string> = new Set(['usage', 'budget', 'rate_limit'])

export class SpendFold {
  readonly book = new SpendBook()
  readonly budgets = new BudgetHistory()
  readonly holds = new RateLimitHolds()

  /** Folds one entry in; true when it changed a view. */
  apply(e: SpendEntry): boolean {
    switch (e.kind) {
      case 'usage':
        return this.book.add(e.id, e.author, Usage.fromPartial(e.body as object))
      case 'budget':
        return this.budgets.add(e, Budget.fromPartial(e.body as object))
      case 'rate_limit':
        return this.holds.add(e.author, e.time, RateLimit.fromPartial(e.body as object))
      default:
        return false
    }
  }
}
