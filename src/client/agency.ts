// A promise-based client for the local Agency API, with the clear one-line
// error the CLI shows when no daemon answers.
import { credentials, Metadata, status, type ServiceError, type ClientReadableStream, type CallOptions } from '@grpc/grpc-js'
import { AgencyClient } from '../gen/agency/v1/api.js'
import { AgencyError, UnavailableError, isErrorCode, type ErrorCode } from '../core/errors.js'
import { defaultDataDir, defaultGrpcAddr } from '../addresses.js'
import { readFileSync } from 'node:fs'

/** Where `agency` looks for its daemon: --addr, AGENCY_ADDR, else the socket in AGENCY_DATA_DIR (default ~/.agency). */
export function resolveAddr(addr?: string): string {
  if (addr != null && addr !== '') return addr
  if (process.env.AGENCY_ADDR != null && process.env.AGENCY_ADDR !== '') return process.env.AGENCY_ADDR
  return defaultGrpcAddr(process.env.AGENCY_DATA_DIR ?? defaultDataDir())
}

const CODES: Partial<Record<number, ErrorCode>> = {
  [status.INVALID_ARGUMENT]: 'INVALID_ARGUMENT',
  [status.NOT_FOUND]: 'NOT_FOUND',
  [status.FAILED_PRECONDITION]: 'FAILED_PRECONDITION',
  [status.ALREADY_EXISTS]: 'ALREADY_EXISTS',
  [status.RESOURCE_EXHAUSTED]: 'RESOURCE_EXHAUSTED',
  [status.PERMISSION_DENIED]: 'PERMISSION_DENIED',
  [status.UNAVAILABLE]: 'UNAVAILABLE'
}

/** Turns a gRPC error into an AgencyError with the daemon's message. */
export function fromServiceError(err: ServiceError, addr: string): AgencyError {
  if (err.code === status.UNAUTHENTICATED) return new AgencyError('PERMISSION_DENIED', err.details, { cause: err })
  // The daemon names its own errors; UNAVAILABLE from it is not "no daemon".
  const named = err.metadata?.get('agency-error-code')[0]
  if (isErrorCode(named)) return new AgencyError(named, err.details, { cause: err })
  if (err.code === status.UNAVAILABLE || err.code === status.DEADLINE_EXCEEDED) {
    return new UnavailableError(
      `no daemon answers at ${addr} (is agentd running? point at it with --addr, AGENCY_ADDR or AGENCY_DATA_DIR)`,
      { cause: err }
    )
  }
  return new AgencyError(CODES[err.code] ?? 'INTERNAL', err.details !== '' ? err.details : err.message, { cause: err })
}

type UnaryMethod<Req, Res> = (
  req: Req,
  metadata: Metadata,
  options: Partial<CallOptions>,
  cb: (err: ServiceError | null, res: Res) => void
) => unknown

export interface Agency {
  addr: string
  raw: AgencyClient
  call: <Req, Res>(method: (c: AgencyClient) => UnaryMethod<Req, Res>, req: Req, timeoutMs?: number) => Promise<Res>
  stream: <Res>(open: (c: AgencyClient, metadata: Metadata) => ClientReadableStream<Res>) => AsyncIterable<Res> & { cancel: () => void }
  close: () => void
}

/** The API token: AGENCY_TOKEN, else the file named by AGENCY_TOKEN_FILE. */
export function resolveToken(tokenFile?: string): string | undefined {
  if (process.env.AGENCY_TOKEN != null && process.env.AGENCY_TOKEN !== '') return process.env.AGENCY_TOKEN.trim()
  const file = tokenFile ?? process.env.AGENCY_TOKEN_FILE
  if (file == null || file === '') return undefined
  try {
    return readFileSync(file, 'utf8').trim()
  } catch (err) {
    throw new AgencyError('INVALID_ARGUMENT', `cannot read the API token file ${file}: ${(err as Error).message}`)
  }
}

export function connectAgency(addr?: string, opts: { tokenFile?: string } = {}): Agency {
  const target = resolveAddr(addr)
  const token = resolveToken(opts.tokenFile)
  const metadata = (): Metadata => {
    const m = new Metadata()
    if (token != null) m.set('authorization', `Bearer ${token}`)
    return m
  }
  const raw = new AgencyClient(target, credentials.createInsecure(), {
    'grpc.max_receive_message_length': 64 * 1024 * 1024
  })
  return {
    addr: target,
    raw,
    call: async (method, req, timeoutMs = 30_000) =>
      await new Promise((resolve, reject) => {
        const fn = method(raw)
        fn.call(raw, req, metadata(), { deadline: Date.now() + timeoutMs }, (err, res) => {
          if (err != null) reject(fromServiceError(err, target))
          else resolve(res)
        })
      }),
    stream: open => {
      const s = open(raw, metadata())
      const iterable = {
        cancel: () => {
          s.cancel()
        },
        async *[Symbol.asyncIterator]() {
          try {
            for await (const msg of s) yield msg
          } catch (err) {
            const e = err as ServiceError
            if (e.code === status.CANCELLED) return
            throw fromServiceError(e, target)
          }
        }
      }
      return iterable
    },
    close: () => {
      raw.close()
    }
  }
}
