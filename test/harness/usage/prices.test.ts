import { describe, expect, it } from 'vitest'
import { DEFAULT_PRICES, parsePrices, PriceFileError, priceOf, priced } from '../../../src/harness/usage/index.js'

describe('price table', () => {
  it('a model takes the longest matching key, its [1m] suffix and provider prefix ignored; else "*"', () => {
    expect(priceOf(DEFAULT_PRICES, 'claude-sonnet-4-5-20250929')?.input).toBe(3)
    expect(priceOf(DEFAULT_PRICES, 'claude-opus-4-8[1m]')?.input).toBe(5)
    expect(priceOf(DEFAULT_PRICES, 'claude-opus-4-1')?.input).toBe(15)
    expect(priceOf(DEFAULT_PRICES, 'gpt-5-mini')?.input).toBe(0.25)
    expect(priceOf(DEFAULT_PRICES, 'anthropic/claude-haiku-4-5')?.input).toBe(1)
    expect(priceOf(DEFAULT_PRICES, 'something-else')).toEqual(DEFAULT_PRICES.get('*'))
  })
  it('reported dollars are kept; missing ones estimated, and the sum says so', () => {
    const rows = [
      { model: 'claude-sonnet-4', inputTokens: 1_000_000, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 1_000_000, usd: null },
      { model: 'x', inputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: 5, usd: 0.5 }
    ]
    expect(priced(DEFAULT_PRICES, rows)).toEqual({ usd: 18.5, estimated: true })
    expect(priced(DEFAULT_PRICES, [rows[1]])).toEqual({ usd: 0.5, estimated: false })
  })
  it('parses a price file, cache prices defaulting from input', () => {
    const t = parsePrices('{"my-model": {"input": 2, "output": 8}, "*": {"input": 1, "output": 1, "cache_read": 0, "cache_write": 0}}')
    expect(t.get('my-model')).toEqual({ input: 2, output: 8, cacheRead: 0.2, cacheWrite: 2.5 })
    expect(priceOf(t, 'other')).toEqual({ input: 1, output: 1, cacheRead: 0, cacheWrite: 0 })
  })
  it('a file that does not parse, or holds no price, is a clear error', () => {
    expect(() => parsePrices('{not json')).toThrow(PriceFileError)
    expect(() => parsePrices('{not json')).toThrow(/price file: not JSON/)
    expect(() => parsePrices('[]')).toThrow(/expected an object/)
    expect(() => parsePrices('{}')).toThrow(/no prices/)
    expect(() => parsePrices('{"m": {"input": -1, "output": 1}}')).toThrow(/"m".input/)
    expect(() => parsePrices('{"m": {"input": 1, "output": "cheap"}}')).toThrow(/"m".output/)
    expect(() => parsePrices('{"m": {"input": 1, "output": 1, "cahce_read": 1}}')).toThrow(/unknown field "cahce_read"/)
  })
})
