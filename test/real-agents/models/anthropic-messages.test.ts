// The scripted Anthropic endpoint's wire, over real HTTP on loopback: the
// paths Claude Code may call besides the streamed agent turns it is tested
// with in claude.test.ts (non-streaming turns, token counts, the probe,
// requests without tools, anything else), and what it records.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startAnthropicModel, type ScriptedAnthropicModel } from './anthropic-messages.js'
import type { Conversation } from './agent-script.js'

let model: ScriptedAnthropicModel
const seen: Conversation[] = []

beforeAll(async () => {
  model = await startAnthropicModel(conv => {
    seen.push(conv)
    if (conv.prompt.includes('fail')) throw new Error('no idea')
    return conv.history.length === 0
      ? { kind: 'call', call: { name: 'Bash', input: { command: 'ls' } }, say: 'Listing.' }
      : { kind: 'answer', text: `saw ${conv.history[0].outcome.text}` }
  })
})

afterAll(async () => {
  await model.close()
})

async function post(path: string, body: unknown): Promise<{ status: number; json: any; text: string }> {
  const res = await fetch(`${model.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-claude-code-session-id': 's-1' },
    body: JSON.stringify(body)
  })
  const text = await res.text()
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: res.status, json, text }
}

const TOOLS = [{ name: 'Bash', input_schema: { type: 'object' } }]
const SYSTEM = [{ type: 'text', text: '# Environment\n - Primary working directory: /ws/agent\n' }]

describe('the scripted Anthropic Messages endpoint', () => {
  it("answers a non-streaming turn with the script's tool call, then reads the tool result back", async () => {
    const first = await post('/v1/messages?beta=true', {
      model: 'm',
      system: SYSTEM,
      tools: TOOLS,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: '<system-reminder>x</system-reminder>' },
            { type: 'text', text: 'go' }
          ]
        }
      ]
    })
    expect(first.status).toBe(200)
    expect(first.json).toMatchObject({
      type: 'message',
      role: 'assistant',
      stop_reason: 'tool_use',
      content: [
        { type: 'text', text: 'Listing.' },
        { type: 'tool_use', name: 'Bash', input: { command: 'ls' } }
      ]
    })
    expect(seen.at(-1)).toMatchObject({ prompt: 'go', cwd: '/ws/agent', tools: ['Bash'], history: [] })
    const id = first.json.content[1].id as string
    const second = await post('/v1/messages', {
      model: 'm',
      system: SYSTEM,
      tools: TOOLS,
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: first.json.content },
        { role: 'system', content: 'a mid-conversation note' },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: [{ type: 'text', text: 'a.js' }], is_error: false }] }
      ]
    })
    expect(second.json).toMatchObject({ stop_reason: 'end_turn', content: [{ type: 'text', text: 'saw a.js' }] })
    expect(model.toolCalls()).toEqual([
      { session: 's-1', call: { name: 'Bash', input: { command: 'ls' } }, outcome: { text: 'a.js', isError: false } }
    ])
  })

  it('streams the same reply as server-sent events', async () => {
    const r = await post('/v1/messages', { model: 'm', stream: true, tools: TOOLS, messages: [{ role: 'user', content: 'go' }] })
    const events = r.text
      .split('\n')
      .filter(l => l.startsWith('event: '))
      .map(l => l.slice(7))
    expect(events).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop'
    ])
    const deltas = r.text
      .split('\n')
      .filter(l => l.startsWith('data: '))
      .map(l => JSON.parse(l.slice(6)))
    expect(deltas.find(d => d.delta?.type === 'input_json_delta')?.delta.partial_json).toBe('{"command":"ls"}')
    expect(deltas.find(d => d.type === 'message_delta')?.delta.stop_reason).toBe('tool_use')
  })

  it('answers token counts, the probe, requests without tools and unknown paths, and records each', async () => {
    const before = model.requests.length
    expect((await post('/v1/messages/count_tokens', { model: 'm', messages: [] })).json.input_tokens).toBeGreaterThan(0)
    expect((await fetch(`${model.url}/`, { method: 'HEAD' })).status).toBe(200)
    expect((await post('/v1/messages', { model: 'm', messages: [{ role: 'user', content: 'title?' }] })).json.content).toEqual([
      { type: 'text', text: 'OK.' }
    ])
    const unknown = await post('/v1/files', {})
    expect(unknown.status).toBe(404)
    expect(unknown.json.error.type).toBe('not_found_error')
    expect(model.requests.slice(before).map(r => r.kind)).toEqual(['count_tokens', 'probe', 'side', 'unknown'])
  })

  it('ends the turn with a text saying why when the script cannot go on, and lists the error', async () => {
    const r = await post('/v1/messages', { model: 'm', tools: TOOLS, messages: [{ role: 'user', content: 'fail please' }] })
    expect(r.json).toMatchObject({ stop_reason: 'end_turn', content: [{ type: 'text', text: 'The scripted model cannot go on: no idea' }] })
    expect(model.errors()).toEqual(['no idea'])
  })
})
