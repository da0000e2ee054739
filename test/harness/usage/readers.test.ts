// The usage readers against what the real CLIs printed (samples/, captured from
// the installed CLIs run against the scripted model endpoints in
// test/real-agents/models, or ones answering 429 / 529 / a quota error).
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runReader, DEFAULT_HOLD_MS, rateLimitInLine } from '../../../src/harness/usage/index.js'
import { acpSessionCostUsd, acpTurnUsage } from '../../../src/harness/usage/acp.js'
import { untilIn } from '../../../src/harness/usage/rate-limit.js'

const sample = (name: string): string => readFileSync(join(import.meta.dirname, 'samples', name), 'utf8')
const NOW = Date.parse('2026-12-06T04:00:00Z')

describe('Claude Code stream-json', () => {
  it('reads the result line: tokens per model with cache reads and writes, and the dollars it reported', () => {
    const r = runReader('claude')({ text: sample('claude-ok.jsonl'), now: NOW })
    expect(r.usage).toEqual([
      { model: 'claude-opus-4-8[1m]', inputTokens: 100, cacheReadTokens: 50, cacheWriteTokens: 30, outputTokens: 20, usd: 0.0012125 }
    ])
    expect(r.limit).toBeNull()
  })
  it('a 429 is a transient limit with no time given (Claude Code prints no Retry-After), and spent nothing', () => {
    const r = runReader('claude')({ text: sample('claude-429.jsonl'), now: NOW })
    expect(r.usage).toEqual([])
    expect(r.limit).toMatchObject({ kind: 'transient', until: null })
    expect(r.limit?.message).toContain('Request rejected (429)')
  })
  it('a 529 overloaded is a transient limit', () => {
    expect(runReader('claude')({ text: sample('claude-529.jsonl'), now: NOW }).limit).toMatchObject({ kind: 'transient', until: null })
  })
  it("a plan's usage limit is a quota", () => {
    const line = JSON.stringify({
      type: 'result',
      subtype: 'success',
      is_error: true,
      result: "You've hit your session limit · resets 3pm (UTC)",
      usage: {}
    })
    expect(runReader('claude')({ text: line, now: NOW }).limit).toMatchObject({ kind: 'quota' })
  })
  it('two runs in one text add up', () => {
    const text = sample('claude-ok.jsonl') + sample('claude-ok.jsonl')
    expect(runReader('claude')({ text, now: NOW }).usage[0]).toMatchObject({ inputTokens: 200, outputTokens: 40, usd: 0.002425 })
  })
})

describe('Codex', () => {
  it('the human output gives one total, counted as input, and names the model', () => {
    expect(runReader('codex')({ text: sample('codex-human.txt'), now: NOW }).usage).toEqual([
      { model: 'gpt-5.5', inputTokens: 110, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 0, usd: null }
    ])
  })
  it('the session file the human output names gives input (cached apart), output and the model exactly', () => {
    // codex-rollout.jsonl: the turn_context and token_count lines of a session file Codex 0.171.0 wrote
    const files = new Map([
      [
        '/home/.codex/sessions/2026/12/08/rollout-2026-12-08T01-06-01-01a2499d-fafe-7a01-be80-8b9c134d5fa9.jsonl',
        sample('codex-rollout.jsonl')
      ]
    ])
    expect(runReader('codex')({ text: sample('codex-human.txt'), files, now: NOW }).usage).toEqual([
      { model: 'gpt-5.5', inputTokens: 100, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 10, usd: null }
    ])
    // the last token_count is the session's total; cached input is read apart
    const later = JSON.stringify({
      type: 'event_msg',
      payload: { type: 'token_count', info: { total_token_usage: { input_tokens: 900, cached_input_tokens: 600, output_tokens: 40 } } }
    })
    const more = new Map([[[...files.keys()][0], `${sample('codex-rollout.jsonl')}${later}\n`]])
    expect(runReader('codex')({ text: sample('codex-human.txt'), files: more, now: NOW }).usage).toEqual([
      { model: 'gpt-5.5', inputTokens: 300, cacheReadTokens: 600, cacheWriteTokens: 0, outputTokens: 40, usd: null }
    ])
    // another session's file is not this run's
    const other = new Map([
      [
        '/home/.codex/sessions/2026/12/08/rollout-2026-12-08T01-06-01-01a2532f-a627-7091-bc7e-0166db0415fb.jsonl',
        sample('codex-rollout.jsonl')
      ]
    ])
    expect(runReader('codex')({ text: sample('codex-human.txt'), files: other, now: NOW }).usage).toEqual([
      { model: 'gpt-5.5', inputTokens: 110, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 0, usd: null }
    ])
  })
  it('the --json stream gives input (cached apart) and output exactly', () => {
    expect(runReader('codex')({ text: sample('codex-json.jsonl'), now: NOW }).usage).toEqual([
      { model: '', inputTokens: 100, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 10, usd: null }
    ])
  })
  it('"exceeded retry limit, last status: 429" is transient; "Quota exceeded" is a quota', () => {
    expect(runReader('codex')({ text: sample('codex-429.txt'), now: NOW }).limit).toMatchObject({ kind: 'transient' })
    expect(runReader('codex')({ text: sample('codex-quota.txt'), now: NOW }).limit).toMatchObject({ kind: 'quota' })
  })
  it("a line of the agent's own output mentioning 429 is not a limit", () => {
    expect(runReader('codex')({ text: 'exec\nsed -n 429p file.ts\n', now: NOW }).limit).toBeNull()
  })
})

describe('Copilot', () => {
  it('reads the usage report file exactly, model by model', () => {
    const files = new Map([['/d/harness/copilot-usage/copilot-usage.json', sample('copilot-usage.json')]])
    expect(runReader('copilot')({ text: '', files, now: NOW }).usage).toEqual([
      { model: 'gpt-5.5', inputTokens: 100, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 10, usd: null }
    ])
  })
  it('without the file, the text summary (rounded as Copilot prints it)', () => {
    const text = 'Changes    +0 -0\nDuration   1s\nTokens     ↑ 12.3k • ↓ 456\n'
    expect(runReader('copilot')({ text, now: NOW }).usage).toEqual([
      { model: '', inputTokens: 12300, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 456, usd: null }
    ])
  })
})

describe('Gemini CLI stream-json', () => {
  it('reads the result stats per model, cached input apart', () => {
    expect(runReader('gemini')({ text: sample('gemini.jsonl'), now: NOW }).usage).toEqual([
      { model: 'stand-in', inputTokens: 12674, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 51, usd: null }
    ])
  })
  it('an error result with RESOURCE_EXHAUSTED and a retryDelay is a transient limit until then', () => {
    const line = JSON.stringify({
      type: 'result',
      status: 'error',
      error: {
        type: 'Error',
        message: '[API Error: {"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"retryDelay":"12s"}]}}]'
      },
      stats: {}
    })
    expect(runReader('gemini')({ text: line, now: NOW }).limit).toEqual(expect.objectContaining({ kind: 'transient', until: NOW + 12_000 }))
  })
})

describe('Pi', () => {
  it('reads each assistant message of the session file', () => {
    const files = new Map([['/d/harness/pi-sessions/s.jsonl', sample('pi-session.jsonl')]])
    expect(runReader('pi')({ text: '', files, now: NOW }).usage).toEqual([
      { model: 'scripted', inputTokens: 1383, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 28, usd: null }
    ])
  })
})

describe('aider', () => {
  it('reads the Tokens/Cost lines and the main model', () => {
    const text =
      'Main model: anthropic/claude-sonnet-4 with diff edit format\nTokens: 2.3k sent, 1.1k cache write, 12k cache hit, 456 received. Cost: $0.01 message, $0.02 session.\n'
    const [u] = runReader('aider')({ text, now: NOW }).usage
    expect(u).toEqual({
      model: 'anthropic/claude-sonnet-4',
      inputTokens: 0,
      cacheReadTokens: 12000,
      cacheWriteTokens: 1100,
      outputTokens: 456,
      usd: 0.01
    })
  })
})

describe('ACP', () => {
  it('a turn is its prompt response usage, its dollars the rise in the session cost', () => {
    const response = {
      stopReason: 'end_turn',
      usage: { inputTokens: 10, outputTokens: 5, cachedReadTokens: 7, cachedWriteTokens: 3, totalTokens: 25 }
    }
    expect(acpTurnUsage(response, 'm', 0.5, 0.75)).toEqual({
      model: 'm',
      inputTokens: 10,
      cacheReadTokens: 7,
      cacheWriteTokens: 3,
      outputTokens: 5,
      usd: 0.25
    })
    expect(acpTurnUsage({ stopReason: 'end_turn' }, 'm', null, null)).toBeNull()
    expect(acpSessionCostUsd({ sessionUpdate: 'usage_update', used: 1, size: 2, cost: { amount: 1.5, currency: 'USD' } })).toBe(1.5)
    expect(acpSessionCostUsd({ sessionUpdate: 'usage_update', used: 1, size: 2, cost: { amount: 1.5, currency: 'credits' } })).toBeNull()
  })
})

describe('rate limits', () => {
  it('reads Retry-After, "try again in", a reset time and a Unix reset', () => {
    expect(untilIn('HTTP 429 Retry-After: 7', NOW)).toBe(NOW + 7000)
    expect(untilIn('Please try again in 1m30s.', NOW)).toBe(NOW + 90_000)
    expect(untilIn('limit resets at 2026-12-06T05:00:00Z', NOW)).toBe(Date.parse('2026-12-06T05:00:00Z'))
    expect(untilIn('Claude AI usage limit reached|1796533200', NOW)).toBe(1796533200 * 1000)
    expect(untilIn('rate limited', NOW)).toBeNull()
  })
  it('tells a quota from a transient limit, and plain words from both', () => {
    expect(rateLimitInLine('You exceeded your current quota, please check your plan and billing details.', NOW)?.kind).toBe('quota')
    expect(rateLimitInLine('Error: 429 Too Many Requests', NOW)?.kind).toBe('transient')
    expect(rateLimitInLine('The server is overloaded', NOW)?.kind).toBe('transient')
    expect(rateLimitInLine('all tests passed', NOW)).toBeNull()
    expect(DEFAULT_HOLD_MS.quota).toBeGreaterThan(DEFAULT_HOLD_MS.transient)
  })
  it('a cmd: program still has its limits recognised in its last lines', () => {
    expect(runReader('cmd:./agent')({ text: 'working\nError: 429 Too Many Requests, Retry-After: 3\n', now: NOW }).limit).toEqual(
      expect.objectContaining({ kind: 'transient', until: NOW + 3000 })
    )
  })
})

describe("a cmd: program's own agency-usage lines", () => {
  const line = (o: object): string => `agency-usage ${JSON.stringify(o)}`
  it('add up per model; dollars left out are estimated later (null)', () => {
    const text = [
      'working',
      line({ model: 'm', input_tokens: 100, cache_read_tokens: 50, cache_write_tokens: 30, output_tokens: 20, usd: 0.5 }),
      line({ model: 'm', input_tokens: 1, output_tokens: 2, usd: 0.25 }),
      line({ model: 'n', output_tokens: 7 }),
      'done'
    ].join('\n')
    expect(runReader('cmd:./agent')({ text, now: NOW }).usage).toEqual([
      { model: 'm', inputTokens: 101, cacheReadTokens: 50, cacheWriteTokens: 30, outputTokens: 22, usd: 0.75 },
      { model: 'n', inputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 7, usd: null }
    ])
  })
  it('a line that does not parse, or negative or non-numeric counts, spend nothing', () => {
    const text = ['agency-usage {not json', line({ model: 'm', input_tokens: -5, output_tokens: 'many' }), 'agency-usage [1,2]'].join('\n')
    expect(runReader('cmd:./agent')({ text, now: NOW }).usage).toEqual([])
  })
  it("are read only from cmd: programs: the same line in a real CLI's output is not a report", () => {
    const text = line({ model: 'm', input_tokens: 100, output_tokens: 20 })
    expect(runReader('codex')({ text, now: NOW }).usage.every(u => u.inputTokens !== 100)).toBe(true)
    expect(runReader('sim')({ text, now: NOW }).usage).toEqual([])
  })
})
