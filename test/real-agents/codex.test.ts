// `agentd --harness codex` with the real Codex CLI (node_modules/.bin/codex):
// one agent takes the greeter's one task and lands it. Codex talks to a
// scripted model over the OpenAI Responses API (models/openai-responses.ts,
// the only stand-in), configured the way a user configures any provider: a
// custom model provider in $HOME/.codex/config.toml, no login. The model id is
// one Codex knows (gpt-5.5), so Codex sets up its tools as for that model: the
// `agency` MCP tools deferred behind its client-side tool_search (the model
// searches first; they come back as the namespace mcp__agency), apply_patch for
// the file, exec_command for the shell (the tests, git, and `agency find`, which
// needs the shim on the shell's PATH).
import { afterEach, describe, expect, it } from 'vitest'
import type { AgencyClient } from '../../src/gen/agency/v1/api.js'
import { waitFor } from '../helpers/wait-for.js'
import { count } from './agent-daemon.js'
import { codexHome } from './codex-home.js'
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
import { CODEX_TOOLS, startResponsesModel, type ResponsesModel } from './models/openai-responses.js'
import { GREETER, TEST_COMMAND } from './projects.js'

let run: GreeterRun | undefined
let model: ResponsesModel | undefined

afterEach(async () => {
  await run?.cleanup()
  await model?.close()
  run = undefined
  model = undefined
})

describe('agentd --harness codex: the real Codex CLI against a scripted Responses endpoint', () => {
  it(
    'takes the task, lands its commit with the Agency-Task trailer, exits 0 and is not restarted once the goal is met',
    async () => {
      const m = (model = await startResponsesModel({ playbook: GREETER.playbook, dialect: CODEX_TOOLS }))
      const r = (run = await startGreeter('codex', async home => await codexHome(home, m.baseUrl)))
      const log = await waitForFinished(
        r,
        () => m.errors()[0],
        () => `The model's last turn: ${JSON.stringify(m.turns().at(-1)?.move)}`
      )

      // ---- the task is done, by this agent, and its commit is on the shared branch with the trailer of its claim ----
      await expectGreetIntegrated(r)

      // ---- one run: Codex exited 0 and the supervisor did not start it again ----
      expectOneCleanRun(log, 'codex exec')

      // ---- nothing waited for approval, and the model's loop went through Codex's own tools ----
      expect(log).toMatch(/^approval: never$/m)
      expect(log).toMatch(/^sandbox: danger-full-access$/m)
      expect(m.errors()).toEqual([])
      const turns = m.turns()
      const last = turns[turns.length - 1]
      expect(last.move).toEqual({ kind: 'answer', text: GOAL_MET_ANSWER })
      expectTheLoop(last.taken, r.daemon.peerId)
      // The model knew the id: no fallback metadata, and the MCP tools were behind tool_search, which
      // loaded them in the namespace mcp__agency; Codex ran every one.
      expect(log).not.toMatch(/Model metadata for .* not found/)
      const calls = turns.map(t => t.call).filter(c => c != null)
      expect(calls[0].type).toBe('tool_search_call')
      expect(last.taken[0].step).toBe('loadTools')
      expect(calls.filter(c => c.namespace === 'mcp__agency').map(c => c.name)).toEqual([
        'status',
        'read_inbox',
        'ready',
        'claim',
        'integrate',
        'done',
        'status',
        'read_inbox'
      ])
      expect(count(log, /^mcp: agency\/\w+ \(completed\)$/m)).toBe(8)
      // The run's usage, from the session file Codex wrote: input and output apart, exactly as the
      // endpoint served them (100 in, 10 out per answer), not the human output's one total.
      const usage = await waitFor(
        async () => {
          const u = await r.api.call((c: AgencyClient) => c.getUsage, { by: '' })
          return (u.total?.runs ?? 0) >= 1 && u
        },
        { what: "the run's usage to be recorded", timeoutMs: 60_000 }
      )
      expect(usage.total).toMatchObject({ inputTokens: 100 * turns.length, outputTokens: 10 * turns.length })
      // The file went through Codex's apply_patch (a freeform custom tool).
      expect(calls.find(c => c.name === 'apply_patch')?.type).toBe('custom_tool_call')
      expect(last.taken.find(s => s.step === 'change')?.outcome.text).toMatch(/Success\. Updated the following files:\s+A src\/greet\.js/)
      // The shell keeps the agency shim on PATH (Codex runs it without a login shell).
      const find = last.taken.find(s => s.step === 'search')
      expect(find?.outcome.text).toMatch(/Process exited with code 0/)
      expect(find?.outcome.text).not.toMatch(/command not found/)
      const tests = last.taken.find(s => s.step === 'test')
      expect(tests?.call.input.cmd).toBe(TEST_COMMAND)
      expect(tests?.outcome.text).toMatch(/# pass 1/)

      // Every request was a Responses call to the scripted provider.
      expect(m.requests.every(r => r.method === 'POST' && r.path === '/v1/responses')).toBe(true)
      expect(m.requests[0].headers.authorization).toBe('Bearer not-a-real-key')
    },
    SCENARIO_TIMEOUT_MS
  )
})
