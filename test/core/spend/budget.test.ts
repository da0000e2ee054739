import { describe, expect, it } from 'vitest'
import {
  changedBudget,
  checkBudget,
  NO_BUDGET,
  resumeAt,
  SwarmWholeness,
  zeroTotals,
  type SpendTotals,
  type SpendView
} from '../../../src/core/spend/index.js'

const spent = (microUsd: number, tokens = 0, wallMs = 0): SpendTotals => ({
  ...zeroTotals(),
  microUsd,
  inputTokens: tokens,
  wallMs,
  runs: 1
})
const view = (o: Partial<SpendView>): SpendView => ({
  total: zeroTotals(),
  own: zeroTotals(),
  largestRun: { microUsd: 0, tokens: 0, wallMs: 0 },
  runsInFlight: 1,
  ownInFlight: 1,
  ...o
})

describe('budget changes', () => {
  it('set what is given, keep the rest, 0 removes a cap', () => {
    const b = changedBudget(NO_BUDGET, { usd: 12.5, tokens: 4000 })
    expect(b).toEqual({ microUsd: 12_500_000, tokens: 4000, agentSeconds: 0, perAgentMicroUsd: 0 })
    expect(changedBudget(b, { hours: 1.5, usd: 0 })).toEqual({ microUsd: 0, tokens: 4000, agentSeconds: 5400, perAgentMicroUsd: 0 })
  })
  it('a negative, non-numeric or absurd value is a clear error', () => {
    expect(() => changedBudget(NO_BUDGET, { usd: -1 })).toThrow(/budget usd: must not be negative/)
    expect(() => changedBudget(NO_BUDGET, { tokens: Number.NaN })).toThrow(/budget tokens: expected a number/)
    expect(() => changedBudget(NO_BUDGET, { perAgentUsd: 'ten' as unknown as number })).toThrow(/expected a number/)
    expect(() => changedBudget(NO_BUDGET, { hours: 1e12 })).toThrow(/over the largest cap/)
  })
})

describe('the budget check: recorded + in flight >= cap stops new runs', () => {
  it('no cap, never reached', () => {
    expect(checkBudget(NO_BUDGET, view({ total: spent(1e12) })).reached).toBe(false)
  })
  it('counts each run in flight at the largest run recorded', () => {
    const caps = { ...NO_BUDGET, microUsd: 10_000_000 }
    const largestRun = { microUsd: 2_000_000, tokens: 0, wallMs: 0 }
    expect(checkBudget(caps, view({ total: spent(5_000_000), largestRun, runsInFlight: 2 })).reached).toBe(false) // 5 + 4 < 10
    const v = checkBudget(caps, view({ total: spent(5_000_000), largestRun, runsInFlight: 3 })) // 5 + 6 >= 10
    expect(v.reached).toBe(true)
    expect(v.inFlightMicroUsd).toBe(6_000_000)
    expect(v.reasons[0]).toMatch(/^dollars: \$5\.00 spent \+ \$6\.00 in flight of \$10\.00$/)
  })
  it('tokens count input of every kind and output; hours are run time summed', () => {
    expect(
      checkBudget(
        { ...NO_BUDGET, tokens: 100 },
        view({ total: { ...zeroTotals(), inputTokens: 40, cacheReadTokens: 30, outputTokens: 30 } })
      ).reached
    ).toBe(true)
    expect(checkBudget({ ...NO_BUDGET, agentSeconds: 3600 }, view({ total: spent(0, 0, 3_599_000) })).reached).toBe(false)
    expect(checkBudget({ ...NO_BUDGET, agentSeconds: 3600 }, view({ total: spent(0, 0, 3_600_000) })).reasons).toEqual([
      'agent-hours: 1.00 h spent of 1.00 h'
    ])
  })
  it('the per-agent cap holds this agent only', () => {
    const caps = { ...NO_BUDGET, perAgentMicroUsd: 1_000_000 }
    expect(checkBudget(caps, view({ total: spent(9e9), own: spent(999_999) })).reached).toBe(false)
    expect(checkBudget(caps, view({ own: spent(1_000_000) })).reasons).toEqual(["this agent's dollars: $1.00 spent of $1.00"])
  })
  it('while the swarm is split, an agent spends only its share of what was left', () => {
    const caps = { ...NO_BUDGET, microUsd: 100 }
    const w = new SwarmWholeness()
    const members = new Set(['a', 'b', 'c', 'd'])
    expect(w.observe(members, members, spent(60), spent(10))).toBeUndefined()
    const share = w.observe(members, new Set(['a', 'b']), spent(70), spent(15))
    expect(share).toEqual({ totalAtWhole: spent(60), ownAtWhole: spent(10), members: 4 })
    // a's share: 10 + (100 - 60) / 4 = 20
    expect(checkBudget(caps, view({ total: spent(70), own: spent(19), share })).reached).toBe(false)
    expect(checkBudget(caps, view({ total: spent(70), own: spent(20), share })).reasons[0]).toMatch(/share while the swarm is split/)
    // whole again: the swarm-wide rule alone
    expect(w.observe(members, members, spent(80), spent(20))).toBeUndefined()
  })
})

describe('resuming after a hold', () => {
  it('each agent draws its own start within the spread, the same on every daemon', () => {
    const starts = ['a', 'b', 'c', 'd', 'e', 'f'].map(a => resumeAt(10_000, a, 5000))
    for (const s of starts) {
      expect(s).toBeGreaterThanOrEqual(10_000)
      expect(s).toBeLessThan(15_000)
    }
    expect(new Set(starts).size).toBeGreaterThan(1)
    expect(resumeAt(10_000, 'a', 5000)).toBe(starts[0])
    expect(resumeAt(10_000, 'a', 0)).toBe(10_000)
  })
})
