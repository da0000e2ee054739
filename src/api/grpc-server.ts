// The local gRPC API: the Agency service plus the standard health service.
import { Server, ServerCredentials, status } from '@grpc/grpc-js'
import { HealthImplementation } from 'grpc-health-check'
import { AgencyService, type AgencyServer } from '../gen/agency/v1/api.js'
import type { Daemon } from '../daemon/daemon.js'
import { meshHandlers } from './mesh-handlers.js'
import { chmod } from 'node:fs/promises'
import { requireToken } from './auth.js'
import { parseHostPort, isLoopbackHost } from '../daemon/addresses.js'
import { FailedPreconditionError } from '../core/errors.js'
import { logHandlers } from './log-handlers.js'
import { boardHandlers } from './board-handlers.js'
import { repoHandlers } from './repo-handlers.js'

/** Largest gRPC message accepted from a client. */
export const MAX_GRPC_MESSAGE_BYTES = 4 * 1024 * 1024

export interface GrpcServer {
  /** the bound address: host:port or unix:path */
  address: string
  close: () => Promise<void>
}

/** Handlers that later parts of the daemon fill in, answered as UNIMPLEMENTED until then. */
function unimplemented (): Partial<AgencyServer> {
  const handler = (_call: unknown, callback: (err: { code: number, details: string }) => void): void => {
    callback({ code: status.UNIMPLEMENTED, details: 'not implemented yet' })
  }
  const names = Object.keys(AgencyService) as Array<keyof AgencyServer>
  return Object.fromEntries(names.map(n => [n, handler])) as Partial<AgencyServer>
}

export function agencyHandlers (d: Daemon, extra: Partial<AgencyServer> = {}): AgencyServer {
  return { ...unimplemented(), ...meshHandlers(d), ...logHandlers(d), ...boardHandlers(d), ...repoHandlers(d), ...extra } as AgencyServer
}

export async function startGrpcServer (address: string, handlers: AgencyServer, opts: { token?: string } = {}): Promise<GrpcServer> {
  if (!address.startsWith('unix:')) {
    const { host } = parseHostPort(address)
    if (!isLoopbackHost(host) && (opts.token == null || opts.token === '')) {
      throw new FailedPreconditionError(`refusing to serve the API on ${address}, beyond loopback, without a token: pass --api-token-file`)
    }
  }
  if (opts.token != null && opts.token !== '') handlers = requireToken(handlers, opts.token)
  const server = new Server({
    'grpc.max_receive_message_length': MAX_GRPC_MESSAGE_BYTES,
    'grpc.max_send_message_length': 64 * 1024 * 1024
  })
  server.addService(AgencyService, handlers)
  const health = new HealthImplementation({ '': 'SERVING', 'agency.v1.Agency': 'SERVING' })
  health.addToServer(server)
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(address, ServerCredentials.createInsecure(), (err, p) => { err != null ? reject(err) : resolve(p) })
  })
  const bound = address.startsWith('unix:') ? address : address.replace(/:\d+$/, `:${port}`)
  // Only this user may talk to a daemon over its unix socket.
  if (address.startsWith('unix:')) await chmod(address.slice('unix:'.length).replace(/^\/\//, ''), 0o600)
  return {
    address: bound,
    close: async () => {
      health.setStatus('', 'NOT_SERVING')
      await new Promise<void>(resolve => {
        const timer = setTimeout(() => { server.forceShutdown(); resolve() }, 2000)
        server.tryShutdown(() => { clearTimeout(timer); resolve() })
      })
    }
  }
}
