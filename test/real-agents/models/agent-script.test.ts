// The scripted agent's decisions, without a CLI: a conversation is grown one
// move at a time against canned tool results, the way an endpoint would see it.
import { describe, expect, it } from 'vitest'
import {
  BRANCH_COMMAND,
  CLAUDE_CODE_TOOLS,
  nextMove,
  replay,
  reportsFailedExit,
  ScriptError,
  type Conversation,
  type Move,
  type Playbook,
  type ToolCall,
  type ToolOutcome
} from './agent-script.js'
import { CODEX_TOOLS } from './openai-responses.js'

const PROMPT = 'You are ada.\n\nYour agent id is `agent-a`. Your daemon listens at 127.0.0.1:1.'
const MCP = [
  'status',
  'read_inbox',
  'ready',
  'search_findings',
  'claim',
  'add_task',
  'add_tasks',
  'done',
  'integrate',
  'wait',
  'record_finding',
  'release'
].map(t => `mcp__agency__${t}`)
const TOOLS = ['Bash', 'Write', 'Edit', ...MCP]

const BOOK: Playbook = {
  plan: [
    { id: 'a', title: 'A', description: 'first', scope: ['a.js'] },
    { id: 'b', title: 'B', description: 'second', deps: ['a'], scope: ['b.js'] }
  ],
  work: { a: [[{ path: 'a.js', content: 'a' }]], b: [[{ path: 'b.js', content: 'b' }]] }
}

const ok = (value: unknown): ToolOutcome => ({ text: JSON.stringify(value), isError: false })
const task = (id: string): Record<string, unknown> => ({ id, title: id.toUpperCase(), scope: [`${id}.js`], state: 'open' })

/** Plays the script against `answer` until it answers or `limit` calls were made; returns the calls and the last move. */
function play(answer: (call: ToolCall, n: number) => ToolOutcome, tools = TOOLS, limit = 40): { calls: ToolCall[]; last: Move } {
  const conv: Conversation = { prompt: PROMPT, tools, cwd: '/ws', history: [] }
  for (let n = 0; n < limit; n++) {
    const move = nextMove(conv, BOOK, CLAUDE_CODE_TOOLS)
    if (move.kind === 'answer') return { calls: conv.history.map(h => h.call), last: move }
    conv.history.push({ call: move.call, outcome: answer(move.call, n) })
  }
  return { calls: conv.history.map(h => h.call), last: nextMove(conv, BOOK, CLAUDE_CODE_TOOLS) }
}

describe('the scripted agent', () => {
  it("after LOST claims the next again (the daemon picks), works it with the CLI's tools and answers once the goal is met", () => {
    let doneA = false
    let claims = 0
    const { calls, last } = play(call => {
      const input = call.input
      switch (call.name) {
        case 'mcp__agency__status':
          return ok({ you: { held: [] }, goal: 'g (tests: npm test)', goalMet: doneA })
        case 'mcp__agency__ready':
          return ok({ tasks: doneA ? [] : [task('b'), task('a')], pending: [] })
        case 'mcp__agency__claim':
          return ok(++claims === 1 ? { outcome: 'LOST', task: 'b', winner: 'peer' } : { outcome: 'HELD', task: 'a', epoch: 3 })
        case 'mcp__agency__integrate':
          return ok({ result: 'merged' })
        case 'mcp__agency__done':
          doneA = true
          return ok({ id: 'a', state: 'done' })
        case 'Bash':
          return { text: input.command === BRANCH_COMMAND ? 'agency/agent-a/a' : '[]', isError: false }
        default:
          return ok([])
      }
    })
    // No task named: claim --next, twice.
    expect(calls.filter(c => c.name === 'mcp__agency__claim').map(c => c.input)).toEqual([{}, {}])
    expect(calls.map(c => c.name)).toContain('Write')
    expect(calls.find(c => c.name === 'Write')?.input).toEqual({ file_path: '/ws/a.js', content: 'a' })
    expect(calls.filter(c => c.name === 'Bash').map(c => c.input.command)).toEqual([
      'agency find A --json',
      BRANCH_COMMAND,
      'npm test',
      "git add -A && git commit -q -m 'a: A'"
    ])
    expect(calls.at(-1)).toEqual({ name: 'mcp__agency__read_inbox', input: {} })
    expect(last.kind).toBe('answer')
  })

  it('holding plan, adds the planned tasks with their deps and scopes as one plan, then marks plan done', () => {
    const { calls } = play(
      call => {
        if (call.name === 'mcp__agency__status') return ok({ goal: { text: 'g', testCommand: 't' }, tasks: [task('plan')] })
        if (call.name === 'mcp__agency__ready') return ok([task('plan')])
        if (call.name === 'mcp__agency__claim') return ok({ outcome: 'HELD', task: 'plan', epoch: 1 })
        return ok({})
      },
      TOOLS,
      8
    )
    const afterClaim = calls.slice(calls.findIndex(c => c.name === 'mcp__agency__claim') + 2)
    expect(afterClaim.slice(0, 2)).toEqual([
      {
        name: 'mcp__agency__add_tasks',
        input: {
          tasks: [
            { id: 'a', title: 'A', description: 'first', deps: [], scope: ['a.js'] },
            { id: 'b', title: 'B', description: 'second', deps: ['a'], scope: ['b.js'] }
          ]
        }
      },
      { name: 'mcp__agency__done', input: { task: 'plan' } }
    ])
  })

  it('after a red test run records the failure and makes the next attempt; with no attempt left it releases the task', () => {
    const { calls } = play(
      call => {
        if (call.name === 'mcp__agency__status') return ok({ goal: { text: 'g', testCommand: 't' }, tasks: [task('a')] })
        if (call.name === 'mcp__agency__ready') return ok([task('a')])
        if (call.name === 'mcp__agency__claim') return ok({ outcome: 'HELD', task: 'a', epoch: 1 })
        if (call.name === 'Bash' && call.input.command === BRANCH_COMMAND) return ok('agency/agent-a/a')
        if (call.name === 'Bash' && call.input.command === 't') return { text: 'Exit code 1\nnot ok 1 - a', isError: true }
        return ok({})
      },
      TOOLS,
      10
    )
    expect(calls.slice(-3).map(c => c.name)).toEqual(['Bash', 'mcp__agency__record_finding', 'mcp__agency__release'])
    expect(calls.at(-2)?.input).toMatchObject({ kind: 'failure', paths: ['a.js'] })
  })

  it('without the MCP tools, runs the agency command in the shell, the plan on its stdin', () => {
    const { calls } = play(
      call => {
        const cmd = String(call.input.command)
        if (cmd.startsWith('agency status')) return ok({ goal: { text: 'g', testCommand: 't' }, tasks: [task('a')] })
        if (cmd.startsWith('agency ready')) return ok({ tasks: [task('a')], pending: [] })
        return ok({ outcome: 'HELD', task: 'a', epoch: 1 })
      },
      ['Bash', 'Write', 'Edit'],
      5
    )
    expect(calls.map(c => c.input.command)).toEqual([
      'agency status --json',
      'agency inbox --json',
      'agency ready --json',
      'agency claim --next --json',
      'agency find A --json'
    ])
    const plan = play(
      call => {
        const cmd = String(call.input.command)
        if (cmd.startsWith('agency status')) return ok({ you: { held: [] }, goal: 'g (tests: t)', goalMet: false })
        if (cmd.startsWith('agency ready')) return ok([task('plan')])
        return ok({ outcome: 'HELD', task: 'plan', epoch: 1 })
      },
      ['Bash', 'Write', 'Edit'],
      6
    ).calls.at(-1)
    const piped = /^printf '%s\\n' '(.*)' \| agency task add-plan - --json$/.exec(String(plan?.input.command))
    expect(JSON.parse(piped?.[1] ?? 'null')).toEqual(BOOK.plan?.map(t => ({ deps: [], ...t })))
  })

  it('refuses a conversation it did not make', () => {
    const conv: Conversation = {
      prompt: PROMPT,
      tools: TOOLS,
      history: [{ call: { name: 'Bash', input: { command: 'rm -rf /' } }, outcome: ok('') }]
    }
    expect(() => nextMove(conv, BOOK, CLAUDE_CODE_TOOLS)).toThrow(ScriptError)
    expect(() => nextMove({ ...conv, prompt: 'hello', history: [] }, BOOK, CLAUDE_CODE_TOOLS)).toThrow(/agent id/)
  })

  it('searches for deferred MCP tools first where the CLI offers a tool search, then calls them in their namespace', () => {
    const conv: Conversation = { prompt: PROMPT, tools: ['tool_search', 'exec_command', 'apply_patch'], history: [] }
    const first = nextMove(conv, BOOK, CODEX_TOOLS)
    expect(first).toMatchObject({ kind: 'call', call: CODEX_TOOLS.toolSearch })
    if (first.kind !== 'call') return
    conv.history.push({ call: first.call, outcome: { text: 'status read_inbox ready claim', isError: false } })
    conv.tools.push('mcp__agency/status', 'mcp__agency/read_inbox')
    const second = replay(conv, BOOK, CODEX_TOOLS)
    expect(second.taken.map(s => s.step)).toEqual(['loadTools'])
    expect(second.move).toMatchObject({ kind: 'call', call: { namespace: 'mcp__agency', name: 'status', input: {} } })
    // With the tools offered from the start, there is nothing to search for.
    expect(nextMove({ ...conv, history: [] }, BOOK, CODEX_TOOLS)).toMatchObject({
      kind: 'call',
      call: { namespace: 'mcp__agency', name: 'status' }
    })
  })

  it('reads a failed shell command from the exit code the CLI reports', () => {
    for (const text of ['Process exited with code 1', 'Command exited with code 2', '<exited with exit code 1>', 'Exit Code: 1'])
      expect(reportsFailedExit(text), text).toBe(true)
    for (const text of ['Process exited with code 0', 'completed with exit code 0', 'Exit Code: (none)', '# pass 1'])
      expect(reportsFailedExit(text), text).toBe(false)
  })
})
