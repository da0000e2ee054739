// The small rules under the dashboard: paging parameters, thinning a plot,
// clipping peer text, escaping JSON, reading Host headers and session cookies.
import { describe, expect, it } from 'vitest'
import { clip, pageOf, parsePage, thin } from '../../src/ui/paging.js'
import { safeJson } from '../../src/ui/ui-server.js'
import { hostAllowed, hostName, parseCookies, sessionValue } from '../../src/ui/ui-access.js'
import { InvalidArgumentError } from '../../src/core/errors.js'

const params = (s: string): URLSearchParams => new URLSearchParams(s)

describe('paging', () => {
  it('reads offset and limit, with defaults and bounds', () => {
    expect(parsePage(params(''))).toEqual({ offset: 0, limit: 50 })
    expect(parsePage(params('offset=100&limit=25'))).toEqual({ offset: 100, limit: 25 })
    expect(parsePage(params('limit=500'), { limit: 100, max: 500 })).toEqual({ offset: 0, limit: 500 })
    for (const bad of ['limit=0', 'limit=201', 'offset=-3', 'offset=1e3', 'limit=abc', 'offset=99999999999999999999']) {
      expect(() => parsePage(params(bad)), bad).toThrow(InvalidArgumentError)
    }
  })

  it('cuts one page from a list and says how long the list is', () => {
    const list = Array.from({ length: 1024 }, (_, i) => i)
    expect(pageOf(list, { offset: 1000, limit: 50 })).toEqual({ items: list.slice(1000), total: 1024, offset: 1000, limit: 50 })
    expect(pageOf(list, { offset: 5000, limit: 50 }).items).toEqual([])
  })

  it('thins a long series to evenly spread points, keeping the first and the last', () => {
    const series = Array.from({ length: 100_000 }, (_, i) => i)
    const t = thin(series, 2000)
    expect(t.length).toBe(2000)
    expect(t[0]).toBe(0)
    expect(t.at(-1)).toBe(99_999)
    expect(t).toEqual([...t].sort((a, b) => a - b))
    expect(thin([1, 2, 3], 2000)).toEqual([1, 2, 3])
  })

  it('clips long peer text', () => {
    expect(clip('short', 10)).toBe('short')
    expect(clip('x'.repeat(20), 10)).toBe(`${'x'.repeat(9)}…`)
  })
})

describe('escaping', () => {
  it('writes JSON in which no markup survives, and which parses back to the same text', () => {
    const text = '</script><script>alert(1)</script> & <img src=x onerror=alert(2)> \u2028'
    const json = safeJson({ text })
    expect(json).not.toMatch(/[<>&\u2028]/)
    expect(JSON.parse(json)).toEqual({ text })
  })
})

describe('access', () => {
  it('reads the host name of a Host header', () => {
    expect(hostName('127.0.0.1:7464')).toBe('127.0.0.1')
    expect(hostName('[::1]:80')).toBe('::1')
    expect(hostName('LocalHost')).toBe('localhost')
    expect(hostName(undefined)).toBe('')
  })

  it('on a loopback bind answers loopback names only; beyond loopback (with a token) any', () => {
    expect(hostAllowed('localhost:1', true)).toBe(true)
    expect(hostAllowed('127.0.0.2:1', true)).toBe(true)
    expect(hostAllowed('[::1]:1', true)).toBe(true)
    expect(hostAllowed('evil.example:1', true)).toBe(false)
    expect(hostAllowed('127.0.0.1.evil.example', true)).toBe(false)
    expect(hostAllowed(undefined, true)).toBe(false)
    expect(hostAllowed('dash.example', false)).toBe(true)
  })

  it('keeps the token out of the session cookie', () => {
    const token = 'secret-token-secret-token'
    expect(sessionValue(token)).not.toContain(token)
    expect(sessionValue(token)).toBe(sessionValue(token))
    expect(sessionValue(token)).not.toBe(sessionValue(`${token}x`))
    expect(parseCookies('a=1; agency_ui=xyz ; b')).toEqual(
      new Map([
        ['a', '1'],
        ['agency_ui', 'xyz']
      ])
    )
  })
})
