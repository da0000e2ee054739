// Codex CLI. `codex exec` as agentd runs it prints a human log whose header
// names the model ("model: gpt-5.5") and whose end is "tokens used" and the
// total on the next line ("tokens used: N" in older versions): one number, not
// split into input and output, so the whole of it is counted as input (an
// agent's turns are mostly input) and the dollars are an estimate. With
// --json, each turn ends with {"type":"turn.completed","usage":{input_tokens
// (cached included), cached_input_tokens, output_tokens}}: exact.
// Exact in either case: the session file Codex writes under
// $CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<session id>.jsonl (the
// human output names the session id), whose token_count events carry the
// session's total_token_usage, split like --json's, and whose turn_context
// names the model; when agentd finds it (run-files.ts), it is read instead.
// Its limits: "ERROR: exceeded retry limit, last status: 429 Too Many
// Requests", "ERROR: Quota exceeded. Check your plan and billing details.",
// or a plan's "You've hit your usage limit ... try again at 3:04 PM"; with
// --json a {"type":"error"} or {"type":"turn.failed"} event says the same.
import { lastRateLimit } from './rate-limit.js'
import { count, jsonLines, mergeByModel, record, type ModelUsage } from './run-usage.js'
import type { RunOutput, RunReport } from './run-report.js'

/** The session id the human output names ("session id: <uuid>"), if any. */
export function codexSessionId(text: string): string | undefined {
  return /^session id: ([0-9a-zA-Z-]{8,64})$/m.exec(text)?.[1]
}

/** A session file's usage: the last token_count's total, under the model of the last turn_context; null when it holds none. */
export function codexRolloutUsage(rollout: string, fallbackModel: string): ModelUsage | null {
  let total: Record<string, unknown> | undefined
  let model = fallbackModel
  for (const line of jsonLines(rollout)) {
    const p = record(line.payload)
    if (p == null) continue
    if (line.type === 'turn_context' && typeof p.model === 'string') model = p.model.slice(0, 200)
    if (line.type === 'event_msg' && p.type === 'token_count') total = record(record(p.info)?.total_token_usage) ?? total
  }
  if (total == null) return null
  const cached = count(total.cached_input_tokens)
  return {
    model,
    inputTokens: Math.max(0, count(total.input_tokens) - cached),
    cacheReadTokens: cached,
    cacheWriteTokens: count(total.cache_write_input_tokens),
    outputTokens: count(total.output_tokens),
    usd: null
  }
}

export function codexRun(out: RunOutput): RunReport {
  const lines = out.text.split('\n')
  const model = /^model: (\S+)$/m.exec(out.text)?.[1] ?? ''
  const rows: ModelUsage[] = []
  const errors: string[] = []
  const session = codexSessionId(out.text)
  for (const [path, content] of out.files ?? []) {
    if (session == null || !path.endsWith(`-${session}.jsonl`)) continue
    const u = codexRolloutUsage(content, model)
    if (u != null) rows.push(u)
  }
  const fromSession = rows.length > 0
  for (const line of jsonLines(out.text)) {
    if (line.type === 'turn.completed') {
      if (fromSession) continue
      const u = record(line.usage) ?? {}
      const cached = count(u.cached_input_tokens)
      rows.push({
        model,
        inputTokens: Math.max(0, count(u.input_tokens) - cached),
        cacheReadTokens: cached,
        cacheWriteTokens: count(u.cache_write_input_tokens),
        outputTokens: count(u.output_tokens),
        usd: null
      })
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
      if (/^[\d,]+$/.test(value))
        rows.push({
          model,
          inputTokens: Number(value.replace(/,/g, '')),
          cacheReadTokens: 0,
          cacheWriteTokens: 0,
          outputTokens: 0,
          usd: null
        })
    }
  }
  for (const line of lines) if (/^ERROR:/.test(line.trim())) errors.push(line.trim())
  return { usage: mergeByModel(rows), limit: lastRateLimit(errors, out.now) }
}
