// Pi (pi-coding-agent) in --print mode prints only the last answer; its
// session file (JSONL, under the --session-dir agentd gives it) holds every
// message, and each assistant message carries its `usage` (input, output,
// cacheRead, cacheWrite, cost.total in dollars from Pi's own model table) with
// its provider and model. A failed turn is an assistant message with
// stopReason "error" and errorMessage (the provider's "429 ... rate limit",
// "overloaded", "quota"), also printed on stderr.
import { lastRateLimit } from './rate-limit.js'
import { count, dollars, jsonLines, mergeByModel, record, type ModelUsage } from './run-usage.js'
import type { RunOutput, RunReport } from './run-report.js'

export function piRun(out: RunOutput): RunReport {
  const rows: ModelUsage[] = []
  const errors: string[] = []
  for (const text of out.files?.values() ?? []) {
    for (const line of jsonLines(text)) {
      const message = record(line.message)
      if (line.type !== 'message' || message?.role !== 'assistant') continue
      if (message.stopReason === 'error' && typeof message.errorMessage === 'string') errors.push(message.errorMessage)
      const u = record(message.usage)
      if (u == null) continue
      const cost = record(u.cost)
      const usd = dollars(cost?.total)
      rows.push({
        model: typeof message.model === 'string' ? message.model : '',
        inputTokens: count(u.input),
        cacheReadTokens: count(u.cacheRead),
        cacheWriteTokens: count(u.cacheWrite),
        outputTokens: count(u.output),
        usd: usd === 0 ? null : usd
      })
    }
  }
  errors.push(...out.text.split('\n').slice(-20))
  return { usage: mergeByModel(rows), limit: lastRateLimit(errors, out.now) }
}
