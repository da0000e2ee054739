// Who may read the dashboard. The rules are the gRPC API's: on loopback the
// token is optional, beyond loopback it is required; when the daemon has a
// token, every request must carry it. A browser cannot send a header on
// navigation, so `/?token=...` trades the token for a cookie (HttpOnly,
// SameSite=Strict) holding a keyed hash of it, never the token itself, and
// the page is then loaded without the token in its address.
//
// A dashboard on loopback without a token is open to any local program, so it
// also refuses requests whose Host header names anything but a loopback
// address: a web page elsewhere cannot read it through DNS rebinding.
import { createHmac, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import { isLoopbackHost } from '../addresses.js'

export const SESSION_COOKIE = 'agency_ui'

/** The cookie value that stands for the token: a keyed hash, so the cookie is not the API token. */
export function sessionValue(token: string): string {
  return createHmac('sha256', token).update('agency/ui-session/v1').digest('base64url')
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

export function parseCookies(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>()
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=')
    if (eq <= 0) continue
    out.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim())
  }
  return out
}

/** True when the request carries the token (bearer header) or the session cookie made from it. */
export function carriesToken(req: IncomingMessage, token: string): boolean {
  const auth = req.headers.authorization
  if (typeof auth === 'string' && /^Bearer\s+/i.test(auth) && sameText(auth.replace(/^Bearer\s+/i, ''), token)) return true
  const cookie = parseCookies(req.headers.cookie).get(SESSION_COOKIE)
  return cookie != null && sameText(cookie, sessionValue(token))
}

/** The host name of a Host header ('[::1]:7400' -> '::1', 'localhost:80' -> 'localhost'). */
export function hostName(header: string | undefined): string {
  const h = (header ?? '').trim().toLowerCase()
  const bracket = /^\[([^\]]+)\](?::\d+)?$/.exec(h)
  if (bracket != null) return bracket[1]
  return h.replace(/:\d+$/, '')
}

/** On a loopback bind, only requests addressed to a loopback name are answered. */
export function hostAllowed(header: string | undefined, boundLoopback: boolean): boolean {
  if (!boundLoopback) return true
  return isLoopbackHost(hostName(header))
}
