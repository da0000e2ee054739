// A STAND-IN FOR THE MODEL ONLY: a scripted model endpoint on 127.0.0.1 that
// speaks the OpenAI Responses API (POST /v1/responses, streamed as server-sent
// events) to a real agent CLI (Codex CLI, GitHub Copilot CLI). Everything else
// in these tests is real: the CLI, its tools, its MCP client, agentd, git.
//
// Each request is one turn of the CLI's agent loop. The endpoint reads the
// input items the CLI sent (its earlier function/custom tool calls and their
// outputs), asks scripted-agent.ts what the agent does next, and answers with
// that step as a call of a tool the request offers: an `agency` MCP tool under
// the name the CLI gave it, the CLI's own shell tool, its own file tool
// (apply_patch, create) or, when it has none, a shell heredoc; or with the final
// assistant message. Requests without the agent's tools (titles, summaries and
// other side requests) get a short message, and GET /v1/models a one-model
// list, so nothing waits. Every request is recorded for the test to assert on.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { nextStep, type AgentSkills, type AgentStep, type TakenStep } from './scripted-agent.js'

/** The model id the endpoint lists and answers as. */
export const MODEL_ID = 'gpt-5.5'

/** One request the CLI made, as received, with what was answered. */
export interface RecordedRequest {
  method: string
  path: string
  headers: Record<string, string | string[] | undefined>
  /** The parsed JSON body, if there was one. */
  body: any
  /** The agent's turn: the steps taken so far and the step answered; absent for side requests. */
  turn?: { taken: TakenStep[], answered: AgentStep, call?: WireCall }
}

/** How a step went out on the wire. */
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
  close: () => Promise<void>
}

export interface ResponsesModelOptions {
  skills: AgentSkills
}

export async function startResponsesModel (o: ResponsesModelOptions): Promise<ResponsesModel> {
  const requests: RecordedRequest[] = []
  // What each call id this endpoint issued stood for: the model remembers what it asked for.
  const issued = new Map<string, AgentStep>()
  let seq = 0
  const server: Server = createServer((req, res) => {
    void readBody(req).then(text => {
      let body: any
      try { body = text === '' ? undefined : JSON.parse(text) } catch { body = undefined }
      const rec: RecordedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body }
      requests.push(rec)
      const path = (req.url ?? '').split('?')[0]
      if (req.method === 'GET' && path.endsWith('/models')) return sendJson(res, 200, { object: 'list', data: [{ id: MODEL_ID, object: 'model', created: 0, owned_by: 'scripted' }] })
      if (req.method === 'POST' && path.endsWith('/responses') && body != null) return answerTurn(res, rec, body)
      sendJson(res, 404, { error: { message: `the scripted model does not serve ${req.method ?? ''} ${path}`, type: 'not_found' } })
    }).catch(err => { if (!res.headersSent) sendJson(res, 500, { error: { message: String(err) } }) })
  })

  function answerTurn (res: ServerResponse, rec: RecordedRequest, body: any): void {
    const tools = offeredTools(body.tools, body.input)
    const stream = new SseResponse(res, `resp_${++seq}`)
    if (tools.agency.size === 0 && tools.shell == null) {
      // Not the agent's turn (a title, a summary, a check): a short answer.
      stream.message('ok')
      return
    }
    const taken = takenSteps(body.input, issued)
    const step = nextStep(taken, o.skills)
    const callId = `call_${seq}`
    // Codex defers MCP tools behind its client-side tool_search for models that support it:
    // the agent searches for its tools first, and they come back in the next request's input.
    const call = step.kind === 'finish'
      ? undefined
      : step.kind === 'agency' && !tools.agency.has(step.tool) && tools.toolSearch && !searched(body.input)
        ? toolSearchCall(callId)
        : wireCall(step, tools, callId)
    rec.turn = { taken, answered: step, call }
    if (call == null) {
      stream.message(step.kind === 'finish' ? step.text : `cannot do ${step.kind}: the CLI offers no tool for it`)
      return
    }
    if (call.type !== 'tool_search_call') issued.set(call.callId, step)
    stream.toolCall(call)
  }

  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    turns: () => requests.flatMap(r => r.turn != null ? [r.turn] : []),
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>(resolve => server.close(() => resolve()))
    }
  }
}

// ---------------------------------------------------------------- tools offered

interface ToolRef { name: string, namespace?: string }

interface OfferedTools {
  /** agency MCP tool name -> how the CLI names it */
  agency: Map<string, ToolRef>
  /** A client-side tool search (Codex) that loads deferred tools. */
  toolSearch: boolean
  shell?: ToolRef & { style: 'exec_command' | 'bash' | 'shell_command' | 'shell' }
  write?: ToolRef & { style: 'apply_patch_custom' | 'apply_patch_function' | 'create' }
}

const AGENCY_PREFIX = /^(?:mcp__)?agency(?:__|-|_|\.|\/)/

/**
 * Sorts the request's tools, and those a tool search loaded earlier in the
 * conversation, into the agency MCP tools, the shell tool and the file tool.
 */
export function offeredTools (tools: unknown, input?: unknown): OfferedTools {
  const out: OfferedTools = { agency: new Map(), toolSearch: false }
  const loaded = (Array.isArray(input) ? input : []).flatMap((i: any) => i?.type === 'tool_search_output' && Array.isArray(i.tools) ? i.tools : [])
  const list: any[] = [...(Array.isArray(tools) ? tools : []), ...loaded]
  for (const t of list) {
    if (t?.type === 'tool_search') { out.toolSearch = true; continue }
    if (t?.type === 'namespace' && Array.isArray(t.tools)) {
      // One namespace per MCP server: Codex calls it "mcp__agency" with the server's own tool
      // names inside, Copilot "agency" with "agency-<tool>" inside.
      if (/^(?:mcp__)?agency$/.test(String(t.name))) {
        for (const inner of t.tools) if (typeof inner?.name === 'string') out.agency.set(inner.name.replace(AGENCY_PREFIX, ''), { name: inner.name, namespace: t.name })
      }
      continue
    }
    const name = typeof t?.name === 'string' ? t.name : ''
    if (AGENCY_PREFIX.test(name)) out.agency.set(name.replace(AGENCY_PREFIX, ''), { name })
    else if (name === 'exec_command') out.shell = { name, style: 'exec_command' }
    else if (name === 'bash') out.shell = { name, style: 'bash' }
    else if (name === 'shell_command' && out.shell == null) out.shell = { name, style: 'shell_command' }
    else if (name === 'shell' && out.shell == null) out.shell = { name, style: 'shell' }
    else if (name === 'apply_patch') out.write = { name, style: t.type === 'custom' ? 'apply_patch_custom' : 'apply_patch_function' }
    else if (name === 'create' && out.write == null) out.write = { name, style: 'create' }
  }
  return out
}

/** The step as a call of one of the offered tools; undefined when none fits. */
export function wireCall (step: Exclude<AgentStep, { kind: 'finish' }>, tools: OfferedTools, callId: string): WireCall | undefined {
  const fn = (ref: ToolRef, args: Record<string, unknown>): WireCall => ({ type: 'function_call', name: ref.name, namespace: ref.namespace, callId, payload: JSON.stringify(args) })
  if (step.kind === 'agency') {
    const ref = tools.agency.get(step.tool)
    return ref == null ? undefined : fn(ref, step.args)
  }
  if (step.kind === 'write' && tools.write != null) {
    const w = tools.write
    if (w.style === 'create') return fn(w, { path: step.path, file_text: step.content })
    const patch = addFilePatch(step.path, step.content)
    if (w.style === 'apply_patch_custom') return { type: 'custom_tool_call', name: w.name, callId, payload: patch }
    return fn(w, { input: patch })
  }
  const command = step.kind === 'shell' ? step.command : heredoc(step.path, step.content)
  const sh = tools.shell
  if (sh == null) return undefined
  switch (sh.style) {
    case 'exec_command': return fn(sh, { cmd: command, yield_time_ms: 30_000 })
    case 'bash': return fn(sh, { command, description: command.slice(0, 100) })
    case 'shell_command': return fn(sh, { command })
    case 'shell': return fn(sh, { command: ['bash', '-c', command] })
  }
}

/** Whether the conversation already searched for tools. */
function searched (input: unknown): boolean {
  return Array.isArray(input) && input.some((i: any) => i?.type === 'tool_search_call')
}

/** A search that loads the agency tools the loop uses (BM25 over the tools' names and descriptions). */
function toolSearchCall (callId: string): WireCall {
  return { type: 'tool_search_call', name: 'tool_search', callId, payload: JSON.stringify({ query: 'agency status read_inbox ready claim integrate done', limit: 20 }) }
}

/** An apply_patch that adds one file (the grammar Codex and Copilot share). */
function addFilePatch (path: string, content: string): string {
  const lines = content.endsWith('\n') ? content.slice(0, -1).split('\n') : content.split('\n')
  return ['*** Begin Patch', `*** Add File: ${path}`, ...lines.map(l => `+${l}`), '*** End Patch', ''].join('\n')
}

function heredoc (path: string, content: string): string {
  const dir = path.includes('/') ? `mkdir -p '${path.slice(0, path.lastIndexOf('/'))}' && ` : ''
  return `${dir}cat > '${path}' <<'AGENCY_EOF'\n${content.endsWith('\n') ? content : content + '\n'}AGENCY_EOF`
}

// ---------------------------------------------------------------- history

/** The agent's steps so far, read from the input items: each call this endpoint issued, with its output. */
export function takenSteps (input: unknown, issued: Map<string, AgentStep>): TakenStep[] {
  const items: any[] = Array.isArray(input) ? input : []
  const outputs = new Map<string, string>()
  for (const item of items) {
    if ((item?.type === 'function_call_output' || item?.type === 'custom_tool_call_output') && typeof item.call_id === 'string') {
      outputs.set(item.call_id, outputText(item.output))
    }
  }
  const taken: TakenStep[] = []
  for (const item of items) {
    if (item?.type !== 'function_call' && item?.type !== 'custom_tool_call') continue
    const step = issued.get(item.call_id)
    const output = outputs.get(item.call_id)
    if (step != null && output != null) taken.push({ step, output })
  }
  return taken
}

/** A tool output as text: a string, content items with text, or anything else as JSON. */
export function outputText (output: unknown): string {
  if (typeof output === 'string') return output
  if (Array.isArray(output)) return output.map(p => typeof p?.text === 'string' ? p.text : JSON.stringify(p)).join('\n')
  if (output != null && typeof output === 'object' && typeof (output as any).content === 'string') return (output as any).content
  return JSON.stringify(output ?? null)
}

// ---------------------------------------------------------------- SSE

/** One streamed response: the Responses API's event sequence for one output item. */
class SseResponse {
  private n = 0
  constructor (private readonly res: ServerResponse, private readonly id: string) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' })
  }

  message (text: string): void {
    const item = { type: 'message', id: `msg_${this.id}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] }
    this.begin()
    this.event('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', content: [] } })
    const part = { type: 'output_text', text: '', annotations: [] }
    this.event('response.content_part.added', { output_index: 0, item_id: item.id, content_index: 0, part })
    this.event('response.output_text.delta', { output_index: 0, item_id: item.id, content_index: 0, delta: text })
    this.event('response.output_text.done', { output_index: 0, item_id: item.id, content_index: 0, text })
    this.event('response.content_part.done', { output_index: 0, item_id: item.id, content_index: 0, part: { ...part, text } })
    this.end(item)
  }

  toolCall (call: WireCall): void {
    if (call.type === 'tool_search_call') {
      const item = { type: 'tool_search_call', id: `ts_${this.id}`, call_id: call.callId, execution: 'client', arguments: JSON.parse(call.payload), status: 'completed' }
      this.begin()
      this.event('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress' } })
      this.end(item)
      return
    }
    const id = `${call.type === 'function_call' ? 'fc' : 'ctc'}_${this.id}`
    const item: Record<string, unknown> = call.type === 'function_call'
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

  private begin (): void {
    const response = { id: this.id, object: 'response', created_at: Math.floor(Date.now() / 1000), status: 'in_progress', model: MODEL_ID, output: [] }
    this.event('response.created', { response })
    this.event('response.in_progress', { response })
  }

  private end (item: Record<string, unknown>): void {
    this.event('response.output_item.done', { output_index: 0, item })
    const usage = { input_tokens: 100, input_tokens_details: { cached_tokens: 0 }, output_tokens: 10, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 110 }
    this.event('response.completed', { response: { id: this.id, object: 'response', created_at: Math.floor(Date.now() / 1000), status: 'completed', model: MODEL_ID, output: [item], usage } })
    this.res.end()
  }

  private event (type: string, data: Record<string, unknown>): void {
    this.res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.n++, ...data })}\n\n`)
  }
}

async function readBody (req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

function sendJson (res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify(value))
}
