// `agentd --harness copilot` with the real GitHub Copilot CLI
// (node_modules/.bin/copilot): one agent takes the greeter's one task and lands
// it. Copilot runs in its offline bring-your-own-model mode (COPILOT_OFFLINE,
// COPILOT_PROVIDER_BASE_URL, COPILOT_PROVIDER_WIRE_API=responses, COPILOT_MODEL;
// `copilot help providers`): no GitHub login, no network beyond loopback. The
// model behind it is scripted (models/openai-responses.ts, the only stand-in)
// and plays the shared prompt through Copilot's own tools: the `agency` MCP
// tools (functions "agency-<name>"), bash for the shell, and
// its apply_patch tool for the file.
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { Scratch } from '../agents/helpers.js'
import { GREETER, SCENARIO_TIMEOUT_MS, assertCli, count, expectExitedZeroThenFinished, expectTheLoop, sharedFile, sharedHistory, startSeededAgent, statusOf, waitForHarnessFinished } from './greeter-scenario.js'
import { MODEL_ID, startResponsesModel, type ResponsesModel } from './models/openai-responses.js'
import { DONE_MESSAGE } from './models/scripted-agent.js'

let scratch: Scratch | undefined
let model: ResponsesModel | undefined

afterEach(async () => {
  await scratch?.cleanup()
  await model?.close()
  scratch = undefined
  model = undefined
})

describe('agentd --harness copilot: the real Copilot CLI, offline, against a scripted Responses endpoint', () => {
  it('takes the task, lands its commit with the Agency-Task trailer, exits 0 and is not restarted once the goal is met', async () => {
    assertCli('copilot')
    model = await startResponsesModel({ skills: GREETER.skills })
    const baseUrl = model.baseUrl
    scratch = new Scratch()
    const { daemon, repo } = await startSeededAgent(scratch, 'copilot', 'copilot', async home => ({
      COPILOT_HOME: join(home, '.copilot'),
      COPILOT_OFFLINE: 'true',
      COPILOT_PROVIDER_BASE_URL: baseUrl,
      COPILOT_PROVIDER_WIRE_API: 'responses',
      COPILOT_MODEL: MODEL_ID
    }))
    const log = await waitForHarnessFinished(daemon, () => `The model's last turn: ${JSON.stringify(model?.turns().at(-1)?.answered)}`)

    // ---- the task is done, by this agent ----
    const status = await statusOf(daemon)
    const task = status.tasks.find(t => t.id === GREETER.task.id)
    expect(task?.state).toBe('done')
    expect(task?.holder).toBe(daemon.peerId)
    expect(status.tests?.failed).toBe(0)
    expect(status.tests?.passed).toBeGreaterThan(0)

    // ---- its commit is on the shared branch, merged with the trailer of its claim ----
    const history = await sharedHistory(repo)
    expect(history.some(c => c.message.startsWith(`${GREETER.task.id}: ${GREETER.task.title}`))).toBe(true)
    expect(history[0].message).toContain(`Agency-Task: ${GREETER.task.id}@${String(task?.epoch)}`)
    expect(history[0].message).toContain(`Agency-Agent: ${daemon.peerId}`)
    expect(await sharedFile(repo, 'src/greet.js')).toContain('Hello, ${name}!')

    // ---- one run: Copilot exited 0 and the supervisor did not start it again ----
    expect(count(log, /agentd: starting copilot -p /), log.slice(-8000)).toBe(1)
    expect(count(log, /agentd: harness exited/)).toBe(1)
    expectExitedZeroThenFinished(log)

    // ---- nothing waited for a confirmation, and the loop went through Copilot's own tools ----
    const turns = model.turns()
    const last = turns[turns.length - 1]
    expect(last.answered).toEqual({ kind: 'finish', text: DONE_MESSAGE })
    expectTheLoop(last.taken, daemon.peerId)
    // The agency MCP tools: plain functions "agency-<name>" in the first tool list (deferTools "never":
    // no namespace to search first), and Copilot ran each call the model made.
    const calls = turns.map(t => t.call).filter(c => c != null)
    expect(calls.filter(c => c.name.startsWith('agency-')).map(c => [c.name, c.namespace])).toEqual(
      ['status', 'read_inbox', 'ready', 'claim', 'integrate', 'done'].map(t => [`agency-${t}`, undefined]))
    const offered = (model.requests[0].body.tools as any[]).filter(t => /^agency-/.test(t.name ?? ''))
    expect(offered.map(t => t.type)).toEqual(offered.map(() => 'function'))
    expect(offered.map(t => t.name)).toContain('agency-integrate')
    expect(offered.filter(t => t.defer_loading === true)).toEqual([])
    // The file went through Copilot's apply_patch (a freeform custom tool), and it says it added it.
    const write = last.taken.find(s => s.step.kind === 'write')
    expect(calls.find(c => c.name === 'apply_patch')?.type).toBe('custom_tool_call')
    expect(write?.output).toMatch(/Added 1 file\(s\): .*src\/greet\.js/)
    // bash keeps the agency shim on PATH.
    const find = last.taken.find(s => s.step.kind === 'shell' && s.step.command.startsWith('agency find'))
    expect(find?.output).toMatch(/completed with exit code 0/)
    expect(find?.output).not.toMatch(/command not found/)
    const tests = last.taken.find(s => s.step.kind === 'shell' && s.step.command === GREETER.testCommand)
    expect(tests?.output).toMatch(/# pass 1/)

    // Every request was a Responses call to the BYOK endpoint; offline mode reached for nothing else.
    expect(model.requests.every(r => r.method === 'POST' && r.path === '/v1/responses')).toBe(true)
  }, SCENARIO_TIMEOUT_MS)
})
