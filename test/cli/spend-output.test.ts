import { describe, expect, it } from 'vitest'
import { budgetLines, budgetNumber, usageJson } from '../../src/cli/commands/spend.js'
import { spendLine } from '../../src/api/status-digest.js'
import type { BudgetReply } from '../../src/gen/agency/v1/api.js'

const spent = {
  inputTokens: 1200,
  outputTokens: 300,
  cacheReadTokens: 1000,
  cacheWriteTokens: 0,
  usd: 0.25,
  estimated: true,
  runs: 3,
  agentSeconds: 7200
}

describe('agency usage and budget output', () => {
  it('--json names the totals in snake_case; input counts cached input', () => {
    const j = usageJson({ total: spent, by: 'agent', rows: [{ key: 'peer1', name: 'ada', totals: spent }] }) as any
    expect(j.total).toMatchObject({ input_tokens: 1200, output_tokens: 300, cache_read_tokens: 1000, usd: 0.25, estimated: true, hours: 2 })
    expect(j.rows[0]).toMatchObject({ key: 'peer1', name: 'ada', input_tokens: 1200 })
  })

  it('a budget flag that is negative or not a number is refused before anything is sent', () => {
    expect(budgetNumber('--usd', '12.5')).toBe(12.5)
    expect(budgetNumber('--usd', undefined)).toBeUndefined()
    expect(() => budgetNumber('--usd', '-1')).toThrow(/--usd: must not be negative/)
    expect(() => budgetNumber('--usd', 'ten')).toThrow(/--usd: "ten" is not a number/)
    expect(() => budgetNumber('--tokens', '')).toThrow(/not a number/)
    expect(() => budgetNumber('--tokens', '1.5', true)).toThrow(/whole number/)
  })

  it('says budget reached, and why, in budget and status', () => {
    const b: BudgetReply = {
      budget: { usd: 0, tokens: 2000, hours: 0, perAgentUsd: 0, setBy: 'p' },
      reached: true,
      reasons: ['tokens: 2500 spent of 2000'],
      spent,
      inFlightUsd: 0,
      hold: undefined
    }
    expect(budgetLines(b)).toContain('budget reached: tokens: 2500 spent of 2000. No new run starts; raise it with agency budget set')
    expect(spendLine(b)).toBe(
      'swarm 1,500 tokens, $0.25 (est.); budget reached (tokens: 2500 spent of 2000): no new run starts until it is raised'
    )
    expect(spendLine({ ...b, reached: false })).toMatch(/within budget$/)
    expect(spendLine({ ...b, budget: undefined, spent: { ...spent, runs: 0 } })).toBe('')
  })
})
