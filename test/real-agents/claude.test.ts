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
import { connectAgency } from '../../src/api/client.js'
import type { AgencyClient, LogEntry } from '../../src/gen/agency/v1/api.js'
import { Scratch, waitFor } from '../agents/helpers.js'
import { GREETER, SCENARIO_TIMEOUT_MS, assertCli, count, expectExitedZeroThenFinished, harnessLog, sharedFile, sharedHistory, startSeededAgent, statusOf } from './greeter-scenario.js'
import { BRANCH_COMMAND, CLAUDE_CODE_TOOLS, nextMove } from './models/agent-script.js'
import { startAnthropicModel, type ScriptedAnthropicModel } from './models/anthropic-messages.js'
import { claudeCodeEnv, claudeInits, claudeResults, PERMISSION_DENIAL } from './helpers.js'
import { GREETER_PLAYBOOK } from './projects.js'

let scratch: Scratch | undefined
let model: ScriptedAnthropicModel | undefined

afterEach(async () => {
  await scratch?.cleanup()
  await model?.close()
  scratch = undefined
  model = undefined
})

/** The model's view of the end of the run, to explain a failure. */
function lastCalls (m: ScriptedAnthropicModel, n = 12): string {
  return m.toolCalls().slice(-n).map(c => `${c.call.name} ${JSON.stringify(c.call.input).slice(0, 120)} -> ${c.outcome.isError ? 'ERROR ' : ''}${c.outcome.text.slice(0, 200)}`).join('\n')
}

describe('agentd --harness claude: the real Claude Code CLI against a scripted Messages endpoint', () => {
  it('takes the task, lands its commit with the Agency-Task trailer, exits 0 and is not restarted once the goal is met', async () => {
    assertCli('claude')
    model = await startAnthropicModel(conv => nextMove(conv, GREETER_PLAYBOOK, CLAUDE_CODE_TOOLS))
    const m = model
    scratch = new Scratch()
    const { daemon, repo } = await startSeededAgent(scratch, 'claude', 'claude', async home => claudeCodeEnv(home, m.url))

    // Stops early when the script cannot go on or Claude Code refused a call (it would never finish).
    const outcome = await waitFor('Claude Code to finish and the supervisor to stop restarting it', async () => {
      if (m.errors().length > 0) return 'the scripted model stopped'
      if (m.toolCalls().some(c => PERMISSION_DENIAL.test(c.outcome.text))) return 'Claude Code refused a tool call'
      return (await harnessLog(daemon)).includes('agentd: work is done; not restarting the harness') && 'finished'
    }, SCENARIO_TIMEOUT_MS - 30_000, 500).catch((err: Error) => err.message)
    const log = await harnessLog(daemon)
    expect(outcome, `${m.errors().join('\n')}\n--- the last tool calls ---\n${lastCalls(m)}\n--- harness.log ---\n${log.slice(-3000)}`).toBe('finished')

    // ---- the task is done, by this agent, and the failure it met is on record ----
    const status = await statusOf(daemon)
    const task = status.tasks.find(t => t.id === GREETER.task.id)
    expect(task).toMatchObject({ state: 'done', holder: daemon.peerId })
    expect(status.tests).toMatchObject({ passed: 1, failed: 0 })
    const api = connectAgency(daemon.grpc)
    const entries: LogEntry[] = []
    try {
      for await (const e of api.stream((c: AgencyClient) => c.watchLog({ after: 0, follow: false }))) entries.push(e)
    } finally {
      api.close()
    }
    const body = (e: LogEntry): any => JSON.parse(e.bodyJson)
    expect(entries.filter(e => e.kind === 'done').map(e => [body(e).task, e.author])).toEqual([[GREETER.task.id, daemon.peerId]])
    const failures = entries.filter(e => e.kind === 'finding' && body(e).kind === 'failure' && e.author === daemon.peerId)
    expect(failures.map(e => body(e).text as string).join('\n')).toMatch(/greet, attempt 1: the tests failed/)

    // ---- its commit is on the shared branch, merged with the trailer of its claim ----
    const history = await sharedHistory(repo)
    expect(history.some(c => c.message.startsWith(`${GREETER.task.id}: ${GREETER.task.title}`))).toBe(true)
    expect(history[0].message).toContain(`Agency-Task: ${GREETER.task.id}@${String(task?.epoch)}`)
    expect(history[0].message).toContain(`Agency-Agent: ${daemon.peerId}`)
    expect(await sharedFile(repo, 'src/greet.js')).toContain('return `Hello, ${name}!`')

    // ---- one run: Claude Code exited 0 and the supervisor did not start it again ----
    expect(count(log, /agentd: starting claude /)).toBe(1)
    expect(count(log, /agentd: harness exited/)).toBe(1)
    expectExitedZeroThenFinished(log)
    const [init] = claudeInits(log)
    expect(init.mcp_servers).toEqual([{ name: 'agency', status: 'connected' }])
    expect(init.permissionMode).toBe('acceptEdits')
    expect(claudeResults(log).map(r => [r.subtype, r.is_error, r.permission_denials])).toEqual([['success', false, []]])

    // ---- what Claude Code sent: the agency tools on every turn, its own tools used, nothing refused ----
    const turns = m.turns()
    expect(new Set(turns.map(t => t.session)).size).toBe(1)
    for (const t of turns) expect(t.tools).toEqual(expect.arrayContaining(['Bash', 'Write', 'Edit', 'mcp__agency__status', 'mcp__agency__claim', 'mcp__agency__integrate', 'mcp__agency__done']))
    expect(m.errors()).toEqual([])
    const calls = m.toolCalls()
    expect(calls.map(c => c.call.name === 'Bash' ? String(c.call.input.command) : c.call.name)).toEqual([
      'mcp__agency__status', 'mcp__agency__read_inbox', 'mcp__agency__ready', `agency find '${GREETER.task.title}' --json`, 'mcp__agency__claim', BRANCH_COMMAND,
      'Write', GREETER.testCommand, 'mcp__agency__record_finding', 'Edit', GREETER.testCommand,
      `git add -A && git commit -q -m '${GREETER.task.id}: ${GREETER.task.title}'`, 'mcp__agency__integrate', 'mcp__agency__done',
      'mcp__agency__status', 'mcp__agency__read_inbox'
    ])
    expect(calls.filter(c => PERMISSION_DENIAL.test(c.outcome.text)).map(c => `${c.call.name}: ${c.outcome.text}`)).toEqual([])
    // The shell found the agency command; the daemon had put the workspace on the task branch; the first test run was red.
    expect(calls[3].outcome).toMatchObject({ isError: false })
    expect(calls[5].outcome.text).toContain(`agency/${daemon.peerId}/${GREETER.task.id}`)
    expect([calls[7].outcome.isError, calls[10].outcome.isError]).toEqual([true, false])
    expect(turns.at(-1)?.move).toMatchObject({ kind: 'answer' })
  }, SCENARIO_TIMEOUT_MS)
})
