// What a usage, budget or rate-limit entry may hold. Part of validation: a
// body outside these bounds is rejected like one that does not decode
// (bad_body), the same on every peer, so one peer's absurd numbers never
// reach anyone's totals. The bounds are far above any real run.
import type { Budget, RateLimit, Usage } from '../../gen/agency/v1/log.js'

/** Tokens of one kind in one run: a run of a day at 100k tokens a second. */
export const MAX_RUN_TOKENS = 10_000_000_000
/** Dollars x 1e6 in one run: $100k. */
export const MAX_RUN_MICRO_USD = 100_000 * 1_000_000
/** One run's wall time: a week. */
export const MAX_RUN_WALL_MS = 7 * 24 * 3_600_000
/** Models in one run. */
export const MAX_RUN_MODELS = 16
/** A cap: $1e9, 1e15 tokens, 1e9 agent-seconds. */
export const MAX_BUDGET_MICRO_USD = 1e9 * 1e6
export const MAX_BUDGET_TOKENS = 1e15
export const MAX_BUDGET_SECONDS = 1e9
/** A rate-limit hold: at most a week past the author's clock. */
export const MAX_HOLD_MS = 7 * 24 * 3_600_000
export const MAX_TEXT = 1000

const within = (n: number, max: number): boolean => Number.isSafeInteger(n) && n >= 0 && n <= max

export function usageFault(u: Usage): string | null {
  // no model: a run that reported no usage still counts its run time
  if (u.models.length > MAX_RUN_MODELS) return `a usage entry names at most ${MAX_RUN_MODELS} models, not ${u.models.length}`
  for (const m of u.models) {
    for (const [name, n] of [
      ['input_tokens', m.inputTokens],
      ['cache_read_tokens', m.cacheReadTokens],
      ['cache_write_tokens', m.cacheWriteTokens],
      ['output_tokens', m.outputTokens]
    ] as const) {
      if (!within(n, MAX_RUN_TOKENS)) return `${name} ${n} is out of range (0 to ${MAX_RUN_TOKENS})`
    }
    if (!within(m.microUsd, MAX_RUN_MICRO_USD)) return `micro_usd ${m.microUsd} is out of range (0 to ${MAX_RUN_MICRO_USD})`
    if (m.model.length > 200) return 'a model name is over 200 characters'
  }
  if (!within(u.wallMs, MAX_RUN_WALL_MS)) return `wall_ms ${u.wallMs} is out of range (0 to ${MAX_RUN_WALL_MS})`
  if (u.task.length > MAX_TEXT || u.harness.length > MAX_TEXT) return 'task or harness is too long'
  return null
}

export function budgetFault(b: Budget): string | null {
  if (!within(b.microUsd, MAX_BUDGET_MICRO_USD) || !within(b.perAgentMicroUsd, MAX_BUDGET_MICRO_USD)) return 'a dollar cap is out of range'
  if (!within(b.tokens, MAX_BUDGET_TOKENS)) return 'the token cap is out of range'
  if (!within(b.agentSeconds, MAX_BUDGET_SECONDS)) return 'the hours cap is out of range'
  return null
}

/** A hold's `until` is also cut to MAX_HOLD_MS past the entry's time where it is folded (rate-limit-holds.ts). */
export function rateLimitFault(r: RateLimit): string | null {
  if (!/^[0-9a-f]{16,64}$/.test(r.provider)) return 'provider is not a hash'
  if (r.kind !== 'transient' && r.kind !== 'quota') return `kind "${r.kind}" is not transient or quota`
  if (!Number.isSafeInteger(r.until)) return 'until is not a time'
  if (r.message.length > MAX_TEXT) return 'message is too long'
  return null
}
