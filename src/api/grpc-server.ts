// The local gRPC API: the Agency service plus the standard health and
// reflection services.
import { Server, ServerCredentials, status } from '@grpc/grpc-js'
import { HealthImplementation } from 'grpc-health-check'
import { AgencyService, type AgencyServer } from '../gen/agency/v1/api.js'
import { meshHandlers, type MeshApiParts } from './mesh-handlers.js'
import { chmod, lstat, rm } from 'node:fs/promises'
import { addReflection } from './reflection.js'
import { connect } from 'node:net'
import { requireToken } from './auth.js'
import { guardHandlers } from './grpc-errors.js'
import { parseHostPort, isLoopbackHost } from '../addresses.js'
import { FailedPreconditionError } from '../core/errors.js'
import { logHandlers, type LogApiParts } from './log-handlers.js'
import { boardHandlers, type BoardApiParts } from './board-handlers.js'
import { operatorHandlers, type OperatorApiParts } from './operator-handlers.js'
import { spendHandlers, type SpendApi } from './spend-handlers.js'
import { repoHandlers, type RepoApiParts } from './repo-handlers.js'

/** Largest gRPC message accepted from a client. */
export const MAX_GRPC_MESSAGE_BYTES = 4 * 1024 * 1024

/** A request whose bytes did not decode: the handler answers INVALID_ARGUMENT. */
class MalformedRequest {
  constructor(readonly reason: string) {}
}

// grpc-js answers INTERNAL for a request it cannot deserialize, with no hook
// to change that. So decoding never throws here: it yields a MalformedRequest
// (bad protobuf, a uint64 beyond 2^53) that `refuseMalformed` answers.
const TOLERANT_SERVICE = Object.fromEntries(
  Object.entries(AgencyService).map(([name, method]) => [
    name,
    {
      ...method,
      requestDeserialize: (bytes: Buffer): unknown => {
        try {
          return method.requestDeserialize(bytes)
        } catch (err) {
          return new MalformedRequest((err as Error).message)
        }
      }
    }
  ])
) as unknown as typeof AgencyService

function refuseMalformed(handlers: AgencyServer): AgencyServer {
  return guardHandlers(handlers, (method, call) =>
    call.request instanceof MalformedRequest
      ? { code: status.INVALID_ARGUMENT, details: `malformed ${method} request: ${call.request.reason.slice(0, 200)}` }
      : undefined
  )
}

export interface GrpcServer {
  /** the bound address: host:port or unix:path */
  address: string
  close: () => Promise<void>
}

/** Handlers that later parts of the daemon fill in, answered as UNIMPLEMENTED until then. */
function unimplemented(): Partial<AgencyServer> {
  const handler = (_call: unknown, callback: (err: { code: number; details: string }) => void): void => {
    callback({ code: status.UNIMPLEMENTED, details: 'not implemented yet' })
  }
  const names = Object.keys(AgencyService) as Array<keyof AgencyServer>
  return Object.fromEntries(names.map(n => [n, handler]))
}

/** What the API uses of the daemon: the parts each group of handlers declares. */
export type ApiParts = MeshApiParts & LogApiParts & BoardApiParts & RepoApiParts & OperatorApiParts & { spend?: SpendApi }

export function agencyHandlers(d: ApiParts, extra: Partial<AgencyServer> = {}): AgencyServer {
  return {
    ...unimplemented(),
    ...meshHandlers(d),
    ...logHandlers(d),
    ...boardHandlers(d),
    ...repoHandlers(d),
    ...operatorHandlers(d),
    ...(d.spend != null ? spendHandlers(d.spend) : {}),
    ...extra
  } as AgencyServer
}

export async function startGrpcServer(address: string, handlers: AgencyServer, opts: { token?: string } = {}): Promise<GrpcServer> {
  if (!address.startsWith('unix:')) {
    const { host } = parseHostPort(address)
    if (!isLoopbackHost(host) && (opts.token == null || opts.token === '')) {
      throw new FailedPreconditionError(`refusing to serve the API on ${address}, beyond loopback, without a token: pass --api-token-file`)
    }
  }
  handlers = refuseMalformed(handlers)
  if (opts.token != null && opts.token !== '') handlers = requireToken(handlers, opts.token)
  const server = new Server({
    'grpc.max_receive_message_length': MAX_GRPC_MESSAGE_BYTES,
    'grpc.max_send_message_length': 64 * 1024 * 1024
  })
  server.addService(TOLERANT_SERVICE, handlers)
  const health = new HealthImplementation({ '': 'SERVING', 'agency.v1.Agency': 'SERVING' })
  health.addToServer(server)
  addReflection(server)
  if (address.startsWith('unix:')) await clearStaleSocket(socketPath(address))
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(address, ServerCredentials.createInsecure(), (err, p) => {
      if (err != null) reject(err)
      else resolve(p)
    })
  })
  const bound = address.startsWith('unix:') ? address : address.replace(/:\d+$/, `:${port}`)
  // Only this user may talk to a daemon over its unix socket.
  if (address.startsWith('unix:')) await chmod(socketPath(address), 0o600)
  return {
    address: bound,
    close: async () => {
      health.setStatus('', 'NOT_SERVING')
      await new Promise<void>(resolve => {
        const timer = setTimeout(() => {
          server.forceShutdown()
          resolve()
        }, 2000)
        server.tryShutdown(() => {
          clearTimeout(timer)
          resolve()
        })
      })
      if (address.startsWith('unix:')) await rm(socketPath(address), { force: true }).catch(() => {})
    }
  }
}

function socketPath(address: string): string {
  return address.slice('unix:'.length).replace(/^\/\//, '')
}

/**
 * A socket file left by a daemon that was killed would make the bind fail.
 * Remove it when nothing answers on it; refuse when something does.
 */
async function clearStaleSocket(path: string): Promise<void> {
  const st = await lstat(path).catch(() => undefined)
  if (st == null) return
  if (!st.isSocket()) throw new FailedPreconditionError(`cannot serve the API on unix:${path}: the file exists and is not a socket`)
  const answered = await new Promise<boolean>(resolve => {
    const c = connect(path)
    c.once('connect', () => {
      c.destroy()
      resolve(true)
    })
    c.once('error', () => {
      resolve(false)
    })
  })
  if (answered) throw new FailedPreconditionError(`cannot serve the API on unix:${path}: another process is serving there`)
  await rm(path, { force: true })
}
