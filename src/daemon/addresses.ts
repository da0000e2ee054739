// Parsing of the HOST:PORT and unix:PATH addresses the daemon binds.
import { InvalidArgumentError } from '../core/errors.js'

export function parseHostPort (addr: string): { host: string, port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(addr.trim())
  if (m == null) throw new InvalidArgumentError(`not a HOST:PORT address: "${addr}"`)
  const port = Number(m[3])
  if (port > 65535) throw new InvalidArgumentError(`port out of range in "${addr}"`)
  return { host: m[1] ?? m[2], port }
}

export function isLoopbackHost (host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host)
}

/** The address string a gRPC client or server uses: host:port or unix:path. */
export function grpcTarget (addr: string): string {
  if (addr.startsWith('unix:')) return addr
  parseHostPort(addr)
  return addr
}
