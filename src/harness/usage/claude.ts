// Claude Code in print mode with --output-format stream-json: each run ends
// with one {"type":"result"} line carrying the run's usage summed over its
// turns, its dollars (total_cost_usd) and per model (modelUsage, with costUSD).
// A run that ended on an API error says so in that line: is_error, the HTTP
// status (api_error_status: 429, 529) and the message in `result` ("API Error:
// Request rejected (429) ...", "API Error: 529 Overloaded ...", or a plan's
// "You've hit your session limit · resets 3pm"). Claude Code prints no
// Retry-After: the hold then takes the default length.
import { rateLimitInLine, type RateLimitSignal } from './rate-limit.js'
import { count, dollars, jsonLines, mergeByModel, record, type ModelUsage } from './run-usage.js'
import type { RunOutput, RunReport } from './run-report.js'

export function claudeRun(out: RunOutput): RunReport {
  const rows: ModelUsage[] = []
  let limit: RateLimitSignal | null = null
  let model = ''
  for (const line of jsonLines(out.text)) {
    if (line.type === 'system' && line.subtype === 'init' && typeof line.model === 'string') model = line.model
    if (line.type !== 'result') continue
    rows.push(...resultRows(line, model))
    limit = resultLimit(line, out.now) ?? limit
  }
  return { usage: mergeByModel(rows), limit }
}

function resultRows(line: Record<string, unknown>, model: string): ModelUsage[] {
  const byModel = record(line.modelUsage)
  const models = byModel != null ? Object.entries(byModel) : []
  if (models.length > 0) {
    return models.map(([name, v]) => {
      const m = record(v) ?? {}
      return {
        model: name,
        inputTokens: count(m.inputTokens),
        cacheReadTokens: count(m.cacheReadInputTokens),
        cacheWriteTokens: count(m.cacheCreationInputTokens),
        outputTokens: count(m.outputTokens),
        usd: dollars(m.costUSD)
      }
    })
  }
  const u = record(line.usage)
  if (u == null) return []
  return [
    {
      model,
      inputTokens: count(u.input_tokens),
      cacheReadTokens: count(u.cache_read_input_tokens),
      cacheWriteTokens: count(u.cache_creation_input_tokens),
      outputTokens: count(u.output_tokens),
      usd: dollars(line.total_cost_usd)
    }
  ]
}

function resultLimit(line: Record<string, unknown>, now: number): RateLimitSignal | null {
  if (line.is_error !== true) return null
  const text = typeof line.result === 'string' ? line.result : ''
  const status = typeof line.api_error_status === 'number' ? line.api_error_status : null
  const signal = rateLimitInLine(text, now)
  if (signal != null) return signal
  if (status === 429 || status === 529) return { kind: 'transient', until: null, message: text.slice(0, 300) || `HTTP ${status}` }
  return null
}
