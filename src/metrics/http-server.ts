// /metrics (Prometheus text format) and /healthz over plain HTTP.
import { createServer, type Server } from 'node:http'
import type { Registry } from 'prom-client'
import { parseHostPort } from '../addresses.js'

export interface MetricsServer {
  /** the address actually bound, host:port */
  address: string
  close: () => Promise<void>
}

export async function startMetricsServer(
  listen: string,
  registry: Registry,
  health: () => { ok: boolean; detail: Record<string, unknown> }
): Promise<MetricsServer> {
  const { host, port } = parseHostPort(listen)
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]
    if (path === '/metrics') {
      registry.metrics().then(
        text => {
          res.writeHead(200, { 'content-type': registry.contentType })
          res.end(text)
        },
        err => {
          res.writeHead(500, { 'content-type': 'text/plain' })
          res.end(String(err))
        }
      )
      return
    }
    if (path === '/healthz') {
      const h = health()
      res.writeHead(h.ok ? 200 : 503, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ ok: h.ok, ...h.detail }))
      return
    }
    res.writeHead(404, { 'content-type': 'text/plain' })
    res.end('not found: try /metrics or /healthz\n')
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  const bound = server.address()
  const address = typeof bound === 'object' && bound != null ? `${host}:${bound.port}` : listen
  return {
    address,
    close: async () => {
      await new Promise<void>(resolve =>
        server.close(() => {
          resolve()
        })
      )
      server.closeAllConnections()
    }
  }
}
