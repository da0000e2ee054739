// Dollars for tokens, where a CLI reports tokens but no price. A table of
// dollars per million tokens by model; a model takes the row of the longest
// key its name starts with, else the "*" row. The default table is a
// documented estimate (docs/spend.md); `--prices FILE` replaces it:
//
//   { "claude-sonnet-4": { "input": 3, "output": 15, "cache_read": 0.3, "cache_write": 3.75 },
//     "*": { "input": 3, "output": 15 } }
//
// Dollars computed here are marked estimated wherever they are shown.
import { InvalidArgumentError } from '../../core/errors.js'
import type { ModelUsage } from './run-usage.js'

/** Dollars per million tokens. */
export interface PriceRow {
  input: number
  output: number
  cacheRead: number
  cacheWrite: number
}

export type PriceTable = ReadonlyMap<string, PriceRow>

/** A price file that does not parse or holds something that is not a price. */
export class PriceFileError extends InvalidArgumentError {
  constructor(message: string) {
    super(`price file: ${message}`)
    this.name = 'PriceFileError'
  }
}

const row = (input: number, output: number, cacheRead = input / 10, cacheWrite = input * 1.25): PriceRow => ({
  input,
  output,
  cacheRead,
  cacheWrite
})

/** List prices per million tokens, as the providers published them; an estimate for anything unlisted. */
export const DEFAULT_PRICES: PriceTable = new Map<string, PriceRow>([
  ['claude-opus-4', row(15, 75)],
  ['claude-opus-4-5', row(5, 25)],
  ['claude-opus-4-6', row(5, 25)],
  ['claude-opus-4-7', row(5, 25)],
  ['claude-opus-4-8', row(5, 25)],
  ['claude-sonnet-4', row(3, 15)],
  ['claude-haiku-4', row(1, 5)],
  ['gpt-5', row(1.25, 10, 0.125, 0)],
  ['gpt-5-mini', row(0.25, 2, 0.025, 0)],
  ['gpt-5-nano', row(0.05, 0.4, 0.005, 0)],
  ['gpt-4.1', row(2, 8, 0.5, 0)],
  ['o3', row(2, 8, 0.5, 0)],
  ['gemini-2.5-pro', row(1.25, 10, 0.31, 0)],
  ['gemini-2.5-flash', row(0.3, 2.5, 0.075, 0)],
  ['gemini-3-pro', row(2, 12, 0.2, 0)],
  ['*', row(3, 15)]
])

/** The row for `model`: the longest key it starts with (case-insensitive, a "[1m]"-style suffix ignored), else "*". */
export function priceOf(table: PriceTable, model: string): PriceRow | undefined {
  const name = model
    .toLowerCase()
    .replace(/\[.*\]$/, '')
    .replace(/^.*\//, '')
  let best: string | undefined
  for (const key of table.keys()) {
    if (key !== '*' && name.startsWith(key.toLowerCase()) && (best == null || key.length > best.length)) best = key
  }
  return table.get(best ?? '*')
}

/** A row's dollars at the table's prices; 0 when the table has no row for it. */
export function estimatedUsd(table: PriceTable, u: ModelUsage): number {
  const p = priceOf(table, u.model)
  if (p == null) return 0
  return (u.inputTokens * p.input + u.outputTokens * p.output + u.cacheReadTokens * p.cacheRead + u.cacheWriteTokens * p.cacheWrite) / 1e6
}

/** Each row's dollars, as reported or else estimated; `estimated` when any row's were. */
export function priced(table: PriceTable, rows: readonly ModelUsage[]): { usd: number; estimated: boolean } {
  let usd = 0
  let estimated = false
  for (const r of rows) {
    if (r.usd != null) {
      usd += r.usd
      continue
    }
    usd += estimatedUsd(table, r)
    estimated = true
  }
  return { usd, estimated }
}

const FIELDS: ReadonlyArray<[keyof PriceRow, string]> = [
  ['input', 'input'],
  ['output', 'output'],
  ['cacheRead', 'cache_read'],
  ['cacheWrite', 'cache_write']
]

/** Parses a price file's text (JSON, see the top of this file). Throws PriceFileError naming what is wrong. */
export function parsePrices(text: string): PriceTable {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (err) {
    throw new PriceFileError(`not JSON: ${(err as Error).message}`)
  }
  if (value == null || typeof value !== 'object' || Array.isArray(value))
    throw new PriceFileError('expected an object of model name -> { input, output, cache_read, cache_write } (dollars per million tokens)')
  const table = new Map<string, PriceRow>()
  for (const [model, v] of Object.entries(value)) {
    if (v == null || typeof v !== 'object' || Array.isArray(v))
      throw new PriceFileError(`"${model}": expected { input, output, cache_read, cache_write }`)
    const fields = v as Record<string, unknown>
    for (const key of Object.keys(fields)) {
      if (!FIELDS.some(([, name]) => name === key))
        throw new PriceFileError(`"${model}": unknown field "${key}" (input, output, cache_read, cache_write)`)
    }
    const price = (name: string, fallback?: number): number => {
      const n = fields[name] ?? fallback
      if (typeof n !== 'number' || !Number.isFinite(n) || n < 0 || n > 1e6)
        throw new PriceFileError(
          `"${model}".${name}: expected dollars per million tokens (a number from 0), got ${JSON.stringify(fields[name])}`
        )
      return n
    }
    const input = price('input')
    table.set(model, {
      input,
      output: price('output'),
      cacheRead: price('cache_read', input / 10),
      cacheWrite: price('cache_write', input * 1.25)
    })
  }
  if (table.size === 0) throw new PriceFileError('no prices in it')
  return table
}
