// What one experiment run spent, from the swarm's own record: the usage
// entries every agent wrote (one per harness run), folded as every daemon
// folds them. Nothing is read from harness logs: a harness whose CLI reports
// no usage shows as runs with no tokens.
import { SpendBook, allInput } from '../core/spend/index.js'
import { Usage } from '../gen/agency/v1/log.js'
import type { RecordEntry } from './swarm-record.js'

export interface RunSpend {
  /** every input token: uncached, cache reads and cache writes */
  inputTokens: number
  outputTokens: number
  cacheReadTokens: number
  cacheWriteTokens: number
  usd: number
  /** some dollars come from the price table */
  estimated: boolean
  /** harness runs that reported */
  runs: number
}

/** The spend in `record`; null when it holds no usage entry. */
export function spendOfRecord(record: readonly RecordEntry[]): RunSpend | null {
  const book = new SpendBook()
  for (const e of record) {
    if (e.kind !== 'usage') continue
    book.add(e.id, e.author, Usage.fromJSON(e.body))
  }
  if (book.entries === 0) return null
  const t = book.totals()
  return {
    inputTokens: allInput(t),
    outputTokens: t.outputTokens,
    cacheReadTokens: t.cacheReadTokens,
    cacheWriteTokens: t.cacheWriteTokens,
    usd: t.microUsd / 1e6,
    estimated: t.estimated,
    runs: t.runs
  }
}

/** The sum of several runs' spend; null when none reported any. */
export function addSpend(spends: ReadonlyArray<RunSpend | null | undefined>): RunSpend | null {
  const known = spends.filter((s): s is RunSpend => s != null)
  if (known.length === 0) return null
  const sum = (f: (s: RunSpend) => number): number => known.reduce((a, s) => a + f(s), 0)
  return {
    inputTokens: sum(s => s.inputTokens),
    outputTokens: sum(s => s.outputTokens),
    cacheReadTokens: sum(s => s.cacheReadTokens),
    cacheWriteTokens: sum(s => s.cacheWriteTokens),
    usd: sum(s => s.usd),
    estimated: known.some(s => s.estimated),
    runs: sum(s => s.runs)
  }
}

/** Dollars per percentage point of pass rate; null when nothing passed or nothing was spent. */
export function usdPerPoint(usd: number, passRate: number): number | null {
  if (!(passRate > 0) || !(usd > 0)) return null
  return usd / (passRate * 100)
}
