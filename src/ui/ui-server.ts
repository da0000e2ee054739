// The dashboard's HTTP server (`agentd --ui HOST:PORT`): the built page, JSON
// endpoints over the daemon's folds (src/ui/swarm-view.ts), and one
// server-sent event stream of change notices (src/ui/swarm-feed.ts). GET only,
// but for the operator's signed actions (src/ui/operator-endpoints.ts). Bound
// to loopback unless the daemon has an API token.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { isLoopbackHost, parseHostPort } from '../addresses.js'
import { AgencyError, FailedPreconditionError, InvalidArgumentError, isAgencyError } from '../core/errors.js'
import { MAX_QUERY_CHARS } from '../core/findings/findings-index.js'
import { componentLogger } from '../logger.js'
import { SwarmFeed, type FeedNotice, type FeedSource } from './swarm-feed.js'
import { SwarmView, type SwarmSource } from './swarm-view.js'
import { intParam, parsePage } from './paging.js'
import { carriesToken, hostAllowed, SESSION_COOKIE, sessionValue } from './ui-access.js'
import { loadStaticFiles, type StaticFile } from './static-files.js'
import { MAX_ACTION_BODY_BYTES, operatorEndpoints, type OperatorDesk } from './operator-endpoints.js'

export interface UiServerInit {
  /** HOST:PORT; port 0 picks a free one */
  listen: string
  /** what the page reads and watches of the daemon */
  daemon: SwarmSource & FeedSource
  /** the operator's part (docs/operator.md); none: the Operator tab shows nothing to act on */
  operator?: OperatorDesk
  /** the daemon's harness state, from its supervisor ('' when it runs none) */
  harnessState?: () => string
  /** the API token: required beyond loopback, and then on every request */
  token?: string
  /** where the built page is (default <package>/dist/ui) */
  staticDir?: string
  /** the shortest time between two change notices (default 500 ms) */
  noticeIntervalMs?: number
  /** open event streams at most (default 32) */
  maxStreams?: number
}

export interface UiServer {
  /** host:port actually bound */
  address: string
  /** the page's address */
  url: string
  feed: SwarmFeed
  close: () => Promise<void>
}

const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin'
}

const KEEPALIVE_MS = 20_000

/** JSON that is also safe should it ever be read as HTML or script: <, >, & and the line separators escaped. */
export function safeJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, c => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

function textParam(params: URLSearchParams, name: string, max = MAX_QUERY_CHARS): string {
  const v = params.get(name) ?? ''
  if (v.length > max) throw new InvalidArgumentError(`${name} is over ${max} characters`)
  return v
}

const STATUS_OF: Partial<Record<AgencyError['code'], number>> = {
  INVALID_ARGUMENT: 400,
  NOT_FOUND: 404,
  FAILED_PRECONDITION: 409,
  PERMISSION_DENIED: 403,
  RESOURCE_EXHAUSTED: 429,
  UNAVAILABLE: 503
}

type Handler = (params: URLSearchParams) => unknown

export async function startUiServer(init: UiServerInit): Promise<UiServer> {
  const { host, port } = parseHostPort(init.listen)
  const token = init.token != null && init.token !== '' ? init.token : undefined
  const loopback = isLoopbackHost(host)
  if (!loopback && token == null) {
    throw new FailedPreconditionError(
      `refusing to serve the dashboard on ${init.listen}, beyond loopback, without a token: pass --api-token-file`
    )
  }
  const files = await loadStaticFiles(init.staticDir)
  const log = componentLogger('ui')
  const feed = new SwarmFeed({ daemon: init.daemon, intervalMs: init.noticeIntervalMs })
  const view = new SwarmView({ daemon: init.daemon, feed, harnessState: init.harnessState ?? (() => '') })
  const maxStreams = init.maxStreams ?? 32
  const operator = init.operator === undefined ? undefined : operatorEndpoints(init.operator)
  const streams = new Set<ServerResponse>()

  const api: Record<string, Handler> = {
    summary: () => view.summary(),
    agents: p =>
      view.agents(parsePage(p, { limit: 100, max: 500 }), { q: textParam(p, 'q', 200), live: liveFilter(textParam(p, 'live', 10)) }),
    agent: async p => await view.agent(textParam(p, 'id', 200)),
    board: p => view.board(parsePage(p, { limit: 50, max: 200 }).limit, textParam(p, 'q', 200)),
    tasks: p => view.tasks(textParam(p, 'state', 20), parsePage(p), textParam(p, 'q', 200)),
    overlaps: () => view.overlaps(),
    findings: p =>
      view.findings(parsePage(p), {
        q: textParam(p, 'q'),
        kind: textParam(p, 'kind', 40),
        path: textParam(p, 'path'),
        author: textParam(p, 'author', 200)
      }),
    inbox: async p => await view.inbox(parsePage(p)),
    outbox: async p => await view.outbox(parsePage(p)),
    announcements: p => view.announcements(parsePage(p)),
    runs: p => view.runs(Math.min(5000, Math.max(2, intParam(p, 'points', 2000)))),
    integrations: p => view.integrations(parsePage(p))
  }

  const send = (res: ServerResponse, status: number, type: string, body: string | Buffer, extra: Record<string, string> = {}): void => {
    res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type, 'cache-control': 'no-store', ...extra })
    res.end(body)
  }
  const sendJson = (res: ServerResponse, status: number, value: unknown): void => {
    send(res, status, 'application/json; charset=utf-8', safeJson(value))
  }
  const sendError = (res: ServerResponse, err: unknown): void => {
    if (isAgencyError(err)) {
      sendJson(res, STATUS_OF[err.code] ?? 500, { error: { code: err.code, message: err.message } })
      return
    }
    log.warn({ err }, 'dashboard request failed')
    sendJson(res, 500, { error: { code: 'INTERNAL', message: 'the daemon could not answer this request' } })
  }

  const serveFile = (req: IncomingMessage, res: ServerResponse, f: StaticFile): void => {
    const headers: Record<string, string> = {
      ...SECURITY_HEADERS,
      'content-type': f.type,
      etag: f.etag,
      'cache-control': f.immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
      vary: 'accept-encoding'
    }
    if (req.headers['if-none-match'] === f.etag) {
      res.writeHead(304, headers)
      res.end()
      return
    }
    const gzip = f.gzip != null && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))
    if (gzip) headers['content-encoding'] = 'gzip'
    res.writeHead(200, headers)
    res.end(gzip ? f.gzip : f.body)
  }

  const openStream = (req: IncomingMessage, res: ServerResponse): void => {
    if (streams.size >= maxStreams) {
      sendJson(res, 503, { error: { code: 'RESOURCE_EXHAUSTED', message: `${maxStreams} dashboards are open on this daemon already` } })
      return
    }
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
      'x-accel-buffering': 'no'
    })
    streams.add(res)
    // A stream that cannot keep up gets no more notices until it drains, then one that refreshes everything.
    let congested = false
    const write = (chunk: string): void => {
      if (congested) return
      if (!res.write(chunk)) congested = true
    }
    res.on('drain', () => {
      if (!congested) return
      congested = false
      write(
        `event: change\ndata: ${safeJson({ seq: feed.seq, topics: ['summary', 'agents', 'board', 'findings', 'messages', 'runs'], activity: [], more: 0 })}\n\n`
      )
    })
    write(
      `retry: 2000\nevent: hello\ndata: ${safeJson({ seq: feed.seq, self: { peerId: init.daemon.peerId, name: init.daemon.name } })}\n\n`
    )
    const unsubscribe = feed.subscribe((n: FeedNotice) => {
      write(`event: change\ndata: ${safeJson(n)}\n\n`)
    })
    const keepalive = setInterval(() => {
      write(': keepalive\n\n')
    }, KEEPALIVE_MS)
    const close = (): void => {
      clearInterval(keepalive)
      unsubscribe()
      streams.delete(res)
    }
    req.on('close', close)
    res.on('error', close)
  }

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (!hostAllowed(req.headers.host, loopback)) {
      send(
        res,
        421,
        'text/plain; charset=utf-8',
        'this dashboard answers only requests addressed to a loopback name (localhost, 127.0.0.1, [::1])\n'
      )
      return
    }
    const url = new URL(req.url ?? '/', 'http://dashboard.invalid')
    const operatorPost = req.method === 'POST' && url.pathname.startsWith('/api/operator/') && operator !== undefined
    if (req.method !== 'GET' && !operatorPost) {
      send(res, 405, 'text/plain; charset=utf-8', "the dashboard takes GET only, but for the operator's actions\n", { allow: 'GET' })
      return
    }
    if (token != null) {
      const given = url.searchParams.get('token')
      if (given != null) {
        // The token is traded for a session cookie and taken out of the address at once.
        url.searchParams.delete('token')
        if (given.trim() !== token) {
          send(res, 401, 'text/plain; charset=utf-8', 'wrong API token\n')
          return
        }
        send(res, 303, 'text/plain; charset=utf-8', '', {
          location: url.pathname + url.search,
          'set-cookie': `${SESSION_COOKIE}=${sessionValue(token)}; Path=/; HttpOnly; SameSite=Strict`
        })
        return
      }
      if (!carriesToken(req, token)) {
        if (url.pathname.startsWith('/api/') || url.pathname === '/events')
          sendJson(res, 401, { error: { code: 'PERMISSION_DENIED', message: 'missing or wrong API token' } })
        else
          send(
            res,
            401,
            'text/plain; charset=utf-8',
            "This dashboard needs the daemon's API token: open /?token=<the token in the daemon's --api-token-file>\n"
          )
        return
      }
    }
    if (url.pathname === '/events') {
      openStream(req, res)
      return
    }
    if (operator !== undefined && (url.pathname === '/api/operator' || url.pathname.startsWith('/api/operator/'))) {
      try {
        if (req.method === 'POST') {
          const body = await readBody(req, MAX_ACTION_BODY_BYTES)
          const r = await operator.post(url.pathname.slice('/api/operator/'.length), req, body)
          send(res, r.status, 'application/json; charset=utf-8', safeJson(r.value), r.headers)
        } else if (url.pathname === '/api/operator') {
          sendJson(res, 200, operator.state(req))
        } else if (url.pathname === '/api/operator/challenge') {
          sendJson(res, 200, operator.challenge())
        } else {
          sendJson(res, 404, { error: { code: 'NOT_FOUND', message: `no endpoint ${url.pathname.slice(0, 80)}` } })
        }
      } catch (err) {
        sendError(res, err)
      }
      return
    }
    if (url.pathname.startsWith('/api/')) {
      const handler = Object.hasOwn(api, url.pathname.slice(5)) ? api[url.pathname.slice(5)] : undefined
      if (handler == null) {
        sendJson(res, 404, { error: { code: 'NOT_FOUND', message: `no endpoint ${url.pathname.slice(0, 80)}` } })
        return
      }
      try {
        sendJson(res, 200, await handler(url.searchParams))
      } catch (err) {
        sendError(res, err)
      }
      return
    }
    const file = files.get(url.pathname === '/' ? '/index.html' : url.pathname)
    if (file == null) {
      send(res, 404, 'text/plain; charset=utf-8', 'not found\n')
      return
    }
    serveFile(req, res, file)
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(err => {
      if (!res.headersSent) sendError(res, err)
      else res.destroy()
    })
  })
  server.on('clientError', (_err, socket) => {
    socket.destroy()
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  feed.start()
  const bound = server.address()
  const boundPort = typeof bound === 'object' && bound != null ? bound.port : port
  const address = `${host.includes(':') ? `[${host}]` : host}:${boundPort}`
  return {
    address,
    url: `http://${address}/`,
    feed,
    close: async () => {
      feed.stop()
      for (const s of streams) s.end()
      streams.clear()
      const closed = new Promise<void>(resolve =>
        server.close(() => {
          resolve()
        })
      )
      server.closeAllConnections()
      await closed
    }
  }
}

/** A request's body as text, refused (InvalidArgumentError) past `max` bytes. */
async function readBody(req: IncomingMessage, max: number): Promise<string> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > max) throw new InvalidArgumentError(`the body is over ${max} bytes`)
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks).toString('utf8')
}

function liveFilter(v: string): 'live' | 'offline' | '' {
  if (v === '' || v === 'all') return ''
  if (v === 'live' || v === 'offline') return v
  throw new InvalidArgumentError(`live must be live, offline or all, got ${JSON.stringify(v)}`)
}
