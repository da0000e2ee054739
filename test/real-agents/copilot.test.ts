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
import {
  SCENARIO_TIMEOUT_MS,
  expectGreetIntegrated,
  expectOneCleanRun,
  expectTheLoop,
  startGreeter,
  waitForFinished,
  type GreeterRun
} from './greeter-scenario.js'
import { GOAL_MET_ANSWER } from './models/agent-script.js'
import { COPILOT_TOOLS, MODEL_ID, startResponsesModel, type ResponsesModel } from './models/openai-responses.js'
import { GREETER } from './projects.js'

let run: GreeterRun | undefined
let model: ResponsesModel | undefined

afterEach(async () => {
  await run?.cleanup()
  await model?.close()
  run = undefined
  model = undefined
})

describe('agentd --harness copilot: the real Copilot CLI, offline, against a scripted Responses endpoint', () => {
  it(
    'takes the task, lands its commit with the Agency-Task trailer, exits 0 and is not restarted once the goal is met',
    async () => {
      const m = (model = await startResponsesModel({ playbook: GREETER.playbook, dialect: COPILOT_TOOLS }))
      const r = (run = await startGreeter('copilot', async home => ({
        COPILOT_HOME: join(home, '.copilot'),
        COPILOT_OFFLINE: 'true',
        COPILOT_PROVIDER_BASE_URL: m.baseUrl,
        COPILOT_PROVIDER_WIRE_API: 'responses',
        COPILOT_MODEL: MODEL_ID
      })))
      const log = await waitForFinished(
        r,
        () => m.errors()[0],
        () => `The model's last turn: ${JSON.stringify(m.turns().at(-1)?.move)}`
      )

      // ---- the task is done, by this agent, and its commit is on the shared branch with the trailer of its claim ----
      await expectGreetIntegrated(r)

      // ---- one run: Copilot exited 0 and the supervisor did not start it again ----
      expectOneCleanRun(log, 'copilot -p')

      // ---- nothing waited for a confirmation, and the loop went through Copilot's own tools ----
      expect(m.errors()).toEqual([])
      const turns = m.turns()
      const last = turns[turns.length - 1]
      expect(last.move).toEqual({ kind: 'answer', text: GOAL_MET_ANSWER })
      expectTheLoop(last.taken, r.daemon.peerId)
      // The agency MCP tools: plain functions "agency-<name>" in the first tool list (deferTools "never":
      // no namespace to search first), and Copilot ran each call the model made.
      const calls = turns.map(t => t.call).filter(c => c != null)
      expect(calls.filter(c => c.name.startsWith('agency-')).map(c => [c.name, c.namespace])).toEqual(
        ['status', 'read_inbox', 'ready', 'claim', 'integrate', 'done', 'status', 'read_inbox'].map(t => [`agency-${t}`, undefined])
      )
      const offered = (m.requests[0].body.tools as any[]).filter(t => /^agency-/.test(t.name ?? ''))
      expect(offered.map(t => t.type)).toEqual(offered.map(() => 'function'))
      expect(offered.map(t => t.name)).toContain('agency-integrate')
      expect(offered.filter(t => t.defer_loading === true)).toEqual([])
      // The file went through Copilot's apply_patch (a freeform custom tool), and it says it added it.
      expect(calls.find(c => c.name === 'apply_patch')?.type).toBe('custom_tool_call')
      expect(last.taken.find(s => s.step === 'change')?.outcome.text).toMatch(/Added 1 file\(s\): .*src\/greet\.js/)
      // bash keeps the agency shim on PATH.
      const find = last.taken.find(s => s.step === 'search')
      expect(find?.outcome.text).toMatch(/completed with exit code 0/)
      expect(find?.outcome.text).not.toMatch(/command not found/)
      expect(last.taken.find(s => s.step === 'test')?.outcome.text).toMatch(/# pass 1/)

      // Every request was a Responses call to the BYOK endpoint; offline mode reached for nothing else.
      expect(m.requests.every(r => r.method === 'POST' && r.path === '/v1/responses')).toBe(true)
    },
    SCENARIO_TIMEOUT_MS
  )
})
