// STAND-IN FOR THE MODEL ONLY. A scripted model endpoint on 127.0.0.1 that
// speaks the Gemini API (generativelanguage v1beta) as Gemini CLI uses it when
// GOOGLE_GEMINI_BASE_URL points here and GEMINI_API_KEY is anything. The CLI,
// its tools, its MCP client and shell are the real ones; only the model's
// answers are scripted: agent-script.ts picks the next call from the function
// responses in the conversation, in Gemini CLI's tool names (GEMINI_TOOLS).
//
// Routes (what Gemini CLI 0.61 sends):
//   POST /v1beta/models/<model>:streamGenerateContent?alt=sse  one agent turn, answered as one SSE event
//   POST /v1beta/models/<model>:generateContent                side calls (the model router's complexity
//        classifier, the next-speaker check): JSON that fits the request's responseJsonSchema
//   POST /v1beta/models/<model>:countTokens                    a rough count
// Anything else is a 404 in the API's error shape. Every request is recorded.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { reportsFailedExit, scriptedTurn, type Conversation, type Playbook, type ScriptedTurn, type ToolDialect } from './agent-script.js'

export interface GeminiRequestRecord {
  method: string
  path: string
  /** The model named in the path, e.g. gemini-2.5-pro. */
  model: string
  /** streamGenerateContent, generateContent, countTokens, or the unknown path's last segment. */
  rpc: string
  body: any
  /** For an agent turn: the steps the conversation held and the move answered. */
  turn?: ScriptedTurn
  /** That move as the function call sent, or the final text. */
  reply?: { name: string; args: Record<string, unknown> } | { text: string }
  /** The CLI closed the request before the answer was sent (it cancelled the turn). */
  aborted?: boolean
}

export interface GeminiStandIn {
  /** For GOOGLE_GEMINI_BASE_URL. */
  readonly url: string
  readonly requests: GeminiRequestRecord[]
  /** The agent turns: streamGenerateContent requests whose body offered tools. */
  turns: () => GeminiRequestRecord[]
  /** Errors the script raised (each also ended its CLI turn with a text saying so). */
  errors: () => string[]
  close: () => Promise<void>
}

export interface GeminiStandInOptions {
  playbook: Playbook
  /** The contents the mind reads; default all (see openai-responses.ts's turnInput). */
  turnInput?: (contents: any[]) => any[]
  /** Awaited before an agent turn's answer is sent: a test holds the model mid-turn with it. */
  beforeAnswer?: (record: GeminiRequestRecord) => Promise<void> | void
}

/** Gemini CLI: the agency MCP tools as mcp_agency_<tool>, write_file and replace for files, run_shell_command. */
export const GEMINI_TOOLS: ToolDialect = {
  mcp: tool => ({ name: `mcp_agency_${tool}` }),
  write: (path, content) => ({ name: 'write_file', input: { file_path: path, content } }),
  edit: (path, find, replace) => ({ name: 'replace', input: { file_path: path, old_string: find, new_string: replace } }),
  shell: command => ({ name: 'run_shell_command', input: { command, description: `run ${command.split(' ')[0]}` } })
}

export async function startGeminiStandIn(opts: GeminiStandInOptions): Promise<GeminiStandIn> {
  const requests: GeminiRequestRecord[] = []
  const server = createServer((req, res) => {
    readBody(req)
      .then(text => {
        answer(req, res, text, opts, requests)
      })
      .catch(err => {
        sendJson(res, 500, apiError(500, `stand-in failed: ${(err as Error).message}`, 'INTERNAL'))
      })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    turns: () => requests.filter(r => r.rpc === 'streamGenerateContent' && Array.isArray(r.body?.tools)),
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
  opts: GeminiStandInOptions,
  requests: GeminiRequestRecord[]
): void {
  const url = new URL(req.url ?? '/', 'http://stand-in')
  const m = /^\/v1(?:beta|alpha)?\/models\/([^/:]+):(\w+)$/.exec(url.pathname)
  let body: any
  try {
    body = text === '' ? {} : JSON.parse(text)
  } catch {
    body = text
  }
  const record: GeminiRequestRecord = {
    method: req.method ?? '',
    path: url.pathname + url.search,
    model: m?.[1] ?? '',
    rpc: m?.[2] ?? url.pathname.split('/').at(-1) ?? '',
    body
  }
  requests.push(record)
  if (req.method !== 'POST' || m == null) {
    sendJson(res, 404, apiError(404, `the stand-in has no ${req.method ?? ''} ${url.pathname}`, 'NOT_FOUND'))
    return
  }
  switch (record.rpc) {
    case 'streamGenerateContent': {
      const contents: any[] = Array.isArray(body?.contents) ? body.contents : []
      const reply = agentTurn(opts.turnInput != null ? { ...body, contents: opts.turnInput(contents) } : body, opts.playbook, record)
      const turn = requests.length
      const send = (): void => {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
        res.end(`data: ${JSON.stringify(response(partsOf(reply, turn), body))}\n\n`)
      }
      if (opts.beforeAnswer == null || !Array.isArray(body?.tools)) {
        send()
        return
      }
      res.once('close', () => {
        if (!res.writableEnded) record.aborted = true
      })
      void Promise.resolve(opts.beforeAnswer(record)).then(
        () => {
          if (record.aborted !== true) send()
        },
        () => {
          res.destroy()
        }
      )
      return
    }
    case 'generateContent': {
      // Side calls ask for JSON of a given shape; an agent turn without streaming gets the script.
      const schema = body?.generationConfig?.responseJsonSchema ?? body?.generationConfig?.responseSchema
      const parts =
        schema != null ? [{ text: JSON.stringify(valueFor(schema)) }] : partsOf(agentTurn(body, opts.playbook, record), requests.length)
      sendJson(res, 200, response(parts, body))
      return
    }
    case 'countTokens':
      sendJson(res, 200, { totalTokens: roughTokens(body) })
      return
    default:
      sendJson(res, 404, apiError(404, `the stand-in does not implement ${record.rpc}`, 'NOT_FOUND'))
  }
}

/** The scripted next move, as Gemini CLI's function call or the final text. */
function agentTurn(
  body: any,
  playbook: Playbook,
  record: GeminiRequestRecord
): { name: string; args: Record<string, unknown> } | { text: string } {
  record.turn = scriptedTurn(() => conversation(body), playbook, GEMINI_TOOLS)
  const move = record.turn.move
  record.reply = move.kind === 'call' ? { name: move.call.name, args: move.call.input } : { text: move.text }
  return record.reply
}

/** The conversation the contents carry: the user's text, the functions offered, each call with its response. */
export function conversation(body: any): Conversation {
  const contents: any[] = body?.contents ?? []
  const prompt = contents
    .filter(c => c?.role === 'user')
    .flatMap(c => (c.parts ?? []).map((p: any) => (typeof p?.text === 'string' ? p.text : '')))
    .join('\n')
  const tools = (body?.tools ?? []).flatMap((t: any) => (t.functionDeclarations ?? []).map((f: any) => String(f.name)))
  const shell = GEMINI_TOOLS.shell('').name
  const history = pastCalls(contents).map(c => ({
    call: { name: c.name, input: c.args },
    outcome: { text: c.output, isError: c.failed || (c.name === shell && reportsFailedExit(c.output)) }
  }))
  return { prompt, tools, history }
}

/** Pairs each functionCall of a model turn with the functionResponse the CLI sent back for it. */
export function pastCalls(contents: any[]): Array<{ name: string; args: Record<string, unknown>; output: string; failed: boolean }> {
  const calls: Array<{ name: string; args: Record<string, unknown>; id?: string }> = []
  const responses: Array<{ name: string; id?: string; response: unknown }> = []
  for (const c of contents) {
    for (const p of c?.parts ?? []) {
      if (p?.functionCall != null) calls.push({ name: p.functionCall.name, args: p.functionCall.args ?? {}, id: p.functionCall.id })
      if (p?.functionResponse != null)
        responses.push({ name: p.functionResponse.name, id: p.functionResponse.id, response: p.functionResponse.response })
    }
  }
  const used = new Set<number>()
  return calls.map(call => {
    let i = call.id != null ? responses.findIndex((r, j) => !used.has(j) && r.id === call.id) : -1
    if (i < 0) i = responses.findIndex((r, j) => !used.has(j) && r.name === call.name)
    if (i >= 0) used.add(i)
    const response = i >= 0 ? responses[i].response : undefined
    return { name: call.name, args: call.args, output: responseText(response), failed: typeof (response as any)?.error === 'string' }
  })
}

/** The text of a function response: Gemini CLI sends {output: "..."} or {error: "..."}. */
function responseText(response: unknown): string {
  if (response == null) return ''
  if (typeof response === 'string') return response
  const r = response as Record<string, unknown>
  if (typeof r.output === 'string') return r.output
  if (typeof r.error === 'string') return `error: ${r.error}`
  return JSON.stringify(response)
}

/** The reply's parts; a call's id is the turn's place among the requests, unique on this server. */
function partsOf(reply: { name: string; args: Record<string, unknown> } | { text: string }, turn: number): any[] {
  if ('text' in reply) return [{ text: reply.text }]
  return [{ functionCall: { id: `stand-in-${turn}`, name: reply.name, args: reply.args } }]
}

function response(parts: any[], request: any): any {
  const prompt = roughTokens(request)
  const out = Math.max(1, Math.ceil(JSON.stringify(parts).length / 4))
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: prompt, candidatesTokenCount: out, totalTokenCount: prompt + out },
    modelVersion: 'stand-in'
  }
}

/**
 * A value that fits a response schema (OpenAPI-style with upper-case types, or
 * JSON Schema). For the router's classifier this is a middling complexity score;
 * for the next-speaker check the first enum value, "user": the turn is over.
 */
function valueFor(schema: any): unknown {
  const type = String(schema?.type ?? (schema?.properties != null ? 'object' : 'string')).toLowerCase()
  if (Array.isArray(schema?.enum) && schema.enum.length > 0) return schema.enum[0]
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {}
      for (const [k, v] of Object.entries(schema.properties ?? {})) out[k] = valueFor(v)
      return out
    }
    case 'array':
      return []
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? Math.max(schema.minimum, 30) : 30
    case 'boolean':
      return false
    default:
      return 'scripted stand-in answer'
  }
}

function roughTokens(body: unknown): number {
  return Math.max(1, Math.ceil(JSON.stringify(body ?? '').length / 4))
}

function apiError(code: number, message: string, status: string): unknown {
  return { error: { code, message, status } }
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
