// Where agentd is found: its default data dir and API socket, and the
// HOST:PORT and unix:PATH addresses it binds. The daemon, its servers and the
// client all read this; it imports nothing of theirs.
import { homedir } from 'node:os'
import { join } from 'node:path'
import { InvalidArgumentError } from './core/errors.js'

export function defaultDataDir(): string {
  return join(homedir(), '.agency')
}

/** The socket's name in the data dir. */
export const API_SOCKET_NAME = 'agentd.sock'

/** The default gRPC address: a unix socket (mode 0600) in the data dir, so only its user can talk to it. */
export function defaultGrpcAddr(dataDir: string): string {
  return `unix:${join(dataDir, API_SOCKET_NAME)}`
}

export function parseHostPort(addr: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(addr.trim())
  if (m == null) throw new InvalidArgumentError(`not a HOST:PORT address: "${addr}"`)
  const port = Number(m[3])
  if (port > 65535) throw new InvalidArgumentError(`port out of range in "${addr}"`)
  return { host: m[1] ?? m[2], port }
}

export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host)
}

/** The address string a gRPC client or server uses: host:port or unix:path. */
export function grpcTarget(addr: string): string {
  if (addr.startsWith('unix:')) return addr
  parseHostPort(addr)
  return addr
}
