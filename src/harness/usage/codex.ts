// Codex CLI. `codex exec` as agentd runs it prints a human log whose header
// names the model ("model: gpt-5.5") and whose end is "tokens used" and the
// total on the next line ("tokens used: N" in older versions): one number, not
// split into input and output, so the whole of it is counted as input (an
// agent's turns are mostly input) and the dollars are an estimate. With
// --json, each turn ends with {"type":"turn.completed","usage":{input_tokens
// (cached included), cached_input_tokens, output_tokens}}: exact.
// Its limits: "ERROR: exceeded retry limit, last status: 429 Too Many
// Requests", "ERROR: Quota exceeded. Check your plan and billing details.",
// or a plan's "You've hit your usage limit ... try again at 3:04 PM"; with
// --json a {"type":"error"} or {"type":"turn.failed"} event says the same.
import { lastRateLimit } from './rate-limit.js'
import { count, jsonLines, mergeByModel, record, type ModelUsage } from './run-usage.js'
import type { RunOutput, RunReport } from './run-report.js'

export function codexRun (out: RunOutput): RunReport {
  const lines = out.text.split('\n')
  const model = /^model: (\S+)$/m.exec(out.text)?.[1] ?? ''
  const rows: ModelUsage[] = []
  const errors: string[] = []
  for (const line of jsonLines(out.text)) {
    if (line.type === 'turn.completed') {
      const u = record(line.usage) ?? {}
      const cached = count(u.cached_input_tokens)
      rows.push({ model, inputTokens: Math.max(0, count(u.input_tokens) - cached), cacheReadTokens: cached, cacheWriteTokens: count(u.cache_write_input_tokens), outputTokens: count(u.output_tokens), usd: null })
    } else if (line.type === 'error' && typeof line.message === 'string') {
      errors.push(line.message)
    } else if (line.type === 'turn.failed') {
      const e = record(line.error)
      if (typeof e?.message === 'string') errors.push(e.message)
    }
  }
  if (rows.length === 0) {
    for (let i = 0; i < lines.length; i++) {
      const m = /^tokens used:?\s*([\d,]*)\s*$/i.exec(lines[i].trim())
      if (m == null) continue
      const value = m[1] !== '' ? m[1] : (lines[i + 1] ?? '').trim()
      if (/^[\d,]+$/.test(value)) rows.push({ model, inputTokens: Number(value.replace(/,/g, '')), cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 0, usd: null })
    }
  }
  for (const line of lines) if (/^ERROR:/.test(line.trim())) errors.push(line.trim())
  return { usage: mergeByModel(rows), limit: lastRateLimit(errors, out.now) }
}
