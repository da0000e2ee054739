// What one run (or one ACP turn) of a harness spent, as its CLI reported it.
// Input is split the way providers bill it: uncached input, input read from
// the prompt cache, input written to it; `inputTotal` counts all three.

export interface ModelUsage {
  /** the model as the CLI named it; '' when it named none */
  model: string
  /** input tokens neither read from nor written to the prompt cache */
  inputTokens: number
  cacheReadTokens: number
  cacheWriteTokens: number
  outputTokens: number
  /** dollars as the CLI reported them; null when it reported none (a price table then estimates them) */
  usd: number | null
}

/** Everything a run spent, one row per model it used. */
export type RunUsage = ModelUsage[]

export function emptyUsage(model = ''): ModelUsage {
  return { model, inputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 0, usd: null }
}

/** Input tokens of every kind: uncached, cache reads and cache writes. */
export function inputTotal(u: ModelUsage): number {
  return u.inputTokens + u.cacheReadTokens + u.cacheWriteTokens
}

export function isEmptyUsage(u: ModelUsage): boolean {
  return inputTotal(u) === 0 && u.outputTokens === 0 && (u.usd ?? 0) === 0
}

/** Rows of the same model added together, rows that spent nothing left out. */
export function mergeByModel(rows: readonly ModelUsage[]): RunUsage {
  const byModel = new Map<string, ModelUsage>()
  for (const r of rows) {
    const seen = byModel.get(r.model)
    if (seen == null) {
      byModel.set(r.model, { ...r })
      continue
    }
    seen.inputTokens += r.inputTokens
    seen.cacheReadTokens += r.cacheReadTokens
    seen.cacheWriteTokens += r.cacheWriteTokens
    seen.outputTokens += r.outputTokens
    seen.usd = seen.usd == null && r.usd == null ? null : (seen.usd ?? 0) + (r.usd ?? 0)
  }
  return [...byModel.values()].filter(r => !isEmptyUsage(r))
}

/** A count from untrusted JSON: a finite non-negative number, else 0. */
export function count(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.round(v) : 0
}

/** Dollars from untrusted JSON: a finite non-negative number, else null. */
export function dollars(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null
}

/** The lines of `text` that parse as JSON objects (stream-json output mixed with other lines). */
export function jsonLines(text: string): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = []
  for (const raw of text.split('\n')) {
    const line = raw.trim()
    if (!line.startsWith('{')) continue
    try {
      const v = JSON.parse(line) as unknown
      if (v != null && typeof v === 'object' && !Array.isArray(v)) out.push(v as Record<string, unknown>)
    } catch {
      /* a line that only looks like JSON */
    }
  }
  return out
}

export function record(v: unknown): Record<string, unknown> | undefined {
  return v != null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined
}
