// A sum of usage: tokens by kind, dollars in micro-dollars (integers, so any
// order of adding gives the same total on every peer), runs and run time.
import type { ModelSpend } from '../../gen/agency/v1/log.js'

export interface SpendTotals {
  /** uncached input */
  inputTokens: number
  cacheReadTokens: number
  cacheWriteTokens: number
  outputTokens: number
  microUsd: number
  /** some of the dollars come from a price table */
  estimated: boolean
  runs: number
  wallMs: number
}

export function zeroTotals(): SpendTotals {
  return { inputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 0, microUsd: 0, estimated: false, runs: 0, wallMs: 0 }
}

/** Every input token, cached or not, and every output token: what a token cap counts. */
export function allTokens(t: SpendTotals): number {
  return t.inputTokens + t.cacheReadTokens + t.cacheWriteTokens + t.outputTokens
}

export function allInput(t: SpendTotals): number {
  return t.inputTokens + t.cacheReadTokens + t.cacheWriteTokens
}

/** Adds one model's share of a run into `into`. */
export function addModel(into: SpendTotals, m: ModelSpend): void {
  into.inputTokens += m.inputTokens
  into.cacheReadTokens += m.cacheReadTokens
  into.cacheWriteTokens += m.cacheWriteTokens
  into.outputTokens += m.outputTokens
  into.microUsd += m.microUsd
  if (m.estimated) into.estimated = true
}

export function addTotals(into: SpendTotals, t: SpendTotals): void {
  into.inputTokens += t.inputTokens
  into.cacheReadTokens += t.cacheReadTokens
  into.cacheWriteTokens += t.cacheWriteTokens
  into.outputTokens += t.outputTokens
  into.microUsd += t.microUsd
  into.estimated ||= t.estimated
  into.runs += t.runs
  into.wallMs += t.wallMs
}

export function copyTotals(t: SpendTotals): SpendTotals {
  return { ...t }
}
