// A `cmd:` harness is the operator's own program, which no reader knows: it
// may say what a run spent in lines of its own output,
//
//   agency-usage {"model":"m","input_tokens":100,"cache_read_tokens":0,"cache_write_tokens":0,"output_tokens":20,"usd":0.0012}
//
// each a part of the run's spend (the lines add up; counts that are missing,
// negative or not numbers are 0; without `usd` a price table estimates the
// dollars). The tests use it to make a program spend known tokens per run. Only
// `cmd:` harnesses are read so: a real CLI's output (where an agent's tool
// output lands) is never taken for a report. Limits are read in its last lines.
import { lastRateLimit } from './rate-limit.js'
import { count, dollars, mergeByModel, record, type ModelUsage } from './run-usage.js'
import type { RunOutput, RunReport } from './run-report.js'

export const CMD_USAGE_PREFIX = 'agency-usage '

export function cmdRun(out: RunOutput): RunReport {
  const rows: ModelUsage[] = []
  const lines = out.text.split('\n')
  for (const line of lines) {
    if (!line.startsWith(CMD_USAGE_PREFIX)) continue
    let v: Record<string, unknown> | undefined
    try {
      v = record(JSON.parse(line.slice(CMD_USAGE_PREFIX.length)))
    } catch {
      continue
    }
    if (v == null) continue
    rows.push({
      model: typeof v.model === 'string' ? v.model.slice(0, 200) : '',
      inputTokens: count(v.input_tokens),
      cacheReadTokens: count(v.cache_read_tokens),
      cacheWriteTokens: count(v.cache_write_tokens),
      outputTokens: count(v.output_tokens),
      usd: dollars(v.usd)
    })
  }
  return { usage: mergeByModel(rows), limit: lastRateLimit(lines.slice(-5), out.now) }
}
