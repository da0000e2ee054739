// An ACP agent reports a turn's tokens in the prompt response (`usage`,
// unstable in the schema: inputTokens without the cache, cachedReadTokens,
// cachedWriteTokens, outputTokens; claude-agent-acp tallies them per turn) and
// the session's cost so far in `usage_update` notifications (cost.amount in
// cost.currency, cumulative for the session, as the schema says). A turn's
// dollars are then the rise in that cost since the previous turn; only USD
// counts as dollars.
import { count, dollars, record, type ModelUsage } from './run-usage.js'

/** The session's cost so far, from a usage_update notification's `cost`; null when it carries none in USD. */
export function acpSessionCostUsd(update: unknown): number | null {
  const u = record(update)
  if (u?.sessionUpdate !== 'usage_update') return null
  const cost = record(u.cost)
  if (cost == null || String(cost.currency).toUpperCase() !== 'USD') return null
  return dollars(cost.amount)
}

/**
 * One turn's usage from its prompt response, with its dollars from the session's
 * cost before and after the turn; null when the agent reported no tokens.
 */
export function acpTurnUsage(response: unknown, model: string, costBefore: number | null, costAfter: number | null): ModelUsage | null {
  const u = record(record(response)?.usage)
  if (u == null) return null
  const usd = costAfter != null ? Math.max(0, costAfter - (costBefore ?? 0)) : null
  return {
    model,
    inputTokens: count(u.inputTokens),
    cacheReadTokens: count(u.cachedReadTokens),
    cacheWriteTokens: count(u.cachedWriteTokens),
    outputTokens: count(u.outputTokens),
    usd
  }
}
