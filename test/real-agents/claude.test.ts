// `agentd --harness claude` with the real Claude Code CLI (node_modules/.bin/claude):
// one agent takes the greeter's one task (greeter-scenario.ts) and lands it.
// Claude Code talks to a scripted model over the Anthropic Messages API
// (models/anthropic-messages.ts, the only stand-in) with a placeholder key, a
// temporary HOME and no traffic beyond loopback. The model plays the shared
// prompt through Claude Code's own tools: the `agency` MCP tools
// (mcp__agency__*), Bash for the shell (the search, the branch, the tests, git),
// Write and Edit for the file; its first attempt fails the tests, and the
// second, an edit, passes.
import { afterEach, describe, expect, it } from 'vitest'
import {
  SCENARIO_TIMEOUT_MS,
  body,
  expectGreetIntegrated,
  expectOneCleanRun,
  startGreeter,
  waitForFinished,
  type GreeterRun
} from './greeter-scenario.js'
import { BRANCH_COMMAND, CLAUDE_CODE_TOOLS, nextMove } from './models/agent-script.js'
import { startAnthropicModel, type ScriptedAnthropicModel } from './models/anthropic-messages.js'
import { claudeCodeEnv, claudeInits, claudeResults, PERMISSION_DENIAL } from './claude-code.js'
import { GREETER, TEST_COMMAND } from './projects.js'

let run: GreeterRun | undefined
let model: ScriptedAnthropicModel | undefined

afterEach(async () => {
  await run?.cleanup()
  await model?.close()
  run = undefined
  model = undefined
})

/** The model's view of the end of the run, to explain a failure. */
function lastCalls(m: ScriptedAnthropicModel, n = 12): string {
  return m
    .toolCalls()
    .slice(-n)
    .map(
      c =>
        `${c.call.name} ${JSON.stringify(c.call.input).slice(0, 120)} -> ${c.outcome.isError ? 'ERROR ' : ''}${c.outcome.text.slice(0, 200)}`
    )
    .join('\n')
}

describe('agentd --harness claude: the real Claude Code CLI against a scripted Messages endpoint', () => {
  it(
    'takes the task, lands its commit with the Agency-Task trailer, exits 0 and is not restarted once the goal is met',
    async () => {
      const m = (model = await startAnthropicModel(conv => nextMove(conv, GREETER.redFirstPlaybook, CLAUDE_CODE_TOOLS)))
      const r = (run = await startGreeter('claude', async home => claudeCodeEnv(home, m.url)))
      // Stops early when the script cannot go on or Claude Code refused a call (it would never finish).
      const log = await waitForFinished(
        r,
        () => {
          if (m.errors().length > 0) return `the scripted model stopped: ${m.errors().join('\n')}`
          if (m.toolCalls().some(c => PERMISSION_DENIAL.test(c.outcome.text))) return 'Claude Code refused a tool call'
          return undefined
        },
        () => `--- the last tool calls ---\n${lastCalls(m)}`
      )

      // ---- the task is done, by this agent, its commit merged with the trailer; the failure it met is on record ----
      const me = r.daemon.peerId
      const entries = await expectGreetIntegrated(r)
      const failures = entries.filter(e => e.kind === 'finding' && body(e).kind === 'failure' && e.author === me)
      expect(failures.map(e => body(e).text as string).join('\n')).toMatch(/greet, attempt 1: the tests failed/)

      // ---- one run: Claude Code exited 0 and the supervisor did not start it again ----
      expectOneCleanRun(log, 'claude')
      const [init] = claudeInits(log)
      expect(init.mcp_servers).toEqual([{ name: 'agency', status: 'connected' }])
      expect(init.permissionMode).toBe('acceptEdits')
      expect(claudeResults(log).map(r => [r.subtype, r.is_error, r.permission_denials])).toEqual([['success', false, []]])

      // ---- what Claude Code sent: the agency tools on every turn, its own tools used, nothing refused ----
      const turns = m.turns()
      expect(new Set(turns.map(t => t.session)).size).toBe(1)
      for (const t of turns)
        expect(t.tools).toEqual(
          expect.arrayContaining([
            'Bash',
            'Write',
            'Edit',
            'mcp__agency__status',
            'mcp__agency__claim',
            'mcp__agency__integrate',
            'mcp__agency__done'
          ])
        )
      expect(m.errors()).toEqual([])
      const calls = m.toolCalls()
      const t = GREETER.task
      expect(calls.map(c => (c.call.name === 'Bash' ? String(c.call.input.command) : c.call.name))).toEqual([
        'mcp__agency__status',
        'mcp__agency__read_inbox',
        'mcp__agency__ready',
        'mcp__agency__claim',
        `agency find '${t.title}' --json`,
        BRANCH_COMMAND,
        'Write',
        TEST_COMMAND,
        'mcp__agency__record_finding',
        'Edit',
        TEST_COMMAND,
        `git add -A && git commit -q -m '${t.id}: ${t.title}'`,
        'mcp__agency__integrate',
        'mcp__agency__done',
        'mcp__agency__status',
        'mcp__agency__read_inbox'
      ])
      expect(calls.filter(c => PERMISSION_DENIAL.test(c.outcome.text)).map(c => `${c.call.name}: ${c.outcome.text}`)).toEqual([])
      // The shell found the agency command; the daemon had put the workspace on the task branch; the first test run was red.
      expect(calls[4].outcome).toMatchObject({ isError: false })
      expect(calls[5].outcome.text).toContain(`agency/${me}/${t.id}`)
      expect([calls[7].outcome.isError, calls[10].outcome.isError]).toEqual([true, false])
      expect(turns.at(-1)?.move).toMatchObject({ kind: 'answer' })
    },
    SCENARIO_TIMEOUT_MS
  )
})
