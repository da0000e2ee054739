// Gemini CLI with --output-format stream-json: the run ends with one
// {"type":"result"} line whose `stats` hold the run's tokens, in total and per
// model (`models`: input_tokens with the cached ones included, `cached`, and
// `input` = the uncached rest; output_tokens). No dollars. A failed run's
// result has status "error" and error {type, message}; the API's limit is a
// 429 RESOURCE_EXHAUSTED there or in an {"type":"error"} event, its retryDelay
// in the message when Google sent one.
import { lastRateLimit } from './rate-limit.js'
import { count, jsonLines, mergeByModel, record, type ModelUsage } from './run-usage.js'
import type { RunOutput, RunReport } from './run-report.js'

export function geminiRun(out: RunOutput): RunReport {
  const rows: ModelUsage[] = []
  const errors: string[] = []
  let model = ''
  for (const line of jsonLines(out.text)) {
    if (line.type === 'init' && typeof line.model === 'string') model = line.model
    if (line.type === 'error' && typeof line.message === 'string') errors.push(line.message)
    if (line.type !== 'result') continue
    const e = record(line.error)
    if (line.status === 'error' && typeof e?.message === 'string') errors.push(e.message)
    const stats = record(line.stats) ?? {}
    const models = Object.entries(record(stats.models) ?? {})
    const entries: Array<[string, Record<string, unknown>]> =
      models.length > 0 ? models.map(([k, v]) => [k, record(v) ?? {}]) : [[model, stats]]
    for (const [name, s] of entries) {
      const cached = count(s.cached)
      rows.push({
        model: name,
        inputTokens: Math.max(0, count(s.input_tokens) - cached),
        cacheReadTokens: cached,
        cacheWriteTokens: 0,
        outputTokens: count(s.output_tokens),
        usd: null
      })
    }
  }
  return { usage: mergeByModel(rows), limit: lastRateLimit(errors, out.now) }
}
