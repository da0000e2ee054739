// gRPC handlers for the swarm's spend: usage, the budget and its change.
import type { AgencyServer, BudgetReply, SetBudgetRequest, UsageReply } from '../gen/agency/v1/api.js'
import type { BudgetChange } from '../core/spend/index.js'
import { InvalidArgumentError } from '../core/errors.js'
import { unary } from './grpc-errors.js'

/** What the spend RPCs need of the daemon. */
export interface SpendApi {
  usage: (by: string) => UsageReply
  budget: () => BudgetReply
  setBudget: (change: BudgetChange) => Promise<BudgetReply>
}

const GROUPINGS = new Set(['', 'agent', 'model', 'task'])

export function spendHandlers(spend: SpendApi): Pick<AgencyServer, 'getUsage' | 'getBudget' | 'setBudget'> {
  return {
    getUsage: unary(async req => {
      if (!GROUPINGS.has(req.by)) throw new InvalidArgumentError(`by: "${req.by}" is not one of agent, model, task`)
      return spend.usage(req.by)
    }),
    getBudget: unary(async () => spend.budget()),
    setBudget: unary(async req => await spend.setBudget(budgetChange(req)))
  }
}

function budgetChange(req: SetBudgetRequest): BudgetChange {
  const change: BudgetChange = { usd: req.usd, tokens: req.tokens, hours: req.hours, perAgentUsd: req.perAgentUsd }
  if (Object.values(change).every(v => v == null))
    throw new InvalidArgumentError('set budget: give at least one of usd, tokens, hours, per_agent_usd')
  return change
}
