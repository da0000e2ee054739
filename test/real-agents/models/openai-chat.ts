// STAND-IN FOR THE MODEL ONLY. A scripted model endpoint on 127.0.0.1 that
// speaks the OpenAI Chat Completions API, for agent CLIs that take an
// OpenAI-compatible base URL (Pi: a provider with "api": "openai-completions"
// in ~/.pi/agent/models.json). The CLI and its tools are real; only the model's
// answers are scripted: agent-script.ts picks the next call from the tool
// results in the conversation, in the CLI's own tool names (PI_TOOLS).
//
// Routes:
//   POST /v1/chat/completions  an agent turn: SSE chunks when "stream" is true, else one JSON completion
//   GET  /v1/models            the one model
// Anything else is a 404 in the API's error shape. Every request is recorded.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { reportsFailedExit, scriptedTurn, type Conversation, type Playbook, type ScriptedTurn, type ToolDialect } from './agent-script.js'

export interface ChatRequestRecord {
  method: string
  path: string
  body: any
  /** For an agent turn: the steps the conversation held and the move answered. */
  turn?: ScriptedTurn
  /** That move as the tool call sent, or the final text. */
  reply?: { name: string; args: Record<string, unknown> } | { text: string }
  /** The CLI closed the request before the answer was sent (it cancelled the turn). */
  aborted?: boolean
}

export interface ChatStandIn {
  /** The base URL a client appends /chat/completions to: http://127.0.0.1:<port>/v1 */
  readonly baseUrl: string
  readonly model: string
  readonly requests: ChatRequestRecord[]
  /** The agent turns: chat completions that offered tools. */
  turns: () => ChatRequestRecord[]
  /** Errors the script raised (each also ended its CLI turn with a text saying so). */
  errors: () => string[]
  close: () => Promise<void>
}

export interface ChatStandInOptions {
  playbook: Playbook
  dialect: ToolDialect
  /** The model id to report. Default "scripted". */
  model?: string
  /** The messages the mind reads; default all (see openai-responses.ts's turnInput). */
  turnInput?: (messages: any[]) => any[]
  /** Awaited before an agent turn's answer is sent: a test holds the model mid-turn with it. */
  beforeAnswer?: (record: ChatRequestRecord) => Promise<void> | void
}

/** Pi's built-in tools: no MCP, so every coordination step is an `agency` command in bash; files go through write and edit. */
export const PI_TOOLS: ToolDialect = {
  write: (path, content) => ({ name: 'write', input: { path, content } }),
  edit: (path, find, replace) => ({ name: 'edit', input: { path, edits: [{ oldText: find, newText: replace }] } }),
  shell: command => ({ name: 'bash', input: { command } })
}

export async function startChatStandIn(opts: ChatStandInOptions): Promise<ChatStandIn> {
  const model = opts.model ?? 'scripted'
  const requests: ChatRequestRecord[] = []
  const server = createServer((req, res) => {
    readBody(req)
      .then(text => {
        answer(req, res, text, opts, model, requests)
      })
      .catch(err => {
        sendJson(res, 500, apiError(`stand-in failed: ${(err as Error).message}`, 'server_error'))
      })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    model,
    requests,
    turns: () => requests.filter(r => r.turn != null),
    errors: () => requests.flatMap(r => (r.turn?.error != null ? [r.turn.error] : [])),
    close: async () => {
      await closeServer(server)
    }
  }
}

function answer(
  req: IncomingMessage,
  res: ServerResponse,
  text: string,
  opts: ChatStandInOptions,
  model: string,
  requests: ChatRequestRecord[]
): void {
  const path = new URL(req.url ?? '/', 'http://stand-in').pathname
  let body: any
  try {
    body = text === '' ? {} : JSON.parse(text)
  } catch {
    body = text
  }
  const record: ChatRequestRecord = { method: req.method ?? '', path, body }
  requests.push(record)
  if (req.method === 'GET' && path === '/v1/models') {
    sendJson(res, 200, { object: 'list', data: [{ id: model, object: 'model', created: 0, owned_by: 'stand-in' }] })
    return
  }
  if (req.method !== 'POST' || path !== '/v1/chat/completions') {
    sendJson(res, 404, apiError(`the stand-in has no ${req.method ?? ''} ${path}`, 'not_found'))
    return
  }
  const tools: string[] = (body?.tools ?? []).map((t: any) => String(t?.function?.name ?? t?.name ?? ''))
  const messages: any[] = Array.isArray(body?.messages) ? body.messages : []
  record.turn = scriptedTurn(
    () => conversation(opts.turnInput != null ? opts.turnInput(messages) : messages, tools, opts.dialect),
    opts.playbook,
    opts.dialect
  )
  if (opts.beforeAnswer == null || !Array.isArray(body?.tools)) {
    send(res, body, record, model, requests.length)
    return
  }
  res.once('close', () => {
    if (!res.writableEnded) record.aborted = true
  })
  const n = requests.length
  void Promise.resolve(opts.beforeAnswer(record)).then(
    () => {
      if (record.aborted !== true) send(res, body, record, model, n)
    },
    () => {
      res.destroy()
    }
  )
}

/** The scripted move of an agent turn, as one completion or its SSE chunks. */
function send(res: ServerResponse, body: any, record: ChatRequestRecord, model: string, n: number): void {
  if (record.turn == null) throw new Error('send: the request has no scripted turn')
  const move = record.turn.move
  const reply = (record.reply = move.kind === 'call' ? { name: move.call.name, args: move.call.input } : { text: move.text })
  const id = `chatcmpl-stand-in-${n}`
  const created = Math.floor(Date.now() / 1000)
  const toolCall =
    'text' in reply
      ? undefined
      : { id: `call_${n}`, type: 'function', function: { name: reply.name, arguments: JSON.stringify(reply.args) } }
  const content = 'text' in reply ? reply.text : null
  const finish = toolCall != null ? 'tool_calls' : 'stop'
  const usage = {
    prompt_tokens: roughTokens(body),
    completion_tokens: roughTokens(reply),
    total_tokens: roughTokens(body) + roughTokens(reply)
  }
  if (body?.stream !== true) {
    sendJson(res, 200, {
      id,
      object: 'chat.completion',
      created,
      model,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content, ...(toolCall != null ? { tool_calls: [toolCall] } : {}) },
          finish_reason: finish
        }
      ],
      usage
    })
    return
  }
  const chunk = (delta: unknown, finishReason: string | null, extra: Record<string, unknown> = {}): string =>
    `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finishReason }], ...extra })}\n\n`
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
  res.write(chunk({ role: 'assistant', content: content ?? '' }, null))
  if (toolCall != null) res.write(chunk({ tool_calls: [{ index: 0, ...toolCall }] }, null))
  res.write(chunk({}, finish))
  if (body?.stream_options?.include_usage === true)
    res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [], usage })}\n\n`)
  res.end('data: [DONE]\n\n')
}

/**
 * The conversation the messages carry: the user's text, the tools offered, each call with its result (a reported non-zero exit is a
 * failure).
 */
export function conversation(messages: any[], tools: string[], dialect: ToolDialect): Conversation {
  const prompt = messages
    .filter(m => m?.role === 'user' || m?.role === 'system')
    .map(m => contentText(m.content))
    .join('\n')
  const shell = dialect.shell('').name
  const history = pastCalls(messages).map(c => ({
    call: { name: c.name, input: c.args },
    outcome: { text: c.output, isError: c.name === shell && reportsFailedExit(c.output) }
  }))
  return { prompt, tools, history }
}

/** Pairs each tool call of an assistant message with the tool message that answers it. */
export function pastCalls(messages: any[]): Array<{ name: string; args: Record<string, unknown>; output: string }> {
  const results = new Map<string, string>()
  for (const m of messages) if (m?.role === 'tool') results.set(String(m.tool_call_id), contentText(m.content))
  const calls: Array<{ name: string; args: Record<string, unknown>; output: string }> = []
  for (const m of messages) {
    if (m?.role !== 'assistant') continue
    for (const c of m.tool_calls ?? []) {
      let args: Record<string, unknown> = {}
      try {
        args = JSON.parse(c?.function?.arguments ?? '{}')
      } catch {
        /* keep {} */
      }
      calls.push({ name: String(c?.function?.name ?? ''), args, output: results.get(String(c?.id)) ?? '' })
    }
  }
  return calls
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content
  if (Array.isArray(content)) return content.map(p => (typeof p === 'string' ? p : typeof p?.text === 'string' ? p.text : '')).join('')
  return content == null ? '' : JSON.stringify(content)
}

function roughTokens(value: unknown): number {
  return Math.max(1, Math.ceil(JSON.stringify(value ?? '').length / 4))
}

function apiError(message: string, type: string): unknown {
  return { error: { message, type, param: null, code: null } }
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify(value))
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections()
  await new Promise<void>(resolve => server.close(() => resolve()))
}
