// Bearer-token check for the local API. A daemon bound beyond loopback must
// have a token; on loopback or a unix socket (mode 0600) it is optional.
import { timingSafeEqual } from 'node:crypto'
import { status, type ServerUnaryCall, type ServerWritableStream, type sendUnaryData } from '@grpc/grpc-js'
import type { AgencyServer } from '../gen/agency/v1/api.js'

function tokenOk (metadata: { get: (k: string) => unknown[] }, token: string): boolean {
  const value = metadata.get('authorization')[0]
  if (typeof value !== 'string') return false
  const given = Buffer.from(value.replace(/^Bearer\s+/i, ''))
  const want = Buffer.from(token)
  return given.length === want.length && timingSafeEqual(given, want)
}

const DENIED = { code: status.UNAUTHENTICATED, details: 'missing or wrong API token: set AGENCY_TOKEN (or --token-file) to the daemon\'s token' }

/** Wraps every handler so that a call without the token is refused before it runs. */
export function requireToken (handlers: AgencyServer, token: string): AgencyServer {
  const out: Record<string, unknown> = {}
  for (const [name, handler] of Object.entries(handlers)) {
    const h = handler as (...args: any[]) => void
    out[name] = (call: ServerUnaryCall<unknown, unknown> | ServerWritableStream<unknown, unknown>, callback?: sendUnaryData<unknown>) => {
      if (tokenOk(call.metadata, token)) { h(call, callback); return }
      if (callback != null) callback(DENIED, null)
      // 'error' (not destroy) is how grpc-js ends a server stream with a status.
      else (call as ServerWritableStream<unknown, unknown>).emit('error', Object.assign(new Error(DENIED.details), DENIED))
    }
  }
  return out as unknown as AgencyServer
}
