// GitHub Copilot CLI. With --usage-output-file <file> (agentd's adapter passes
// it) the run leaves a JSON report whose modelMetrics give each model's
// inputTokens, outputTokens, cacheReadTokens and cacheWriteTokens exactly; its
// dollars are premium requests, not a price, so they are estimated. Without
// the file, the text summary on stderr ("Tokens    ↑ 12.3k • ↓ 456") is read,
// rounded as Copilot rounds it. A limit shows as an error line ("Error: ...
// 429 ...", "rate limit", "quota").
import { lastRateLimit } from './rate-limit.js'
import { count, mergeByModel, record, type ModelUsage } from './run-usage.js'
import type { RunOutput, RunReport } from './run-report.js'

/** The report file name agentd asks Copilot for. */
export const COPILOT_USAGE_FILE = 'copilot-usage.json'
/** The directory under the harness dir it goes in: Copilot's only place to write there (in a box, the rest is read-only). */
export const COPILOT_USAGE_DIR = 'copilot-usage'

export function copilotRun(out: RunOutput): RunReport {
  const errors = out.text
    .split('\n')
    .map(l => l.trim())
    .filter(l => /^(error|✗|x )/i.test(l) || /"type":"(session\.)?error"/.test(l))
  const limit = lastRateLimit(errors, out.now)
  for (const [path, text] of out.files ?? []) {
    if (!path.endsWith(COPILOT_USAGE_FILE)) continue
    const rows = reportRows(text)
    if (rows != null) return { usage: mergeByModel(rows), limit }
  }
  return { usage: mergeByModel(summaryRows(out.text)), limit }
}

function reportRows(text: string): ModelUsage[] | null {
  let report: Record<string, unknown> | undefined
  try {
    report = record(JSON.parse(text))
  } catch {
    return null
  }
  const metrics = record(report?.modelMetrics)
  if (metrics == null) return null
  return Object.entries(metrics).map(([model, v]) => {
    const u = record(record(v)?.usage) ?? {}
    return {
      model,
      inputTokens: count(u.inputTokens),
      cacheReadTokens: count(u.cacheReadTokens),
      cacheWriteTokens: count(u.cacheWriteTokens),
      outputTokens: count(u.outputTokens),
      usd: null
    }
  })
}

function summaryRows(text: string): ModelUsage[] {
  const m = /^\s*Tokens\s+↑\s*([\d.,]+\s*[kmb]?)\s*•\s*↓\s*([\d.,]+\s*[kmb]?)/im.exec(text)
  if (m == null) return []
  return [
    { model: '', inputTokens: abbreviated(m[1]), cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: abbreviated(m[2]), usd: null }
  ]
}

/** "12.3k" -> 12300 */
export function abbreviated(text: string): number {
  const m = /^([\d.,]+)\s*([kmb]?)$/i.exec(text.trim())
  if (m == null) return 0
  const n = Number(m[1].replace(/,/g, ''))
  const scale = { '': 1, k: 1e3, m: 1e6, b: 1e9 }[m[2].toLowerCase() as '' | 'k' | 'm' | 'b']
  return Number.isFinite(n) ? Math.round(n * scale) : 0
}
