// A STAND-IN FOR THE MODEL ONLY: a scripted model endpoint on 127.0.0.1 that
// speaks the Anthropic Messages API (POST /v1/messages, streamed as server-sent
// events) to a real agent built on Claude Code (claude-agent-acp). Everything
// else is real: the agent, Claude Code's tools, its MCP client, agentd, git.
//
// Each request is one step of the agent loop. The endpoint reads the
// conversation the agent sent (its earlier tool_use blocks and their
// tool_result), asks scripted-agent.ts (the mind the other endpoints share)
// what the agent does next, and answers with that step as a call of one of the
// offered tools (mcp__agency__<tool>, Bash, Write with an absolute path under
// the working directory Claude Code names in its system prompt), or with the
// final message. HEAD / (Claude Code's probe) gets 200, count_tokens an
// estimate, requests without tools a short text. Every request is recorded.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { isAbsolute, join } from 'node:path'
import { nextStep, type AgentSkills, type AgentStep, type TakenStep } from './scripted-agent.js'

export interface AnthropicRequest {
  method: string
  path: string
  headers: Record<string, string | string[] | undefined>
  body: any
  /** The agent's step: what it had done, what was answered and how; absent for other requests. */
  turn?: { taken: TakenStep[], answered: AgentStep, call?: { name: string, input: Record<string, unknown> } }
  /** The agent closed the request before the answer was sent (it cancelled the turn). */
  aborted?: boolean
}

export interface AnthropicModel {
  /** For ANTHROPIC_BASE_URL: http://127.0.0.1:PORT */
  url: string
  requests: AnthropicRequest[]
  close: () => Promise<void>
}

export interface AnthropicModelOptions {
  skills: AgentSkills
  /** The messages the mind reads; default all (see openai-responses.ts's turnInput). */
  turnInput?: (messages: Message[]) => Message[]
  /** Awaited before an answer is sent: a test holds the model mid-turn with it. */
  beforeAnswer?: (rec: AnthropicRequest) => Promise<void> | void
}

export interface Block { type: string, text?: string, id?: string, name?: string, input?: unknown, tool_use_id?: string, content?: unknown, is_error?: boolean }
export interface Message { role: string, content: string | Block[] }

export async function startAnthropicModel (o: AnthropicModelOptions): Promise<AnthropicModel> {
  const requests: AnthropicRequest[] = []
  const issued = new Map<string, AgentStep>()
  let seq = 0
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8')
      let body: any
      try { body = raw === '' ? undefined : JSON.parse(raw) } catch { body = undefined }
      const rec: AnthropicRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body }
      requests.push(rec)
      const path = (req.url ?? '/').split('?')[0]
      if (path === '/' && (req.method === 'HEAD' || req.method === 'GET')) { res.writeHead(200).end(); return }
      if (path === '/v1/messages/count_tokens') { sendJson(res, 200, { input_tokens: Math.max(1, Math.ceil(raw.length / 4)) }); return }
      if (req.method === 'POST' && path === '/v1/messages' && body != null) { answer(res, rec, body); return }
      sendJson(res, 404, { type: 'error', error: { type: 'not_found_error', message: `the scripted model does not serve ${req.method ?? ''} ${path}` } })
    })
  })

  function answer (res: ServerResponse, rec: AnthropicRequest, body: any): void {
    const tools: string[] = Array.isArray(body.tools) ? body.tools.map((t: { name?: unknown }) => String(t.name)) : []
    const id = `msg_scripted_${++seq}`
    if (tools.length === 0) { reply(res, body, id, [{ type: 'text', text: 'OK.' }]); return }
    const messages: Message[] = (Array.isArray(body.messages) ? body.messages : []).filter((m: Message) => m.role !== 'system')
    const taken = takenSteps(o.turnInput != null ? o.turnInput(messages) : messages, issued)
    const step = nextStep(taken, o.skills)
    const call = step.kind === 'finish' ? undefined : toolCall(step, tools, workingDirectory(body.system))
    rec.turn = { taken, answered: step, call }
    const send = (): void => {
      if (call == null) {
        reply(res, body, id, [{ type: 'text', text: step.kind === 'finish' ? step.text : `cannot do ${step.kind}: the agent offers no tool for it` }])
        return
      }
      const toolUseId = `toolu_${id}`
      issued.set(toolUseId, step)
      reply(res, body, id, [{ type: 'text', text: `Next: ${step.kind}.` }, { type: 'tool_use', id: toolUseId, name: call.name, input: call.input }])
    }
    if (o.beforeAnswer == null) { send(); return }
    res.once('close', () => { if (!res.writableEnded) rec.aborted = true })
    void Promise.resolve(o.beforeAnswer(rec)).then(() => { if (rec.aborted !== true) send() }, () => { res.destroy() })
  }

  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>(resolve => server.close(() => resolve()))
    }
  }
}

/** The step as a call of one of Claude Code's tools; undefined when none is offered. */
function toolCall (step: Exclude<AgentStep, { kind: 'finish' }>, tools: string[], cwd: string | undefined): { name: string, input: Record<string, unknown> } | undefined {
  switch (step.kind) {
    case 'agency': {
      const name = `mcp__agency__${step.tool}`
      return tools.includes(name) ? { name, input: step.args } : undefined
    }
    case 'shell': return tools.includes('Bash') ? { name: 'Bash', input: { command: step.command, description: `Run ${step.command.split(' ').slice(0, 3).join(' ')}` } } : undefined
    case 'write': {
      if (!tools.includes('Write')) return undefined
      const path = isAbsolute(step.path) ? step.path : cwd != null ? join(cwd, step.path) : undefined
      return path == null ? undefined : { name: 'Write', input: { file_path: path, content: step.content } }
    }
  }
}

/** The agent's steps so far: each tool_use this endpoint issued, with its tool_result. */
export function takenSteps (messages: Message[], issued: Map<string, AgentStep>): TakenStep[] {
  const outputs = new Map<string, string>()
  for (const m of messages) for (const b of blocks(m)) if (m.role === 'user' && b.type === 'tool_result' && b.tool_use_id != null) outputs.set(b.tool_use_id, resultText(b.content))
  const taken: TakenStep[] = []
  for (const m of messages) {
    for (const b of blocks(m)) {
      if (m.role !== 'assistant' || b.type !== 'tool_use' || b.id == null) continue
      const step = issued.get(b.id)
      const output = outputs.get(b.id)
      if (step != null && output != null) taken.push({ step, output })
    }
  }
  return taken
}

export function blocks (m: Message): Block[] {
  return typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : Array.isArray(m.content) ? m.content : []
}

function resultText (content: unknown): string {
  if (typeof content === 'string') return content
  return Array.isArray(content) ? content.map((c: Block) => c.type === 'text' ? c.text ?? '' : `[${c.type}]`).join('\n') : ''
}

function workingDirectory (system: unknown): string | undefined {
  const text = typeof system === 'string' ? system : Array.isArray(system) ? system.map((b: Block) => b.text ?? '').join('\n') : ''
  return /Primary working directory: *(\S.*)$/m.exec(text)?.[1]?.trim()
}

function reply (res: ServerResponse, body: any, id: string, content: Block[]): void {
  const model = String(body.model ?? 'scripted')
  const stopReason = content.some(b => b.type === 'tool_use') ? 'tool_use' : 'end_turn'
  const usage = { input_tokens: 100, output_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 }
  if (body.stream !== true) { sendJson(res, 200, { id, type: 'message', role: 'assistant', model, content, stop_reason: stopReason, stop_sequence: null, usage }); return }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
  const event = (type: string, data: Record<string, unknown>): void => { res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`) }
  event('message_start', { message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } } })
  content.forEach((b, index) => {
    if (b.type === 'tool_use') {
      event('content_block_start', { index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} } })
      event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input) } })
    } else {
      event('content_block_start', { index, content_block: { type: 'text', text: '' } })
      event('content_block_delta', { index, delta: { type: 'text_delta', text: b.text ?? '' } })
    }
    event('content_block_stop', { index })
  })
  event('message_delta', { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } })
  event('message_stop', {})
  res.end()
}

function sendJson (res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
}
