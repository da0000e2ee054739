// The dashboard's operator actions (docs/operator.md). The daemon holds no
// operator key, so the page signs each action itself with the operator's key
// (WebCrypto Ed25519, the key kept in the page's memory) and the daemon only
// carries it, as it does for `agency`. Before it may POST, the page signs in:
// it signs a one-time challenge with the key, and gets a session cookie
// naming that operator (HttpOnly, SameSite=Strict). Every POST also needs the
// session's CSRF token in a header, an Origin of this dashboard and a JSON
// body; an action must be signed by the operator signed in. What the page
// shows here is the log's: who steers, the pause, the approvals, the audit.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage } from 'node:http'
import { AgencyError, InvalidArgumentError } from '../core/errors.js'
import { verifySignature } from '../core/log/crypto.js'
import {
  OperatorOnlyError,
  openEnvelope,
  type ApprovalView,
  type OperatorActionView,
  type OperatorSource,
  type PauseView
} from '../core/operator/index.js'
import { OperatorEnvelope } from '../gen/agency/v1/log.js'
import { hostName, parseCookies } from './ui-access.js'

/** What the dashboard needs of the daemon for the operator's actions. */
export interface OperatorDesk {
  operators: () => { keys: string[]; source: OperatorSource }
  paused: () => PauseView
  approvals: () => ApprovalView[]
  audit: () => OperatorActionView[]
  /** carries a signed action (daemon/operator-service.ts) */
  submit: (envelope: OperatorEnvelope) => Promise<{ entryId: string; actionId: string; verdict: string }>
}

export const OPERATOR_COOKIE = 'agency_operator'
export const CSRF_HEADER = 'x-agency-csrf'
/** The domain of the sign-in challenge's signature: never valid as an action's or an entry's. */
export const DOMAIN_UI_LOGIN = 'agency/ui-login/v1'
const SESSION_MS = 12 * 3600_000
const CHALLENGE_MS = 120_000
const MAX_CHALLENGES = 64
/** An action's JSON body at most. */
export const MAX_ACTION_BODY_BYTES = 64 * 1024

class Refused extends AgencyError {}

export interface OperatorEndpoints {
  /** GET /api/operator: who steers, the pause, approvals, audit, and the session (with its CSRF token) */
  state: (req: IncomingMessage) => unknown
  /** GET /api/operator/challenge */
  challenge: () => { nonce: string }
  /** POST /api/operator/{login,logout,action}: the status, headers and body to answer */
  post: (path: string, req: IncomingMessage, body: string) => Promise<{ status: number; value: unknown; headers?: Record<string, string> }>
}

export function operatorEndpoints(desk: OperatorDesk, now: () => number = Date.now): OperatorEndpoints {
  // per dashboard run: a restart signs everyone out
  const secret = randomBytes(32)
  const challenges = new Map<string, number>()
  const mac = (text: string): string => createHmac('sha256', secret).update(text).digest('base64url')
  const same = (a: string, b: string): boolean => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b))

  /** The operator the request's session cookie names, if it is valid, unexpired and still an operator. */
  const signedIn = (req: IncomingMessage): { operator: string; cookie: string } | undefined => {
    const cookie = parseCookies(req.headers.cookie).get(OPERATOR_COOKIE)
    if (cookie === undefined) return undefined
    const [operator, until, tag] = cookie.split('.')
    if (operator === undefined || until === undefined || tag === undefined || !same(tag, mac(`${operator}.${until}`))) return undefined
    if (!(Number(until) > now()) || !desk.operators().keys.includes(operator)) return undefined
    return { operator, cookie }
  }
  const csrfOf = (cookie: string): string => mac(`csrf:${cookie}`)

  const checkRequest = (req: IncomingMessage): void => {
    const origin = req.headers.origin
    const host = req.headers.host
    if (typeof origin !== 'string' || host === undefined || origin !== `http://${host}`)
      throw new Refused('PERMISSION_DENIED', 'refused: the request does not come from this dashboard (Origin)')
    if (!String(req.headers['content-type'] ?? '').startsWith('application/json'))
      throw new InvalidArgumentError('send JSON (content-type application/json)')
    if (hostName(host) === '') throw new InvalidArgumentError('no Host')
  }

  const login = (body: Record<string, unknown>): { status: number; value: unknown; headers: Record<string, string> } => {
    const { operator, nonce, sig } = body
    if (typeof operator !== 'string' || typeof nonce !== 'string' || typeof sig !== 'string')
      throw new InvalidArgumentError('a sign-in needs operator, nonce and sig')
    const issued = challenges.get(nonce)
    challenges.delete(nonce)
    if (issued === undefined || now() - issued > CHALLENGE_MS)
      throw new Refused('PERMISSION_DENIED', 'the sign-in challenge is unknown or expired: sign in again')
    if (!verifySignature(DOMAIN_UI_LOGIN, operator, Buffer.from(nonce, 'utf8'), Buffer.from(sig, 'base64')))
      throw new Refused('PERMISSION_DENIED', 'the sign-in is not signed by that key')
    if (!desk.operators().keys.includes(operator)) throw new OperatorOnlyError(`the key ${operator} is not an operator of this swarm`)
    const until = now() + SESSION_MS
    const cookie = `${operator}.${until}.${mac(`${operator}.${until}`)}`
    return {
      status: 200,
      value: { operator, csrf: csrfOf(cookie) },
      headers: { 'set-cookie': `${OPERATOR_COOKIE}=${cookie}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${SESSION_MS / 1000}` }
    }
  }

  return {
    state: req => {
      const session = signedIn(req)
      const who = desk.operators()
      return {
        operators: who.keys,
        source: who.source,
        paused: desk.paused(),
        approvals: desk.approvals(),
        audit: desk.audit().slice(-200).reverse(),
        session: session === undefined ? null : { operator: session.operator, csrf: csrfOf(session.cookie) }
      }
    },
    challenge: () => {
      if (challenges.size >= MAX_CHALLENGES)
        for (const [n, t] of challenges) if (now() - t > CHALLENGE_MS || challenges.size >= MAX_CHALLENGES) challenges.delete(n)
      const nonce = randomBytes(24).toString('base64url')
      challenges.set(nonce, now())
      return { nonce }
    },
    post: async (path, req, text) => {
      checkRequest(req)
      let body: Record<string, unknown>
      try {
        body = JSON.parse(text) as Record<string, unknown>
      } catch {
        throw new InvalidArgumentError('the body is not JSON')
      }
      if (typeof body !== 'object' || body === null) throw new InvalidArgumentError('the body is not a JSON object')
      if (path === 'login') return login(body)
      const session = signedIn(req)
      if (session === undefined) throw new Refused('PERMISSION_DENIED', 'sign in as the operator first (with the operator key)')
      const csrf = req.headers[CSRF_HEADER]
      if (typeof csrf !== 'string' || !same(csrf, csrfOf(session.cookie)))
        throw new Refused('PERMISSION_DENIED', 'refused: missing or wrong CSRF token')
      if (path === 'logout')
        return {
          status: 200,
          value: { signedOut: true },
          headers: { 'set-cookie': `${OPERATOR_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0` }
        }
      if (path !== 'action') throw new Refused('NOT_FOUND', `no operator endpoint ${path.slice(0, 40)}`)
      if (typeof body.action !== 'string' || typeof body.sig !== 'string')
        throw new InvalidArgumentError('an action needs action and sig (base64)')
      const envelope = OperatorEnvelope.fromPartial({ action: Buffer.from(body.action, 'base64'), sig: Buffer.from(body.sig, 'base64') })
      const signer = openEnvelope(envelope).action?.operator
      if (signer !== session.operator) throw new Refused('PERMISSION_DENIED', 'the action is not signed by the operator signed in')
      return { status: 200, value: await desk.submit(envelope) }
    }
  }
}
