// aider prints, after each message, "Tokens: 2.3k sent, 1.1k cache write,
// 12k cache hit, 456 received. Cost: $0.01 message, $0.02 session." (counts
// under 1000 exact, under 10k to one decimal, above to the thousand), and
// names its model at start ("Main model: <name> with ... edit format"). Its
// limits come through litellm: "litellm.RateLimitError: ... 429 ...", with
// "Retrying in 0.2 seconds..." after.
import { lastRateLimit } from './rate-limit.js'
import { abbreviated } from './copilot.js'
import { mergeByModel, type ModelUsage } from './run-usage.js'
import type { RunOutput, RunReport } from './run-report.js'

export function aiderRun(out: RunOutput): RunReport {
  const model = /^Main model: (\S+)/m.exec(out.text)?.[1] ?? ''
  const rows: ModelUsage[] = []
  for (const m of out.text.matchAll(/^Tokens: (.+?) sent(.*?), ([\d.,]+[kmb]?) received\.(?: Cost: \$([\d.]+) message)?/gim)) {
    const part = (name: string): number => abbreviated(new RegExp(`([\\d.,]+[kmb]?) ${name}`, 'i').exec(m[2])?.[1] ?? '0')
    const cacheWrite = part('cache write')
    const cacheHit = part('cache hit')
    const sent = abbreviated(m[1])
    rows.push({
      model,
      inputTokens: Math.max(0, sent - cacheWrite - cacheHit),
      cacheReadTokens: cacheHit,
      cacheWriteTokens: cacheWrite,
      outputTokens: abbreviated(m[3]),
      usd: m[4] != null ? Number(m[4]) : null
    })
  }
  const errors = out.text.split('\n').filter(l => /RateLimitError|APIError|ServiceUnavailable|overloaded|quota/i.test(l))
  return { usage: mergeByModel(rows), limit: lastRateLimit(errors, out.now) }
}
