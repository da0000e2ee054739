#!/usr/bin/env node
// A FAKE ACP AGENT, for the unit tests of agentd's ACP client only (the real
// agents are tested in test/real-agents/acp-*.test.ts). It speaks JSON-RPC on
// stdio by hand so that it can also break the protocol on purpose:
//
//   node fake-acp-agent.mjs <mode>     modes: ok | bad-version | malformed | flood | crash-once | auth
//
// ok: answers initialize (v1), session/new, and each session/prompt: it
// appends the prompt's text to $FAKE_AGENT_LOG (one JSON line), reports a tool
// call, asks permission to write /outside/x.txt and to run a shell command
// (the answers go to the log too), and ends the turn, unless the prompt says
// HOLD-TURN: then the turn runs until session/cancel, answered "cancelled";
// or SILENT-TURN: then it never says anything again (a hung agent), the first
// time only (a restarted agent, told that turn again, answers it).
// flood: answers each prompt with a flood of updates, then holds the turn
// until session/cancel like HOLD-TURN.
import { appendFileSync, existsSync, writeFileSync } from 'node:fs'
import { createInterface } from 'node:readline'

const mode = process.argv[2] ?? 'ok'
const logFile = process.env.FAKE_AGENT_LOG
const record = (entry) => { if (logFile != null) appendFileSync(logFile, JSON.stringify(entry) + '\n') }
const send = (msg) => { process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...msg }) + '\n') }
let nextId = 1000
const waiting = new Map()
const ask = (method, params) => new Promise(resolve => { const id = nextId++; waiting.set(id, resolve); send({ id, method, params }) })
let heldTurn
let silent = false

createInterface({ input: process.stdin }).on('line', async line => {
  const msg = JSON.parse(line)
  if (msg.method == null) { waiting.get(msg.id)?.(msg.result ?? msg.error); waiting.delete(msg.id); return }
  switch (msg.method) {
    case 'initialize':
      if (mode === 'malformed') for (let i = 0; i < 30; i++) process.stdout.write(i % 3 === 0 ? 'Starting the fake agent...\n' : i % 3 === 1 ? '{"not":"json-rpc"}\n' : '[1,2,3]\n')
      send({ id: msg.id, result: { protocolVersion: mode === 'bad-version' ? 2 : 1, agentCapabilities: {}, authMethods: [], agentInfo: { name: 'fake-acp-agent', version: '0.0.0' } } })
      return
    case 'session/new':
      if (mode === 'auth') { send({ id: msg.id, error: { code: -32000, message: 'Authentication required' } }); return }
      record({ event: 'session/new', cwd: msg.params.cwd, mcpServers: msg.params.mcpServers })
      send({ id: msg.id, result: { sessionId: 'fake-session' } })
      return
    case 'session/prompt': {
      const text = msg.params.prompt.map(b => b.text ?? '').join('\n')
      record({ event: 'prompt', text })
      if (text.includes('SILENT-TURN') && logFile != null && !existsSync(`${logFile}.silent`)) {
        writeFileSync(`${logFile}.silent`, '')
        silent = true // says nothing more, and ignores the cancel
        return
      }
      if (mode === 'flood') {
        for (let i = 0; i < 200_000; i++) send({ method: 'session/update', params: { sessionId: 'fake-session', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'x' } } } })
        heldTurn = msg.id
        return
      }
      const update = (u) => send({ method: 'session/update', params: { sessionId: 'fake-session', update: u } })
      update({ sessionUpdate: 'tool_call', toolCallId: 't1', title: 'Write /outside/x.txt', kind: 'edit', status: 'pending', locations: [{ path: '/outside/x.txt' }] })
      const options = [{ optionId: 'yes', name: 'Allow', kind: 'allow_once' }, { optionId: 'always', name: 'Always', kind: 'allow_always' }, { optionId: 'no', name: 'Reject', kind: 'reject_once' }]
      const write = await ask('session/request_permission', { sessionId: 'fake-session', toolCall: { toolCallId: 't1', title: 'Write /outside/x.txt', kind: 'edit', locations: [{ path: '/outside/x.txt' }] }, options })
      const shell = await ask('session/request_permission', { sessionId: 'fake-session', toolCall: { toolCallId: 't2', title: 'npm test', kind: 'execute', rawInput: { command: 'npm test' } }, options })
      record({ event: 'permissions', write: write?.outcome, shell: shell?.outcome })
      update({ sessionUpdate: 'tool_call_update', toolCallId: 't1', status: 'failed' })
      update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'did the turn' } })
      if (text.includes('HOLD-TURN')) { heldTurn = msg.id; record({ event: 'holding' }); return }
      send({ id: msg.id, result: { stopReason: 'end_turn', usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 } } })
      if (mode === 'crash-once' && logFile != null && !existsSync(`${logFile}.crashed`)) { writeFileSync(`${logFile}.crashed`, ''); setTimeout(() => process.exit(3), 50) }
      return
    }
    case 'session/cancel':
      record({ event: 'cancel' })
      if (silent) return
      if (heldTurn != null) { send({ id: heldTurn, result: { stopReason: 'cancelled' } }); heldTurn = undefined }
      return
    default:
      if (msg.id != null) send({ id: msg.id, error: { code: -32601, message: `no ${msg.method}` } })
  }
})
process.stdin.on('end', () => { record({ event: 'stdin closed' }); process.exit(0) })
