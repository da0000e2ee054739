// A scripted model endpoint that speaks the Anthropic Messages API on
// 127.0.0.1 (a random port), for tests that drive real CLIs such as Claude
// Code. It STANDS IN FOR THE MODEL ONLY: the CLI, its tools, the agency MCP
// server, the daemons and git are the real programs. What the "model" does
// next is decided by agent-script.ts from the conversation each request
// carries; this file only speaks the wire:
//
//   POST /v1/messages               streaming (SSE) or not; an agent turn when
//                                   the request offers tools, else a short text
//   POST /v1/messages/count_tokens  a token estimate
//   HEAD or GET /                   200 (Claude Code probes the base URL first)
//   anything else                   404 in the API's error shape
//
// Every request is recorded (what was offered, every tool result so far, what
// was answered, the usage it reported) so a test can assert on what the CLI
// sent and what it was served. `usage` sets what each answer reports; `refuse`
// answers a request the way a limited API does (429 with retry-after, 529
// overloaded).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Conversation, Move, ToolCall, ToolOutcome } from './agent-script.js'

/** Decides the agent's next move from the conversation (agent-script's nextMove, bound to a playbook). */
export type Decide = (conv: Conversation) => Move

export interface RecordedRequest {
  /** When it arrived (ms since the epoch). */
  at: number
  method: string
  path: string
  /** What the request was: an agent turn, a request without tools, a token count, the probe, or unknown. */
  kind: 'turn' | 'side' | 'count_tokens' | 'probe' | 'unknown'
  stream: boolean
  model: string
  /** Claude Code's x-claude-code-session-id: one per CLI run. */
  session: string
  /** The x-api-key it carried (the account it spends from). */
  apiKey: string
  /** The names of the tools offered. */
  tools: string[]
  /** Every tool call of the conversation so far, with its result. */
  history: Conversation['history']
  /** What was answered. */
  move?: Move
  /** Why the script could not answer (the reply then says so and ends the turn). */
  error?: string
  /** The raw request body. */
  body?: any
  /** The agent closed the request before the answer was sent (it cancelled the turn). */
  aborted?: boolean
  /** The usage the answer reported; absent when the request was refused or not a message. */
  usage?: Usage
  /** The HTTP status the request was refused with, if it was. */
  refused?: number
}

export interface AnthropicModelOptions {
  /**
   * The messages the agent's mind reads; default all of it. A session prompted
   * many times (ACP) carries every earlier turn: an ACP test keeps the prompt
   * and the calls since agentd's last prompt, as a mind starting each turn afresh.
   */
  turnInput?: (messages: MessageParam[]) => MessageParam[]
  /** Awaited before a turn's answer is sent: a test holds the model mid-turn with it. */
  beforeAnswer?: (rec: RecordedRequest) => Promise<void> | void
  /** The usage each answer reports, as the API reports it (default 100 in, 20 out, no cache). */
  usage?: Usage
  /**
   * Refuses a request the way the API does when it is limited: a status (429,
   * 529), headers (retry-after) and the API's error body; undefined answers it.
   */
  refuse?: (req: { apiKey: string; model: string }) => Refusal | undefined
}

/** Token counts as the Messages API reports them. */
export interface Usage {
  input_tokens: number
  output_tokens: number
  cache_creation_input_tokens: number
  cache_read_input_tokens: number
}

export interface Refusal {
  status: number
  headers?: Record<string, string>
  type: string
  message: string
}

export interface ScriptedAnthropicModel {
  /** The base URL for ANTHROPIC_BASE_URL. */
  url: string
  requests: RecordedRequest[]
  /** The agent turns only. */
  turns: () => RecordedRequest[]
  /** Errors the script raised (each also ended its CLI turn with a text saying so). */
  errors: () => string[]
  /** Every tool call with its result, once each, in order (from the last turn of each session). */
  toolCalls: () => Array<{ session: string; call: ToolCall; outcome: ToolOutcome }>
  close: () => Promise<void>
}

export interface ContentBlock {
  type: string
  text?: string
  id?: string
  name?: string
  input?: unknown
  tool_use_id?: string
  content?: unknown
  is_error?: boolean
}
export interface MessageParam {
  role: string
  content: string | ContentBlock[]
}

/** Starts the endpoint on 127.0.0.1 and a random port. */
export async function startAnthropicModel(decide: Decide, o: AnthropicModelOptions = {}): Promise<ScriptedAnthropicModel> {
  const requests: RecordedRequest[] = []
  let replies = 0
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      try {
        handle(req, res, Buffer.concat(chunks).toString('utf8'))
      } catch (err) {
        sendJson(res, 500, { type: 'error', error: { type: 'api_error', message: `scripted model: ${(err as Error).message}` } })
      }
    })
  })

  function handle(req: IncomingMessage, res: ServerResponse, raw: string): void {
    const path = (req.url ?? '/').split('?')[0]
    const session = header(req, 'x-claude-code-session-id')
    const base = {
      at: Date.now(),
      method: req.method ?? '',
      path,
      stream: false,
      model: '',
      session,
      apiKey: header(req, 'x-api-key'),
      tools: [],
      history: []
    }
    if (path === '/' && (req.method === 'HEAD' || req.method === 'GET')) {
      requests.push({ ...base, kind: 'probe' })
      res.writeHead(200, { 'content-type': 'text/plain' }).end()
      return
    }
    const body = req.method === 'POST' ? parseBody(raw) : undefined
    if (path === '/v1/messages/count_tokens' && body != null) {
      requests.push({ ...base, kind: 'count_tokens', model: String(body.model ?? '') })
      sendJson(res, 200, { input_tokens: Math.max(1, Math.ceil(raw.length / 4)) })
      return
    }
    if (path !== '/v1/messages' || body == null) {
      requests.push({ ...base, kind: 'unknown' })
      sendJson(res, 404, {
        type: 'error',
        error: { type: 'not_found_error', message: `the scripted model does not serve ${req.method ?? ''} ${path}` }
      })
      return
    }
    const stream = body.stream === true
    const model = String(body.model ?? 'scripted')
    const tools = Array.isArray(body.tools) ? body.tools.map((t: { name?: unknown }) => String(t.name)) : []
    const messages: MessageParam[] = Array.isArray(body.messages) ? body.messages : []
    const record: RecordedRequest = { ...base, kind: tools.length > 0 ? 'turn' : 'side', stream, model, tools, history: [], body }
    requests.push(record)
    const refusal = o.refuse?.({ apiKey: record.apiKey, model })
    if (refusal != null) {
      record.refused = refusal.status
      res
        .writeHead(refusal.status, { 'content-type': 'application/json', ...refusal.headers })
        .end(JSON.stringify({ type: 'error', error: { type: refusal.type, message: refusal.message } }))
      return
    }
    let move: Move
    if (record.kind === 'side') {
      // A request without tools is not the agent loop (a title, a summary): answer briefly.
      move = { kind: 'answer', text: 'OK.' }
    } else {
      try {
        const conv = conversation(o.turnInput != null ? o.turnInput(messages) : messages, systemText(body.system), tools)
        record.history = conv.history
        move = decide(conv)
      } catch (err) {
        record.error = (err as Error).message
        move = { kind: 'answer', text: `The scripted model cannot go on: ${record.error}` }
      }
    }
    record.move = move
    const id = `msg_scripted_${++replies}`
    const usage = o.usage ?? DEFAULT_USAGE
    const answer = (): void => {
      record.usage = usage
      reply(res, move, model, stream, id, usage)
    }
    if (o.beforeAnswer == null || record.kind !== 'turn') {
      answer()
      return
    }
    res.once('close', () => {
      if (!res.writableEnded) record.aborted = true
    })
    void Promise.resolve(o.beforeAnswer(record)).then(
      () => {
        if (record.aborted !== true) answer()
      },
      () => {
        res.destroy()
      }
    )
  }

  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    turns: () => requests.filter(r => r.kind === 'turn'),
    errors: () => requests.flatMap(r => (r.error != null ? [r.error] : [])),
    toolCalls: () => {
      const last = new Map<string, RecordedRequest>()
      for (const r of requests) if (r.kind === 'turn') last.set(r.session, r)
      return [...last.values()].flatMap(r => r.history.map(h => ({ session: r.session, ...h })))
    },
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>(resolve => server.close(() => resolve()))
    }
  }
}

/** The conversation a Messages request carries: the prompt, the tools, each tool call with its result. */
export function conversation(messages: MessageParam[], system: string, tools: string[]): Conversation {
  const blocks = (m: MessageParam): ContentBlock[] =>
    typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : Array.isArray(m.content) ? m.content : []
  const firstUser = messages.find(m => m.role === 'user')
  // Claude Code puts context in <system-reminder> blocks before the prompt.
  const prompt = (firstUser != null ? blocks(firstUser) : [])
    .filter(b => b.type === 'text' && !(b.text ?? '').trimStart().startsWith('<system-reminder>'))
    .map(b => b.text ?? '')
    .join('\n')
  const calls = new Map<string, ToolCall>()
  const order: string[] = []
  const outcomes = new Map<string, ToolOutcome>()
  for (const m of messages) {
    for (const b of blocks(m)) {
      if (m.role === 'assistant' && b.type === 'tool_use' && b.id != null) {
        calls.set(b.id, { name: String(b.name), input: (b.input ?? {}) as Record<string, unknown> })
        order.push(b.id)
      } else if (m.role === 'user' && b.type === 'tool_result' && b.tool_use_id != null) {
        outcomes.set(b.tool_use_id, { text: resultText(b.content), isError: b.is_error === true })
      }
    }
  }
  const history = order.map(id => {
    const outcome = outcomes.get(id)
    if (outcome == null) throw new Error(`tool call ${id} (${calls.get(id)?.name ?? '?'}) has no result in the conversation`)
    return { call: calls.get(id) as ToolCall, outcome }
  })
  const cwd = /Primary working directory: *(\S.*)$/m.exec(system)?.[1]?.trim()
  return { prompt, tools, cwd, history }
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  return content.map((c: ContentBlock) => (c.type === 'text' ? (c.text ?? '') : `[${c.type}]`)).join('\n')
}

function systemText(system: unknown): string {
  if (typeof system === 'string') return system
  return Array.isArray(system) ? system.map((b: ContentBlock) => b.text ?? '').join('\n') : ''
}

function parseBody(raw: string): Record<string, any> | undefined {
  try {
    const v = JSON.parse(raw) as unknown
    return v != null && typeof v === 'object' ? (v as Record<string, any>) : undefined
  } catch {
    return undefined
  }
}

function header(req: IncomingMessage, name: string): string {
  const v = req.headers[name]
  return Array.isArray(v) ? (v[0] ?? '') : (v ?? '')
}

/** The content blocks of a move: a sentence and a tool call, or the final text. */
function contentOf(move: Move, id: string): ContentBlock[] {
  if (move.kind === 'answer') return [{ type: 'text', text: move.text }]
  return [
    { type: 'text', text: move.say },
    { type: 'tool_use', id: `toolu_${id}`, name: move.call.name, input: move.call.input }
  ]
}

const DEFAULT_USAGE: Usage = { input_tokens: 100, output_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }

function reply(res: ServerResponse, move: Move, model: string, stream: boolean, id: string, usage: Usage): void {
  const content = contentOf(move, id)
  const stopReason = move.kind === 'call' ? 'tool_use' : 'end_turn'
  if (!stream) {
    sendJson(res, 200, { id, type: 'message', role: 'assistant', model, content, stop_reason: stopReason, stop_sequence: null, usage })
    return
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
  const event = (type: string, data: Record<string, unknown>): void => {
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`)
  }
  event('message_start', {
    message: {
      id,
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...usage, output_tokens: 1 }
    }
  })
  content.forEach((block, index) => {
    if (block.type === 'tool_use') {
      event('content_block_start', { index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } })
      event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } })
    } else {
      event('content_block_start', { index, content_block: { type: 'text', text: '' } })
      event('content_block_delta', { index, delta: { type: 'text_delta', text: block.text ?? '' } })
    }
    event('content_block_stop', { index })
  })
  event('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } })
  event('message_stop', {})
  res.end()
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
}
