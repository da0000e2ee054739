// `agency mcp` against real daemons: the MCP SDK's own client, over stdio,
// lists the coordination tools and calls them; every effect is checked through
// the daemons' gRPC API (and across the mesh on a second daemon), not through
// the MCP server's own answers.
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { connectAgency, type Agency } from '../../src/client/agency.js'
import type { AgencyClient } from '../../src/gen/agency/v1/api.js'
import type { LocalDaemon } from '../../src/swarm/local-daemon.js'
import { AGENCY_BIN, Scratch } from '../helpers/agent-loop.js'
import { waitFor } from '../helpers/wait-for.js'

const TOOL_NAMES = [
  'status',
  'ready',
  'add_task',
  'add_tasks',
  'wait',
  'claim',
  'release',
  'done',
  'send_message',
  'read_inbox',
  'announce',
  'record_finding',
  'search_findings',
  'request_review',
  'verdict',
  'experts',
  'integrate',
  'assist',
  'request_integration'
]

interface ToolAnswer {
  isError: boolean
  text: string
  json: any
}

let scratch: Scratch
let a: LocalDaemon
let b: LocalDaemon
let grpcA: Agency
let grpcB: Agency
let client: Client
let transport: StdioClientTransport
let mcpStderr = ''
const clientErrors: Error[] = []

async function call(name: string, args: Record<string, unknown> = {}): Promise<ToolAnswer> {
  const r = await client.callTool({ name, arguments: args })
  const content = r.content as Array<{ type: string; text?: string }>
  const text = content
    .filter(c => c.type === 'text')
    .map(c => c.text ?? '')
    .join('\n')
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { isError: r.isError === true, text, json }
}

/** Unique words per run, so a search can only find what this test wrote. */
const word = (label: string): string => `${label}${Math.random().toString(36).slice(2, 10)}`

beforeAll(async () => {
  scratch = new Scratch()
  a = await scratch.daemon('mcp-a', { extraArgs: ['--settle-ms', '300'] })
  b = await scratch.daemon('mcp-b', { peers: a.addrs, extraArgs: ['--settle-ms', '300'] })
  grpcA = connectAgency(a.grpc)
  grpcB = connectAgency(b.grpc)
  await waitFor(
    async () =>
      (await grpcA.call((c: AgencyClient) => c.getStatus, {})).peersLive >= 1 &&
      (await grpcB.call((c: AgencyClient) => c.getStatus, {})).peersLive >= 1,
    { what: 'the two daemons to see each other live' }
  )
  transport = new StdioClientTransport({
    command: process.execPath,
    args: [AGENCY_BIN, 'mcp'],
    // Debug logs on: anything the server logs must go to stderr, not into the protocol.
    env: { AGENCY_ADDR: a.grpc, AGENCY_LOG_LEVEL: 'debug' },
    stderr: 'pipe'
  })
  transport.stderr?.on('data', (chunk: Buffer) => {
    mcpStderr += chunk.toString('utf8')
  })
  client = new Client({ name: 'agency-test', version: '0.0.0' })
  // A line on stdout that is not JSON-RPC surfaces here (the SDK reports, then skips it).
  client.onerror = err => {
    clientErrors.push(err)
  }
  await client.connect(transport)
}, 120_000)

afterAll(async () => {
  await client?.close().catch(() => {})
  grpcA?.close()
  grpcB?.close()
  await scratch?.cleanup()
}, 60_000)

describe('agency mcp over stdio, with the SDK client', () => {
  it('lists the nineteen coordination tools, each with an object input schema and a description', async () => {
    const { tools } = await client.listTools()
    expect(tools.map(t => t.name).sort()).toEqual([...TOOL_NAMES].sort())
    // none steers the swarm: the goal, its tests, the budget, the pause and the members are the operator's (docs/operator.md)
    expect(tools.map(t => t.name).filter(n => /goal|test|budget|pause|resume|member/.test(n))).toEqual([])
    for (const t of tools) {
      expect(t.inputSchema.type).toBe('object')
      expect(t.description ?? '').not.toBe('')
    }
    // claim's task is optional: without one the daemon picks the next ready task
    const claim = tools.find(t => t.name === 'claim')
    expect(claim?.inputSchema.required ?? []).toEqual([])
    expect(Object.keys(claim?.inputSchema.properties ?? {})).toEqual(['task', 'scope'])
  })

  it('add_task then claim: the daemon holds the task for this agent, and the mesh sees the claim', async () => {
    const added = await call('add_task', { id: 'mcp-claimed', title: 'claimed over MCP', scope: ['src/mcp-claimed/**'], priority: 3 })
    expect(added.isError, added.text).toBe(false)
    expect(added.json.id).toBe('mcp-claimed')
    const onA = (await grpcA.call((c: AgencyClient) => c.getTask, { id: 'mcp-claimed' })).task
    expect(onA?.state).toBe('open')
    expect(onA?.scope).toEqual(['src/mcp-claimed/**'])

    // The peer must know the task before the claim settles, or the claim is only local.
    await waitFor(async () => (await grpcB.call((c: AgencyClient) => c.getTask, { id: 'mcp-claimed' })).task, {
      what: 'the task to reach the second daemon'
    })
    const claimed = await call('claim', { task: 'mcp-claimed' })
    expect(claimed.isError, claimed.text).toBe(false)
    expect(claimed.json.outcome).toBe('HELD')
    expect(claimed.json.task).toBe('mcp-claimed')
    // claim with no task: the daemon answers the task this agent holds, claiming nothing new
    const next = await call('claim', {})
    expect(next.isError, next.text).toBe(false)
    expect(next.json).toMatchObject({ outcome: 'HELD', task: 'mcp-claimed', attempts: 0 })

    const held = (await grpcA.call((c: AgencyClient) => c.getTask, { id: 'mcp-claimed' })).task
    expect(held?.state).toBe('claimed')
    expect(held?.holder).toBe(a.peerId)
    await waitFor(
      async () => {
        const t = (await grpcB.call((c: AgencyClient) => c.getTask, { id: 'mcp-claimed' })).task
        return t?.state === 'claimed' && t.holder === a.peerId
      },
      { what: 'the second daemon to see the claim' }
    )
    // A held task is not ready any more, as the ready tool says.
    const ready = await call('ready')
    expect(ready.isError, ready.text).toBe(false)
    expect((ready.json.tasks as Array<{ id: string }>).map(t => t.id)).not.toContain('mcp-claimed')
  })

  it('record_finding (note) lands in the shared record: found through gRPC on both daemons', async () => {
    const w = word('quokka')
    const noted = await call('record_finding', {
      kind: 'note',
      text: `the ${w} module caches results`,
      paths: ['src/cache.ts'],
      tags: ['mcp-test']
    })
    expect(noted.isError, noted.text).toBe(false)
    expect(noted.json.author).toBe(a.peerId)
    expect(noted.json.kind).toBe('finding')

    const hitsA = (
      await grpcA.call((c: AgencyClient) => c.searchFindings, {
        query: w,
        kind: 'note',
        pathPrefix: '',
        tag: '',
        author: '',
        since: 0,
        until: 0,
        limit: 10
      })
    ).hits
    expect(hitsA).toHaveLength(1)
    expect(hitsA[0].entry?.id).toBe(noted.json.id)
    expect(hitsA[0].finding?.kind).toBe('note')
    expect(hitsA[0].finding?.paths).toEqual(['src/cache.ts'])
    expect(hitsA[0].finding?.tags).toEqual(['mcp-test'])
    // Replicated: the other daemon finds the same signed entry.
    await waitFor(
      async () => {
        const hits = (
          await grpcB.call((c: AgencyClient) => c.searchFindings, {
            query: w,
            kind: '',
            pathPrefix: '',
            tag: '',
            author: '',
            since: 0,
            until: 0,
            limit: 10
          })
        ).hits
        return hits.length === 1 && hits[0].entry?.id === noted.json.id && hits[0].entry?.author === a.peerId
      },
      { what: 'the note to replicate to the second daemon' }
    )
  })

  it("search_findings (find) finds a peer's finding recorded through the other daemon", async () => {
    const w = word('wombat')
    const recorded = await grpcB.call((c: AgencyClient) => c.recordFinding, {
      kind: 'failure',
      text: `approach ${w} fails: it overflows`,
      paths: ['src/big.ts'],
      tags: ['approach:overflow'],
      refs: [],
      supersedes: ''
    })
    const hits = await waitFor(
      async () => {
        const found = await call('search_findings', { query: w })
        if (found.isError) throw new Error(found.text)
        return (found.json.hits as any[]).length > 0 ? (found.json.hits as any[]) : undefined
      },
      { what: 'the peer finding to be searchable over MCP' }
    )
    expect(hits).toHaveLength(1)
    expect(hits[0].entry.id).toBe(recorded.entry?.id)
    expect(hits[0].entry.author).toBe(b.peerId)
    expect(hits[0].finding.kind).toBe('failure')
    // The filters are passed through: the same words under another kind find nothing.
    const none = await call('search_findings', { query: w, kind: 'discovery' })
    expect(none.isError, none.text).toBe(false)
    expect(none.json.hits).toEqual([])
    const byTag = await call('search_findings', { tag: 'approach:overflow', kind: 'failure' })
    expect((byTag.json.hits as any[]).map(h => h.entry.id)).toContain(recorded.entry?.id)
  })

  it("send_message delivers into the second daemon's inbox; read_inbox shows its answer", async () => {
    const w = word('hello')
    const sent = await call('send_message', { to: b.peerId, text: `${w}: I take the parser` })
    expect(sent.isError, sent.text).toBe(false)
    expect(sent.json.to).toBe(b.peerId)
    const got = await waitFor(
      async () =>
        (await grpcB.call((c: AgencyClient) => c.readInbox, { after: 0, limit: 1000, all: true, peek: false })).messages.find(
          m => m.text === `${w}: I take the parser`
        ),
      { what: "the message in the second daemon's inbox" }
    )
    expect(got.from).toBe(a.peerId)
    expect(got.id).toBe(sent.json.id)

    // The answer, sent by the peer through gRPC, is read back over MCP.
    const answer = await grpcB.call((c: AgencyClient) => c.sendMessage, {
      to: a.peerId,
      text: `${w}: fine, I take the lexer`,
      thread: sent.json.thread,
      replyTo: sent.json.id
    })
    const inbox = await waitFor(
      async () => {
        const r = await call('read_inbox')
        if (r.isError) throw new Error(r.text)
        return (r.json.messages as any[]).find(m => m.id === answer.id)
      },
      { what: "the answer in this agent's inbox" }
    )
    expect(inbox.from).toBe(b.peerId)
    expect(inbox.replyTo).toBe(sent.json.id)
    expect(inbox.text).toBe(`${w}: fine, I take the lexer`)
  })

  it('calls with bad arguments return tool errors that say what was wrong, and change nothing', async () => {
    const before = (await grpcA.call((c: AgencyClient) => c.listTasks, { state: '' })).tasks.map(t => t.id).sort()

    const badTask = await call('claim', { task: 7 })
    expect(badTask.isError).toBe(true)
    expect(badTask.text).toMatch(/\btask\b/)

    const badKind = await call('record_finding', { kind: 'rumour', text: 'not a kind' })
    expect(badKind.isError).toBe(true)
    expect(badKind.text).toMatch(/\bkind\b/)

    const wrongType = await call('add_task', { id: 'typed-wrong', priority: 'high' })
    expect(wrongType.isError).toBe(true)
    expect(wrongType.text).toMatch(/priority/)

    const badLimit = await call('read_inbox', { limit: 0 })
    expect(badLimit.isError).toBe(true)
    expect(badLimit.text).toMatch(/limit/)

    // Schema-valid but refused by the daemon: a task id that is not a slug.
    const badSlug = await call('add_task', { id: 'Not A Slug!' })
    expect(badSlug.isError).toBe(true)
    expect(badSlug.text).toContain('INVALID_ARGUMENT')

    const after = (await grpcA.call((c: AgencyClient) => c.listTasks, { state: '' })).tasks.map(t => t.id).sort()
    expect(after).toEqual(before)
    const rumours = (
      await grpcA.call((c: AgencyClient) => c.searchFindings, {
        query: 'rumour',
        kind: '',
        pathPrefix: '',
        tag: '',
        author: '',
        since: 0,
        until: 0,
        limit: 10
      })
    ).hits
    expect(rumours).toEqual([])
  })

  it('a daemon error comes back as a tool error naming its code', async () => {
    const r = await call('claim', { task: 'no-such-task' })
    expect(r.isError).toBe(true)
    expect(r.text).toContain('NOT_FOUND')
    expect(r.text).toContain('no-such-task')
    expect((await grpcA.call((c: AgencyClient) => c.getStatus, {})).self?.claims.map(h => h.task)).not.toContain('no-such-task')
  })

  it('assist: a holder may not assist, an empty approach is refused, and nothing is written', async () => {
    const before = (await grpcA.call((c: AgencyClient) => c.getStatus, {})).logEntries
    const holding = await call('assist', { approach: 'try it another way' })
    expect(holding.isError).toBe(true)
    expect(holding.text).toContain('FAILED_PRECONDITION')
    expect(holding.text).toContain('you hold mcp-claimed')
    const empty = await call('assist', { task: 'mcp-claimed', approach: ' ' })
    expect(empty.isError).toBe(true)
    expect(empty.text).toContain('approach needs the approach')
    expect((await grpcA.call((c: AgencyClient) => c.getStatus, {})).logEntries).toBe(before)
  })

  it('request_integration and a background integrate reach the daemon: without a shared repository it is refused with the fix, and nothing is written', async () => {
    const before = (await grpcA.call((c: AgencyClient) => c.getStatus, {})).logEntries
    const r = await call('request_integration', {})
    expect(r.isError).toBe(true)
    expect(r.text).toContain('FAILED_PRECONDITION')
    expect(r.text).toContain('start it with --repo')
    const background = await call('integrate', { background: true })
    expect(background.isError).toBe(true)
    expect(background.text).toContain('start it with --repo')
    expect((await grpcA.call((c: AgencyClient) => c.getStatus, {})).logEntries).toBe(before)
  })

  it('every answer is a JSON object, lists included (clients such as Gemini CLI refuse anything else)', async () => {
    for (const name of ['ready', 'status', 'search_findings', 'read_inbox']) {
      const r = await client.callTool({ name, arguments: {} })
      const value = JSON.parse((r.content as Array<{ text?: string }>)[0].text ?? '')
      expect(typeof value === 'object' && value !== null && !Array.isArray(value), name).toBe(true)
    }
    const ready = await client.callTool({ name: 'ready', arguments: {} })
    expect(Array.isArray(JSON.parse((ready.content as Array<{ text?: string }>)[0].text ?? '').tasks)).toBe(true)
  })

  it('stdout carried nothing but protocol through all of the above; the log line went to stderr', () => {
    expect(clientErrors.map(e => e.message)).toEqual([])
    expect(mcpStderr).toContain('agency mcp: serving 19 tools')
    expect(mcpStderr).toContain(a.grpc)
  })
})

describe('agency mcp, spoken to by hand', () => {
  it('writes only JSON-RPC lines on stdout, answers every request, and exits when its stdin closes', async () => {
    const child = spawn(process.execPath, [AGENCY_BIN, 'mcp'], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, AGENCY_ADDR: a.grpc, AGENCY_LOG_LEVEL: 'trace' },
      stdio: ['pipe', 'pipe', 'pipe']
    })
    const exited = new Promise<number | null>(resolve => {
      child.once('exit', code => {
        resolve(code)
      })
    })
    let stderr = ''
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d
    })
    const lines: string[] = []
    createInterface({ input: child.stdout }).on('line', l => {
      lines.push(l)
    })
    try {
      const requests = [
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'by-hand', version: '0' } }
        },
        { jsonrpc: '2.0', method: 'notifications/initialized' },
        { jsonrpc: '2.0', id: 2, method: 'tools/list' },
        { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'status', arguments: { set_status: 'speaking MCP by hand' } } },
        { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'claim', arguments: { task: 42 } } },
        { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'claim', arguments: { task: 'nothing-here' } } }
      ]
      for (const r of requests) child.stdin.write(JSON.stringify(r) + '\n')
      await waitFor(() => lines.length >= 5, { what: 'answers to the five requests', timeoutMs: 60_000, intervalMs: 50 })
      child.stdin.end()
      expect(await exited).toBe(0)

      const messages = lines.map(l => JSON.parse(l) as { jsonrpc: string; id: number; result?: any; error?: unknown })
      expect(messages.every(m => m.jsonrpc === '2.0')).toBe(true)
      expect(messages.map(m => m.id).sort()).toEqual([1, 2, 3, 4, 5])
      const byId = new Map(messages.map(m => [m.id, m]))
      expect(byId.get(2)?.result.tools).toHaveLength(19)
      expect(byId.get(3)?.result.isError).toBeUndefined()
      expect(JSON.parse(byId.get(3)?.result.content[0].text).you.status).toBe('speaking MCP by hand')
      expect(byId.get(4)?.result.isError).toBe(true)
      expect(byId.get(4)?.result.content[0].text).toMatch(/task/)
      expect(byId.get(5)?.result.isError).toBe(true)
      expect(byId.get(5)?.result.content[0].text).toContain('NOT_FOUND')
      expect(stderr).toContain('agency mcp: serving 19 tools')
      // The status line really was set on the daemon.
      expect((await grpcA.call((c: AgencyClient) => c.getStatus, {})).self?.status).toBe('speaking MCP by hand')
    } finally {
      if (child.exitCode == null) child.kill('SIGKILL')
    }
  }, 120_000)

  it('a daemon that does not answer comes back as a tool error naming UNAVAILABLE', async () => {
    const down = new StdioClientTransport({ command: process.execPath, args: [AGENCY_BIN, 'mcp', '--addr', '127.0.0.1:1'], stderr: 'pipe' })
    const c = new Client({ name: 'agency-test-down', version: '0.0.0' })
    await c.connect(down)
    try {
      const r = await c.callTool({ name: 'status', arguments: {} })
      expect(r.isError).toBe(true)
      const text = (r.content as Array<{ text: string }>)[0].text
      expect(text).toContain('UNAVAILABLE')
      expect(text).toContain('127.0.0.1:1')
    } finally {
      await c.close()
    }
  }, 120_000)
})
