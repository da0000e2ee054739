// The real Claude Code CLI (node_modules/.bin/claude) as an agent of the swarm:
// `agentd --harness claude` starts it in the agent's workspace with the shared
// prompt and the agency MCP server, and a scripted model on loopback (the only
// stand-in; see models/) plays an agent that follows the prompt. The work is
// done with Claude Code's own tools (Write, Edit, Bash) and the MCP tools; the
// outcome is read from the daemon, the shared repository and the harness log.
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { connectAgency, type Agency } from '../../src/api/client.js'
import type { AgencyClient, LogEntry } from '../../src/gen/agency/v1/api.js'
import { AGENCY_BIN, Scratch, execFileP, waitFor } from '../agents/helpers.js'
import { CLAUDE_CODE_TOOLS, nextMove } from './models/agent-script.js'
import { startAnthropicModel, type ScriptedAnthropicModel } from './models/anthropic-messages.js'
import { claudeCodeEnv, claudeInits, claudeResults, count, git, harnessLog, PERMISSION_DENIAL, seedSharedRepo } from './helpers.js'
import { GREET, TEST_COMMAND } from './projects.js'

const TIMEOUT_MS = 180_000

let scratch: Scratch | undefined
let model: ScriptedAnthropicModel | undefined
let api: Agency | undefined

afterAll(async () => {
  api?.close()
  await scratch?.cleanup()
  await model?.close()
}, 60_000)

async function agency (grpc: string, ...args: string[]): Promise<any> {
  const env: NodeJS.ProcessEnv = {}
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('AGENCY_')) env[k] = v
  const { stdout } = await execFileP(process.execPath, [AGENCY_BIN, ...args, '--addr', grpc, '--json'], { env, timeout: 60_000 })
  return JSON.parse(stdout)
}

async function wholeLog (a: Agency): Promise<LogEntry[]> {
  const out: LogEntry[] = []
  for await (const e of a.stream((c: AgencyClient) => c.watchLog({ after: 0, follow: false }))) out.push(e)
  return out
}

const body = (e: LogEntry): any => JSON.parse(e.bodyJson)

/** The model's view of the end of the run, to explain a failure. */
function lastCalls (m: ScriptedAnthropicModel, n = 12): string {
  return m.toolCalls().slice(-n).map(c => `${c.call.name} ${JSON.stringify(c.call.input).slice(0, 120)} -> ${c.outcome.isError ? 'ERROR ' : ''}${c.outcome.text.slice(0, 200)}`).join('\n')
}

describe('agentd --harness claude (the real Claude Code CLI, a scripted model)', () => {
  it('claims the task, writes and tests with its own tools, integrates, is done, exits 0 and is not restarted', async () => {
    scratch = new Scratch()
    const dir = await scratch.dir('agency-claude-')
    const home = join(dir, 'home')
    const repo = await seedSharedRepo(dir, GREET.files)
    model = await startAnthropicModel(conv => nextMove(conv, GREET.playbook, CLAUDE_CODE_TOOLS))
    const env = claudeCodeEnv(home, model.url)
    const dataDir = join(dir, 'agent')
    const flags = ['--repo', repo, '--settle-ms', '300']

    // The board first, so that the agent's first look finds the goal and its task:
    // agentd without a harness, then again on the same data dir with Claude Code.
    const setup = await scratch.daemon('claude-1', { dataDir, env, extraArgs: flags })
    await agency(setup.grpc, 'goal', 'set', GREET.goal, '--test', TEST_COMMAND)
    await agency(setup.grpc, 'task', 'add', GREET.task.id, GREET.task.title, '--description', GREET.task.description, ...GREET.task.scope.flatMap(s => ['--scope', s]))
    expect(await setup.stop('SIGTERM')).toBe(0)
    const d = await scratch.daemon('claude-1', { dataDir, env, extraArgs: [...flags, '--harness', 'claude'] })
    api = connectAgency(d.grpc)

    const m = model
    const outcome = await waitFor('Claude Code to finish and the supervisor to stop restarting it', async () => {
      if (m.errors().length > 0) return 'the scripted model stopped'
      if (m.toolCalls().some(c => PERMISSION_DENIAL.test(c.outcome.text))) return 'Claude Code refused a tool call'
      return (await harnessLog(dataDir)).includes('work is done; not restarting the harness') && 'finished'
    }, TIMEOUT_MS, 500).catch((err: Error) => err.message)
    const log = await harnessLog(dataDir)
    expect(outcome, `${m.errors().join('\n')}\n--- the last tool calls ---\n${lastCalls(m)}\n--- harness.log ---\n${log.slice(-3000)}`).toBe('finished')

    // ---- the CLI ran once, exited 0, and was not started again ----
    expect(count(log, /agentd: starting claude /)).toBe(1)
    expect(count(log, /harness exited \(code 0, signal null\)/)).toBe(1)
    expect(count(log, /harness exited/)).toBe(1)
    const [init] = claudeInits(log)
    expect(init.mcp_servers).toEqual([{ name: 'agency', status: 'connected' }])
    expect(init.permissionMode).toBe('acceptEdits')
    const results = claudeResults(log)
    expect(results).toHaveLength(1)
    expect(results[0]).toMatchObject({ subtype: 'success', is_error: false, permission_denials: [] })

    // ---- what Claude Code sent the model: the agency tools on every turn, its own tools used, nothing refused ----
    const turns = model.turns()
    expect(new Set(turns.map(t => t.session)).size).toBe(1)
    for (const t of turns) expect(t.tools).toEqual(expect.arrayContaining(['Bash', 'Write', 'Edit', 'mcp__agency__status', 'mcp__agency__claim', 'mcp__agency__integrate', 'mcp__agency__done']))
    expect(model.errors()).toEqual([])
    const calls = model.toolCalls()
    const names = calls.map(c => c.call.name)
    for (const used of ['mcp__agency__status', 'mcp__agency__claim', 'Write', 'Edit', 'Bash', 'mcp__agency__integrate', 'mcp__agency__done']) expect(names).toContain(used)
    expect(calls.filter(c => PERMISSION_DENIAL.test(c.outcome.text)).map(c => `${c.call.name}: ${c.outcome.text}`)).toEqual([])
    // The first attempt's test run failed in Claude Code's shell, the second passed.
    const testRuns = calls.filter(c => c.call.name === 'Bash' && c.call.input.command === TEST_COMMAND)
    expect(testRuns.map(c => c.outcome.isError)).toEqual([true, false])
    expect(turns.at(-1)?.move).toMatchObject({ kind: 'answer' })

    // ---- the board: done by this agent, and the failure it met is on record ----
    const task = (await api.call((c: AgencyClient) => c.getTask, { id: GREET.task.id })).task
    expect(task).toMatchObject({ state: 'done', holder: d.peerId })
    const entries = await wholeLog(api)
    const dones = entries.filter(e => e.kind === 'done')
    expect(dones.map(e => [body(e).task, e.author])).toEqual([[GREET.task.id, d.peerId]])
    const failures = entries.filter(e => e.kind === 'finding' && body(e).kind === 'failure' && e.author === d.peerId)
    expect(failures.map(e => body(e).text as string).join('\n')).toMatch(/greet, attempt 1: the tests failed/)
    const status = await api.call((c: AgencyClient) => c.getStatus, {})
    expect(status.tests).toMatchObject({ passed: 1, failed: 0 })

    // ---- the shared branch holds the work, merged under the claim's fence ----
    const merged = entries.filter(e => e.kind === 'integration' && body(e).result === 'merged')
    expect(merged).toHaveLength(1)
    const epoch = body(merged[0]).epoch as number
    expect(await git(['--git-dir', repo, 'log', 'main', '--format=%B'])).toContain(`Agency-Task: ${GREET.task.id}@${epoch}`)
    expect(await git(['--git-dir', repo, 'show', 'main:greet.js'])).toContain('return `Hello, ${name}!`')
    expect(await git(['--git-dir', repo, 'ls-tree', '--name-only', '-r', 'main'])).toContain('test/greet.test.js')
  }, TIMEOUT_MS + 60_000)
})
