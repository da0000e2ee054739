// Bearer-token check for the local API. A daemon bound beyond loopback must
// have a token; on loopback or a unix socket (mode 0600) it is optional.
import { timingSafeEqual } from 'node:crypto'
import { status } from '@grpc/grpc-js'
import type { AgencyServer } from '../gen/agency/v1/api.js'
import { guardHandlers, type Refusal } from './grpc-errors.js'

function tokenOk(metadata: { get: (k: string) => unknown[] }, token: string): boolean {
  const value = metadata.get('authorization')[0]
  if (typeof value !== 'string') return false
  const given = Buffer.from(value.replace(/^Bearer\s+/i, ''))
  const want = Buffer.from(token)
  return given.length === want.length && timingSafeEqual(given, want)
}

const DENIED: Refusal = {
  code: status.UNAUTHENTICATED,
  details: "missing or wrong API token: set AGENCY_TOKEN (or --token-file) to the daemon's token"
}

/** Wraps every handler so that a call without the token is refused before it runs. */
export function requireToken(handlers: AgencyServer, token: string): AgencyServer {
  return guardHandlers(handlers, (_method, call) => (tokenOk(call.metadata, token) ? undefined : DENIED))
}
