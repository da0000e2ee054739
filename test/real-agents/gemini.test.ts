// The real Gemini CLI as an agent of the swarm: `agentd --harness gemini` runs
// node_modules/.bin/gemini headless in its workspace, as this test's user, with a
// temporary HOME and its data dir under the system temporary directory (where
// a settings file passed by GEMINI_CLI_SYSTEM_SETTINGS_PATH is refused as
// insecure). Only the model is a stand-in (models/gemini-api.ts, reached through
// GOOGLE_GEMINI_BASE_URL); the CLI, its MCP client talking to `agency mcp`, its
// write_file and shell tools, the daemon, git and the tests are all real.
//
// One goal, one task: the agent claims it over MCP, writes greet.js, runs the
// goal's tests, commits, integrates and marks the task done; the CLI exits 0 and
// is not started again once the goal is met.
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import type { AgencyClient } from '../../src/gen/agency/v1/api.js'
import { git, harnessLog } from './agent-daemon.js'
import {
  SCENARIO_TIMEOUT_MS,
  expectGreetIntegrated,
  expectOneCleanRun,
  expectTheLoop,
  sentCalls,
  startGreeter,
  waitForFinished,
  type GreeterRun
} from './greeter-scenario.js'
import { GOAL_MET_ANSWER } from './models/agent-script.js'
import { startGeminiStandIn, type GeminiStandIn } from './models/gemini-api.js'
import { GREETER } from './projects.js'

let run: GreeterRun | undefined
let model: GeminiStandIn | undefined

afterAll(async () => {
  await run?.cleanup()
  await model?.close()
}, 60_000)

describe('agentd --harness gemini (Gemini CLI 0.61 against a scripted Gemini API)', () => {
  it(
    'does the one task: claimed over MCP, committed, integrated with its trailer, done; .gemini/ stays out of git; the CLI exits 0 and is not restarted',
    async () => {
      const m = (model = await startGeminiStandIn({ playbook: GREETER.playbook }))
      const r = (run = await startGreeter('gemini', async home => {
        // The user's own settings: the login as Gemini CLI's auth dialog saves it (a Gemini API key), and
        // no usage statistics (they would be sent to Google: nothing here leaves loopback).
        await mkdir(join(home, '.gemini'), { recursive: true })
        await writeFile(
          join(home, '.gemini', 'settings.json'),
          JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } }, privacy: { usageStatisticsEnabled: false } })
        )
        return { GEMINI_API_KEY: 'anything', GOOGLE_GEMINI_BASE_URL: m.url }
      }))
      const log = await waitForFinished(
        r,
        () => m.errors()[0],
        () => `The model's last turn: ${JSON.stringify(m.turns().at(-1)?.reply)}`
      )
      await expectGreetIntegrated(r)

      // The settings Gemini read are in the workspace, ignored by git there.
      const workspace = (await r.api.call((c: AgencyClient) => c.getWorkspace, { task: '' })).path
      const settings = JSON.parse(await readFile(join(workspace, '.gemini', 'settings.json'), 'utf8'))
      expect(Object.keys(settings.mcpServers)).toEqual(['agency'])
      expect(await git(['status', '--porcelain', '--untracked-files=all'], workspace)).toBe('')
      expect(await git(['check-ignore', '.gemini/settings.json'], workspace)).toBe('.gemini/settings.json')

      // ---- what the CLI did, as the model saw it: the agency tools over MCP, its own file and shell tools ----
      expect(m.errors()).toEqual([])
      const turns = m.turns()
      const offered = new Set<string>(turns[0].body.tools.flatMap((tool: any) => (tool.functionDeclarations ?? []).map((f: any) => f.name)))
      for (const tool of [
        'mcp_agency_status',
        'mcp_agency_claim',
        'mcp_agency_integrate',
        'mcp_agency_done',
        'write_file',
        'run_shell_command'
      ])
        expect(offered).toContain(tool)
      const replies = turns.map(turn => turn.reply)
      const calls = sentCalls(replies, 'run_shell_command')
      expect(calls).toEqual([
        'mcp_agency_status',
        'mcp_agency_read_inbox',
        'mcp_agency_ready',
        'mcp_agency_claim',
        '$ agency find',
        // The claim put the workspace on the task branch: the agent only checks.
        '$ git rev-parse',
        'write_file',
        '$ node --test',
        '$ git add',
        'mcp_agency_integrate',
        'mcp_agency_done',
        'mcp_agency_status',
        'mcp_agency_read_inbox'
      ])
      expect(replies.at(-1)).toEqual({ text: GOAL_MET_ANSWER })
      const last = turns.at(-1)?.turn
      expectTheLoop(last?.taken ?? [], r.daemon.peerId)

      // ---- nothing waited for an approval: every tool ran and its result reached the model ----
      const events = (await harnessLog(r.daemon))
        .split('\n')
        .filter(l => l.startsWith('{'))
        .map(l => JSON.parse(l))
      const results = events.filter(e => e.type === 'tool_result')
      expect(results).toHaveLength(calls.length)
      expect(results.filter(r => r.status !== 'success')).toEqual([])
      expect(
        last?.taken
          .map(s => s.outcome.text)
          .filter(o =>
            /^error:|reported tool error|denied|approval/i.test(
              o.replace(/\\?"(approvalsPending|operator)\\?": ?(\d+|\\?"[^"\\]*\\?")/g, '')
            )
          )
      ).toEqual([])

      expectOneCleanRun(log, 'gemini')
    },
    SCENARIO_TIMEOUT_MS
  )
})
