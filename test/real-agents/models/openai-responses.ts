// A STAND-IN FOR THE MODEL ONLY: a scripted model endpoint on 127.0.0.1 that
// speaks the OpenAI Responses API (POST /v1/responses, streamed as server-sent
// events) to a real agent CLI (Codex CLI, GitHub Copilot CLI). Everything else
// in these tests is real: the CLI, its tools, its MCP client, agentd, git.
//
// Each request is one turn of the CLI's agent loop. The endpoint reads the
// input items the CLI sent (its earlier function, custom and tool-search calls
// and their outputs) into a conversation, asks agent-script.ts what the agent
// does next, and answers with that call in the CLI's own tool names (CODEX_TOOLS,
// COPILOT_TOOLS): an `agency` MCP tool, the shell tool, apply_patch (a freeform
// custom tool) for files; or with the final assistant message. Requests that do
// not offer the CLI's shell tool (titles, summaries and other side requests) get
// a short message, and GET /v1/models a one-model list, so nothing waits. Every
// request is recorded for the test to assert on.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import {
  reportsFailedExit,
  scriptedTurn,
  toolKey,
  type Conversation,
  type Playbook,
  type ScriptedTurn,
  type ToolCall,
  type ToolDialect
} from './agent-script.js'

/** The model id the endpoint lists and answers as. */
export const MODEL_ID = 'gpt-5.5'

/** One request the CLI made, as received, with what was answered. */
export interface RecordedRequest {
  method: string
  path: string
  headers: Record<string, string | string[] | undefined>
  /** The parsed JSON body, if there was one. */
  body: any
  /** The agent's turn, and how its call went out on the wire; absent for side requests. */
  turn?: ScriptedTurn & { call?: WireCall }
  /** The CLI closed the request before the answer was sent (it cancelled the turn). */
  aborted?: boolean
}

/** How a call went out on the wire. */
export interface WireCall {
  type: 'function_call' | 'custom_tool_call' | 'tool_search_call'
  name: string
  namespace?: string
  callId: string
  /** JSON arguments (function_call, tool_search_call) or the freeform input (custom_tool_call). */
  payload: string
}

export interface ResponsesModel {
  /** The base URL a CLI is given: http://127.0.0.1:PORT/v1 */
  baseUrl: string
  requests: RecordedRequest[]
  /** The agent turns only, in order. */
  turns: () => Array<NonNullable<RecordedRequest['turn']>>
  /** Errors the script raised (each also ended its CLI turn with a text saying so). */
  errors: () => string[]
  close: () => Promise<void>
}

export interface ResponsesModelOptions {
  playbook: Playbook
  dialect: ToolDialect
  /**
   * The input the agent's mind reads; default all of it. A session prompted
   * many times (ACP) carries every earlier turn: an ACP test keeps the prompt
   * and the calls since agentd's last prompt, as a mind starting each turn afresh.
   */
  turnInput?: (input: unknown[]) => unknown[]
  /** Awaited before a turn's answer is sent: a test holds the model mid-turn with it. */
  beforeAnswer?: (rec: RecordedRequest) => Promise<void> | void
}

/** apply_patch, a freeform (custom) tool in both CLIs: its input is the patch. */
const applyPatch = (patch: string): ToolCall => ({ name: 'apply_patch', input: { input: patch } })

/** Codex: the agency MCP tools in the namespace mcp__agency, loaded by its client-side tool_search; exec_command; apply_patch. */
export const CODEX_TOOLS: ToolDialect = {
  mcp: tool => ({ namespace: 'mcp__agency', name: tool }),
  // BM25 over the tools' names and descriptions: the ones the loop uses.
  toolSearch: { name: 'tool_search', input: { query: 'agency status read_inbox ready claim integrate done', limit: 20 } },
  write: (path, content) => applyPatch(addFilePatch(path, content)),
  edit: (path, find, replace) => applyPatch(updateFilePatch(path, find, replace)),
  shell: command => ({ name: 'exec_command', input: { cmd: command, yield_time_ms: 30_000 } })
}

/** Copilot: the agency MCP tools as functions `agency-<tool>`; bash; apply_patch. */
export const COPILOT_TOOLS: ToolDialect = {
  mcp: tool => ({ name: `agency-${tool}` }),
  write: (path, content) => applyPatch(addFilePatch(path, content)),
  edit: (path, find, replace) => applyPatch(updateFilePatch(path, find, replace)),
  shell: command => ({ name: 'bash', input: { command, description: command.slice(0, 100) } })
}

export async function startResponsesModel(o: ResponsesModelOptions): Promise<ResponsesModel> {
  const requests: RecordedRequest[] = []
  // What each call id this endpoint issued was: the model remembers what it asked for.
  const issued = new Map<string, ToolCall>()
  let seq = 0
  const server: Server = createServer((req, res) => {
    void readBody(req)
      .then(text => {
        let body: any
        try {
          body = text === '' ? undefined : JSON.parse(text)
        } catch {
          body = undefined
        }
        const rec: RecordedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body }
        requests.push(rec)
        const path = (req.url ?? '').split('?')[0]
        if (req.method === 'GET' && path.endsWith('/models'))
          return sendJson(res, 200, { object: 'list', data: [{ id: MODEL_ID, object: 'model', created: 0, owned_by: 'scripted' }] })
        if (req.method === 'POST' && path.endsWith('/responses') && body != null) return answerTurn(res, rec, body)
        sendJson(res, 404, { error: { message: `the scripted model does not serve ${req.method ?? ''} ${path}`, type: 'not_found' } })
      })
      .catch(err => {
        if (!res.headersSent) sendJson(res, 500, { error: { message: String(err) } })
      })
  })

  function answerTurn(res: ServerResponse, rec: RecordedRequest, body: any): void {
    const offered = offeredTools(body.tools, body.input)
    const stream = new SseResponse(res, `resp_${++seq}`)
    if (!offered.has(toolKey(o.dialect.shell('')))) {
      // Not the agent's turn (a title, a summary, a check): a short answer.
      stream.message('ok')
      return
    }
    const input: unknown[] = Array.isArray(body.input) ? body.input : []
    const read = o.turnInput != null ? { ...body, input: o.turnInput(input) } : body
    const turn = scriptedTurn(() => conversation(read, offered, issued, o.dialect), o.playbook, o.dialect)
    const callId = `call_${seq}`
    const call = turn.move.kind === 'call' ? wireCall(turn.move.call, offered, callId) : undefined
    rec.turn = { ...turn, call }
    const send = (): void => {
      if (turn.move.kind === 'answer') {
        stream.message(turn.move.text)
        return
      }
      issued.set(callId, turn.move.call)
      stream.toolCall(call as WireCall)
    }
    if (o.beforeAnswer == null) {
      send()
      return
    }
    res.once('close', () => {
      if (!res.writableEnded) rec.aborted = true
    })
    void Promise.resolve(o.beforeAnswer(rec)).then(
      () => {
        if (rec.aborted !== true) send()
      },
      () => {
        res.destroy()
      }
    )
  }

  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    turns: () => requests.flatMap(r => (r.turn != null ? [r.turn] : [])),
    errors: () => requests.flatMap(r => (r.turn?.error != null ? [r.turn.error] : [])),
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>(resolve => server.close(() => resolve()))
    }
  }
}

// ---------------------------------------------------------------- tools offered

/**
 * The request's tools, and those a tool search loaded earlier in the
 * conversation, by toolKey, each with its type (function, custom, tool_search).
 */
export function offeredTools(tools: unknown, input?: unknown): Map<string, string> {
  const out = new Map<string, string>()
  const loaded = (Array.isArray(input) ? input : []).flatMap((i: any) =>
    i?.type === 'tool_search_output' && Array.isArray(i.tools) ? i.tools : []
  )
  for (const t of [...(Array.isArray(tools) ? tools : []), ...loaded] as any[]) {
    if (t?.type === 'tool_search') out.set('tool_search', 'tool_search')
    else if (t?.type === 'namespace' && Array.isArray(t.tools)) {
      for (const inner of t.tools)
        if (typeof inner?.name === 'string')
          out.set(toolKey({ namespace: String(t.name), name: inner.name }), String(inner.type ?? 'function'))
    } else if (typeof t?.name === 'string') out.set(t.name, String(t.type ?? 'function'))
  }
  return out
}

/** A call as the wire item for the tool it names: a custom tool takes its freeform input, the search its arguments. */
export function wireCall(call: ToolCall, offered: Map<string, string>, callId: string): WireCall {
  const type = offered.get(toolKey(call))
  if (type === 'tool_search') return { type: 'tool_search_call', name: call.name, callId, payload: JSON.stringify(call.input) }
  if (type === 'custom') return { type: 'custom_tool_call', name: call.name, callId, payload: String(call.input.input) }
  return { type: 'function_call', name: call.name, namespace: call.namespace, callId, payload: JSON.stringify(call.input) }
}

/** An apply_patch that adds one file (the grammar Codex and Copilot share). */
function addFilePatch(path: string, content: string): string {
  return ['*** Begin Patch', `*** Add File: ${path}`, ...patchLines(content).map(l => `+${l}`), '*** End Patch', ''].join('\n')
}

/** An apply_patch that replaces `find` with `replace` in one file. */
function updateFilePatch(path: string, find: string, replace: string): string {
  return [
    '*** Begin Patch',
    `*** Update File: ${path}`,
    '@@',
    ...patchLines(find).map(l => `-${l}`),
    ...patchLines(replace).map(l => `+${l}`),
    '*** End Patch',
    ''
  ].join('\n')
}

function patchLines(text: string): string[] {
  return (text.endsWith('\n') ? text.slice(0, -1) : text).split('\n')
}

// ---------------------------------------------------------------- the conversation

/**
 * The conversation the input items carry: the user's text (the prompt), the
 * tools offered, and each call with its output, oldest first. A call this
 * endpoint issued is read as it was issued; a shell output that reports a
 * non-zero exit is a failure.
 */
export function conversation(body: any, offered: Map<string, string>, issued: Map<string, ToolCall>, dialect: ToolDialect): Conversation {
  const items: any[] = Array.isArray(body?.input) ? body.input : []
  const prompt = items
    .filter(i => i?.type === 'message' || (i?.type == null && i?.role != null))
    .filter(i => i.role === 'user' || i.role === 'developer')
    .map(i =>
      typeof i.content === 'string'
        ? i.content
        : (Array.isArray(i.content) ? i.content : []).map((c: any) => String(c?.text ?? '')).join('\n')
    )
    .join('\n')
  const outputs = new Map<string, string>()
  for (const item of items) {
    if (/^(function_call|custom_tool_call|tool_search)_output$/.test(String(item?.type)) && typeof item.call_id === 'string') {
      outputs.set(item.call_id, item.type === 'tool_search_output' ? toolNames(item.tools) : outputText(item.output))
    }
  }
  const shell = toolKey(dialect.shell(''))
  const history: Conversation['history'] = []
  for (const item of items) {
    const wire = callOf(item)
    if (wire == null) continue
    const call = issued.get(item.call_id) ?? wire
    const text = outputs.get(item.call_id)
    if (text == null) throw new Error(`call ${String(item.call_id)} (${call.name}) has no output in the input`)
    history.push({ call, outcome: { text, isError: toolKey(call) === shell && reportsFailedExit(text) } })
  }
  return { prompt: `${String(body?.instructions ?? '')}\n${prompt}`, tools: [...offered.keys()], history }
}

/** The call an input item was, if it is one. */
function callOf(item: any): ToolCall | undefined {
  switch (item?.type) {
    case 'function_call': {
      let input: Record<string, unknown> = {}
      try {
        input = JSON.parse(String(item.arguments ?? '{}'))
      } catch {
        /* keep {} */
      }
      return { name: String(item.name), namespace: item.namespace, input }
    }
    case 'custom_tool_call':
      return { name: String(item.name), input: { input: String(item.input ?? '') } }
    case 'tool_search_call':
      return { name: 'tool_search', input: item.arguments ?? {} }
    default:
      return undefined
  }
}

function toolNames(tools: unknown): string {
  return (Array.isArray(tools) ? tools : [])
    .flatMap((t: any) => [t?.name, ...(Array.isArray(t?.tools) ? t.tools.map((i: any) => i?.name) : [])])
    .filter(n => n != null)
    .join(' ')
}

/** A tool output as text: a string, content items with text, or anything else as JSON. */
export function outputText(output: unknown): string {
  if (typeof output === 'string') return unwrapContentList(output)
  if (Array.isArray(output))
    return output.map(p => (typeof p?.text === 'string' ? unwrapContentList(p.text) : JSON.stringify(p))).join('\n')
  if (output != null && typeof output === 'object' && typeof (output as any).content === 'string') return (output as any).content
  return JSON.stringify(output ?? null)
}

/**
 * The codex-acp agent shows an MCP result without structuredContent as the
 * JSON of its content list after "Output:" ([{"type":"text","text":"..."}]):
 * the tool's own text is inside.
 */
function unwrapContentList(text: string): string {
  const marker = text.indexOf('Output:\n[')
  const start = marker >= 0 ? marker + 'Output:\n'.length : text.trimStart().startsWith('[{"type":"text"') ? text.indexOf('[') : -1
  if (start < 0) return text
  try {
    const list: unknown = JSON.parse(text.slice(start))
    if (!Array.isArray(list) || !list.every(c => typeof c?.text === 'string')) return text
    return `${text.slice(0, start)}${list.map(c => c.text as string).join('\n')}`
  } catch {
    return text
  }
}

// ---------------------------------------------------------------- SSE

/** One streamed response: the Responses API's event sequence for one output item. */
class SseResponse {
  private n = 0
  constructor(
    private readonly res: ServerResponse,
    private readonly id: string
  ) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
  }

  message(text: string): void {
    const item = {
      type: 'message',
      id: `msg_${this.id}`,
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text, annotations: [] }]
    }
    this.begin()
    this.event('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', content: [] } })
    const part = { type: 'output_text', text: '', annotations: [] }
    this.event('response.content_part.added', { output_index: 0, item_id: item.id, content_index: 0, part })
    this.event('response.output_text.delta', { output_index: 0, item_id: item.id, content_index: 0, delta: text })
    this.event('response.output_text.done', { output_index: 0, item_id: item.id, content_index: 0, text })
    this.event('response.content_part.done', { output_index: 0, item_id: item.id, content_index: 0, part: { ...part, text } })
    this.end(item)
  }

  toolCall(call: WireCall): void {
    if (call.type === 'tool_search_call') {
      const item = {
        type: 'tool_search_call',
        id: `ts_${this.id}`,
        call_id: call.callId,
        execution: 'client',
        arguments: JSON.parse(call.payload),
        status: 'completed'
      }
      this.begin()
      this.event('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress' } })
      this.end(item)
      return
    }
    const id = `${call.type === 'function_call' ? 'fc' : 'ctc'}_${this.id}`
    const item: Record<string, unknown> =
      call.type === 'function_call'
        ? { type: 'function_call', id, call_id: call.callId, name: call.name, arguments: call.payload, status: 'completed' }
        : { type: 'custom_tool_call', id, call_id: call.callId, name: call.name, input: call.payload, status: 'completed' }
    if (call.namespace != null) item.namespace = call.namespace
    this.begin()
    const field = call.type === 'function_call' ? 'arguments' : 'input'
    this.event('response.output_item.added', { output_index: 0, item: { ...item, [field]: '', status: 'in_progress' } })
    const kind = call.type === 'function_call' ? 'function_call_arguments' : 'custom_tool_call_input'
    this.event(`response.${kind}.delta`, { output_index: 0, item_id: id, delta: call.payload })
    this.event(`response.${kind}.done`, { output_index: 0, item_id: id, [field]: call.payload })
    this.end(item)
  }

  private begin(): void {
    const response = {
      id: this.id,
      object: 'response',
      created_at: Math.floor(Date.now() / 1000),
      status: 'in_progress',
      model: MODEL_ID,
      output: []
    }
    this.event('response.created', { response })
    this.event('response.in_progress', { response })
  }

  private end(item: Record<string, unknown>): void {
    this.event('response.output_item.done', { output_index: 0, item })
    const usage = {
      input_tokens: 100,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 10,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 110
    }
    this.event('response.completed', {
      response: {
        id: this.id,
        object: 'response',
        created_at: Math.floor(Date.now() / 1000),
        status: 'completed',
        model: MODEL_ID,
        output: [item],
        usage
      }
    })
    this.res.end()
  }

  private event(type: string, data: Record<string, unknown>): void {
    this.res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.n++, ...data })}\n\n`)
  }
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify(value))
}
