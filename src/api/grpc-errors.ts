// Maps agency's named errors to gRPC status codes, and wraps handlers so that
// no error from a client's request can escape into the daemon.
import { status, type sendUnaryData, type ServerUnaryCall, type ServerWritableStream, type ServiceError, Metadata } from '@grpc/grpc-js'
import { isAgencyError, type ErrorCode } from '../core/errors.js'
import { componentLogger } from '../logger.js'

const log = componentLogger('grpc')

const STATUS: Record<ErrorCode, status> = {
  INVALID_ARGUMENT: status.INVALID_ARGUMENT,
  NOT_FOUND: status.NOT_FOUND,
  FAILED_PRECONDITION: status.FAILED_PRECONDITION,
  ALREADY_EXISTS: status.ALREADY_EXISTS,
  RESOURCE_EXHAUSTED: status.RESOURCE_EXHAUSTED,
  UNAVAILABLE: status.UNAVAILABLE,
  PERMISSION_DENIED: status.PERMISSION_DENIED,
  INTERNAL: status.INTERNAL
}

export function toServiceError(err: unknown): Partial<ServiceError> {
  if (isAgencyError(err)) {
    const metadata = new Metadata()
    metadata.set('agency-error-code', err.code)
    return { code: STATUS[err.code], details: clip(err.message), metadata }
  }
  log.error({ err }, 'unexpected error in a gRPC handler')
  return { code: status.INTERNAL, details: clip(`internal error: ${(err as Error)?.message ?? String(err)}`) }
}

/**
 * The status message travels percent-encoded in a trailer: an error quoting a
 * long input would exceed the client's header limit and break the connection.
 */
export const MAX_ERROR_DETAILS = 512

function clip(details: string): string {
  return details.length <= MAX_ERROR_DETAILS
    ? details
    : `${details.slice(0, MAX_ERROR_DETAILS)}… (${details.length - MAX_ERROR_DETAILS} more characters)`
}

/** What a unary handler may know of its call beyond the request: whether the client went away. */
export interface UnaryContext {
  signal: AbortSignal
}

export function unary<Req, Res>(fn: (req: Req, ctx: UnaryContext) => Promise<Res>) {
  return (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>): void => {
    let pending: Promise<Res>
    try {
      const aborter = new AbortController()
      call.once('cancelled', () => {
        aborter.abort()
      })
      pending = fn(call.request, { signal: aborter.signal })
    } catch (err) {
      callback(toServiceError(err), null)
      return
    }
    pending.then(
      res => {
        callback(null, res)
      },
      err => {
        callback(toServiceError(err), null)
      }
    )
  }
}

/** A server stream: `run` writes until it returns or the client goes away. */
export function serverStream<Req, Res>(run: (req: Req, write: (msg: Res) => boolean, closed: AbortSignal) => Promise<void>) {
  return (call: ServerWritableStream<Req, Res>): void => {
    const aborter = new AbortController()
    call.on('cancelled', () => {
      aborter.abort()
    })
    call.on('close', () => {
      aborter.abort()
    })
    call.on('error', () => {
      aborter.abort()
    })
    const write = (msg: Res): boolean => {
      if (aborter.signal.aborted) return false
      return call.write(msg)
    }
    run(call.request, write, aborter.signal).then(
      () => {
        if (!aborter.signal.aborted) call.end()
      },
      err => {
        // 'error' (not destroy) is how grpc-js sends a status on a server stream.
        if (!aborter.signal.aborted) call.emit('error', Object.assign(new Error(toServiceError(err).details), toServiceError(err)))
      }
    )
  }
}

/** The status a call gets instead of running. */
export interface Refusal {
  code: status
  details: string
}

type AnyCall = ServerUnaryCall<unknown, unknown> | ServerWritableStream<unknown, unknown>

/**
 * Wraps every handler of a service so that `refuse` may answer a call before
 * it runs: a unary call through its callback, a server stream by ending it
 * with the status ('error', not destroy(), is how grpc-js sends a stream's
 * status; destroy() leaves the client waiting).
 */
export function guardHandlers<S extends object>(handlers: S, refuse: (method: string, call: AnyCall) => Refusal | undefined): S {
  const out: Record<string, unknown> = {}
  for (const [name, handler] of Object.entries(handlers)) {
    const h = handler as (call: AnyCall, callback?: sendUnaryData<unknown>) => void
    out[name] = (call: AnyCall, callback?: sendUnaryData<unknown>) => {
      const refusal = refuse(name, call)
      if (refusal === undefined) {
        h(call, callback)
        return
      }
      if (callback != null) callback(refusal, null)
      else call.emit('error', Object.assign(new Error(refusal.details), refusal))
    }
  }
  return out as S
}
