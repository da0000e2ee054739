// The agent's stdio as a stream of JSON-RPC messages for the ACP SDK, with
// agentd's guards in front of it: every line in and out goes to the harness
// log (secrets in MCP server environments masked, long lines cut); a line that
// is not a JSON-RPC 2.0 message, or a response to a request agentd never sent,
// is logged, counted and dropped instead of reaching the SDK; and an agent
// that sends too much (a line over the size limit, too many malformed lines,
// a flood of messages) is a fatal AgentProtocolError for this session, so the
// supervisor restarts it with backoff instead of agentd drowning in it.
import type { Readable, Writable } from 'node:stream'
import type { AnyMessage, Stream } from '@agentclientprotocol/sdk'
import { AgentProtocolError } from '../../core/errors.js'

export interface AgentWireLimits {
  /** One message may be at most this long. Default 8 MiB. */
  maxLineBytes: number
  /** This many malformed lines in one session are fatal. Default 20. */
  maxMalformed: number
  /** Messages the agent may send in a burst, refilled at `floodRatePerSec`. Default 20000. */
  floodBurst: number
  /** Default 2000 a second. */
  floodRatePerSec: number
}

export const DEFAULT_WIRE_LIMITS: AgentWireLimits = {
  maxLineBytes: 8 * 1024 * 1024,
  maxMalformed: 20,
  floodBurst: 20_000,
  floodRatePerSec: 2_000
}

export interface AgentWireOptions {
  /** The agent's stdout. */
  input: Readable
  /** The agent's stdin. */
  output: Writable
  /** A line for the harness log: '<' from the agent, '>' to it, '!' agentd's own note. */
  log: (direction: '<' | '>' | '!', text: string) => void
  /** The session cannot go on; called once. */
  onFatal: (err: AgentProtocolError) => void
  /** Any well-formed message from the agent (the session is alive). */
  onInbound?: () => void
  limits?: Partial<AgentWireLimits>
  now?: () => number
}

/** Longest line written to the harness log; the rest is cut with a note of the size. */
const MAX_LOGGED_CHARS = 16_000

export interface AgentWire {
  stream: Stream
  /** Malformed lines dropped so far. */
  malformed: () => number
  /** Stops reading and writing (the process is going away). */
  close: () => void
}

export function agentWire(o: AgentWireOptions): AgentWire {
  const limits = { ...DEFAULT_WIRE_LIMITS, ...o.limits }
  const now = o.now ?? (() => Date.now())
  /** ids of requests agentd sent and the agent has not answered yet */
  const pending = new Set<string>()
  let malformed = 0
  let tokens = limits.floodBurst
  let refilledAt = now()
  let failed = false
  let closed = false
  let buffer: Buffer = Buffer.alloc(0)
  let controller!: ReadableStreamDefaultController<AnyMessage>

  const fatal = (err: AgentProtocolError): void => {
    if (failed) return
    failed = true
    o.log('!', err.message)
    o.input.pause()
    try {
      controller.error(err)
    } catch {
      /* already closed */
    }
    o.onFatal(err)
  }

  const dropMalformed = (why: string, line: string): void => {
    malformed++
    o.log('!', `malformed JSON-RPC from the agent (${malformed} of at most ${limits.maxMalformed}), dropped: ${why}: ${excerpt(line, 300)}`)
    if (malformed >= limits.maxMalformed)
      fatal(
        new AgentProtocolError(
          'malformed',
          `the agent sent ${malformed} malformed JSON-RPC lines on stdout: it does not speak ACP over stdio (is it an ACP agent? does it print logs to stdout?)`
        )
      )
  }

  const flooding = (): boolean => {
    const t = now()
    tokens = Math.min(limits.floodBurst, tokens + ((t - refilledAt) / 1000) * limits.floodRatePerSec)
    refilledAt = t
    tokens -= 1
    return tokens < 0
  }

  const onLine = (bytes: Buffer): void => {
    const line = bytes.toString('utf8').trim()
    if (line === '') return
    o.log('<', excerpt(line, MAX_LOGGED_CHARS))
    if (flooding()) {
      fatal(
        new AgentProtocolError(
          'flood',
          `the agent sent more than ${limits.floodBurst} messages faster than ${limits.floodRatePerSec} a second: stopping it`
        )
      )
      return
    }
    let msg: unknown
    try {
      msg = JSON.parse(line)
    } catch {
      dropMalformed('not JSON', line)
      return
    }
    const why = checkMessage(msg, pending)
    if (why !== undefined) {
      dropMalformed(why, line)
      return
    }
    const m = msg as Record<string, unknown>
    if (!('method' in m)) pending.delete(idKey(m.id))
    o.onInbound?.()
    controller.enqueue(m as AnyMessage)
    if ((controller.desiredSize ?? 1) <= 0) o.input.pause()
  }

  const onData = (chunk: Buffer): void => {
    if (failed || closed) return
    buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk])
    let start = 0
    for (let nl = buffer.indexOf(10, start); nl >= 0 && !failed; nl = buffer.indexOf(10, start)) {
      onLine(buffer.subarray(start, nl))
      start = nl + 1
    }
    buffer = start === 0 ? buffer : buffer.subarray(start)
    if (!failed && buffer.length > limits.maxLineBytes)
      fatal(new AgentProtocolError('oversized', `the agent sent a message over ${limits.maxLineBytes} bytes`))
  }

  const readable = new ReadableStream<AnyMessage>(
    {
      start(c) {
        controller = c
        o.input.on('data', onData)
        o.input.once('end', () => {
          if (failed || closed) return
          if (buffer.length > 0) onLine(buffer)
          try {
            c.close()
          } catch {
            /* errored */
          }
        })
        // A closed pipe is an ended session, never an unhandled error in agentd.
        o.input.on('error', err => {
          o.log('!', `reading the agent's stdout failed: ${err.message}`)
        })
      },
      pull() {
        if (!failed && !closed) o.input.resume()
      },
      cancel() {
        closed = true
        o.input.pause()
      }
    },
    { highWaterMark: 256 }
  )

  o.output.on('error', err => {
    o.log('!', `writing to the agent's stdin failed: ${err.message}`)
  })
  const writable = new WritableStream<AnyMessage>({
    async write(msg) {
      const m = msg as unknown as Record<string, unknown>
      if (typeof m.method === 'string' && 'id' in m) pending.add(idKey(m.id))
      o.log('>', excerpt(JSON.stringify(masked(m)), MAX_LOGGED_CHARS))
      if (closed || o.output.destroyed || o.output.writableEnded) throw new AgentProtocolError('closed', "the agent's stdin is closed")
      await new Promise<void>((resolve, reject) => {
        o.output.write(JSON.stringify(m) + '\n', err => {
          if (err != null) reject(err)
          else resolve()
        })
      })
    },
    close() {
      if (!o.output.writableEnded) o.output.end()
    }
  })

  return {
    stream: { readable, writable },
    malformed: () => malformed,
    close: () => {
      closed = true
      o.input.off('data', onData)
      try {
        controller.close()
      } catch {
        /* already closed or errored */
      }
    }
  }
}

/** Why a parsed line is not a JSON-RPC 2.0 message this client can take, or undefined. */
function checkMessage(msg: unknown, pending: Set<string>): string | undefined {
  if (msg == null || typeof msg !== 'object' || Array.isArray(msg)) return 'not a JSON object'
  const m = msg as Record<string, unknown>
  if (m.jsonrpc !== '2.0') return 'no "jsonrpc": "2.0"'
  if ('method' in m) {
    if (typeof m.method !== 'string' || m.method === '') return 'method is not a string'
    if ('id' in m && !validId(m.id)) return 'a request id must be a string or a number'
    return undefined
  }
  if (!('id' in m)) return 'neither a request, a notification nor a response'
  if (!('result' in m) && !('error' in m)) return 'a response without result or error'
  if (!pending.has(idKey(m.id))) return `a response to request ${JSON.stringify(m.id)}, which agentd did not send or was already answered`
  return undefined
}

function validId(id: unknown): boolean {
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id))
}

function idKey(id: unknown): string {
  return `${typeof id}:${String(id)}`
}

/** A copy for the log with the values of MCP server environments masked (they may carry the API token). */
function masked(m: Record<string, unknown>): Record<string, unknown> {
  const params = m.params as Record<string, unknown> | undefined
  if (m.method !== 'session/new' || params == null || !Array.isArray(params.mcpServers)) return m
  return {
    ...m,
    params: {
      ...params,
      mcpServers: params.mcpServers.map((s: Record<string, unknown>) => ({
        ...s,
        env: Array.isArray(s.env)
          ? s.env.map((e: { name: string; value: string }) => ({
              name: e.name,
              value: /TOKEN|KEY|SECRET|PASSWORD/i.test(e.name) ? '***' : e.value
            }))
          : s.env
      }))
    }
  }
}

function excerpt(line: string, max: number): string {
  return line.length > max ? `${line.slice(0, max)}... (${line.length} characters)` : line
}
