// The real Pi coding agent as an agent of the swarm: `agentd --harness pi` runs
// node_modules/.bin/pi in print mode in its workspace, as this test's user, with
// a temporary HOME and its data dir under the system temporary directory. Pi has
// no MCP client: it coordinates through the `agency` CLI in its bash tool, as the
// prompt says. Only the model is a stand-in (models/openai-chat.ts), named in the
// user's ~/.pi/agent/models.json as an OpenAI-compatible provider; Pi, its bash
// and write tools, the daemon, git and the tests are all real.
//
// One goal, one task: the agent claims it, writes greet.js, runs the goal's
// tests, commits, integrates and marks the task done, all with `agency` and git
// in bash; Pi exits 0 and is not started again once the goal is met.
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
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
import { PI_TOOLS, startChatStandIn, type ChatStandIn } from './models/openai-chat.js'
import { GREETER } from './projects.js'

/** The session files (*.jsonl) under a directory, at any depth; none if it does not exist. */
async function sessionFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true }).catch(() => [] as string[])
  return entries.filter(e => e.endsWith('.jsonl')).map(e => join(dir, e))
}

let run: GreeterRun | undefined
let model: ChatStandIn | undefined

afterAll(async () => {
  await run?.cleanup()
  await model?.close()
}, 60_000)

describe('agentd --harness pi (Pi 0.73 against a scripted OpenAI-compatible endpoint)', () => {
  it(
    'does the one task through the agency CLI in bash: claimed, committed, integrated with its trailer, done; Pi exits 0 and is not restarted',
    async () => {
      const m = (model = await startChatStandIn({ playbook: GREETER.playbook, dialect: PI_TOOLS }))
      let agentDir = ''
      const r = (run = await startGreeter('pi', async home => {
        // The user's own Pi configuration: a custom provider and it as the default model.
        agentDir = join(home, '.pi', 'agent')
        await mkdir(agentDir, { recursive: true })
        await writeFile(
          join(agentDir, 'models.json'),
          JSON.stringify({
            providers: { 'stand-in': { baseUrl: m.baseUrl, api: 'openai-completions', apiKey: 'anything', models: [{ id: m.model }] } }
          })
        )
        await writeFile(join(agentDir, 'settings.json'), JSON.stringify({ defaultProvider: 'stand-in', defaultModel: m.model }))
        // PI_OFFLINE: no update check or telemetry at start-up (nothing leaves loopback).
        return { PI_OFFLINE: '1' }
      }))
      const log = await waitForFinished(
        r,
        () => m.errors()[0],
        () => `The model's last turn: ${JSON.stringify(m.turns().at(-1)?.reply)}`
      )
      await expectGreetIntegrated(r)

      // ---- what Pi did, as the model saw it: every coordination step an `agency` command in bash ----
      expect(m.errors()).toEqual([])
      const turns = m.turns()
      const offered = (turns[0].body.tools as any[]).map(tool => tool.function.name)
      expect(offered).toEqual(expect.arrayContaining(['bash', 'write']))
      expect(offered.filter(name => name.startsWith('mcp'))).toEqual([])
      const replies = turns.map(turn => turn.reply)
      expect(sentCalls(replies, 'bash')).toEqual([
        '$ agency status',
        '$ agency inbox',
        '$ agency ready',
        '$ agency claim',
        '$ agency find',
        // The claim put the workspace on the task branch: the agent only checks.
        '$ git rev-parse',
        'write',
        '$ node --test',
        '$ git add',
        '$ agency integrate',
        '$ agency done',
        '$ agency status',
        '$ agency inbox'
      ])
      expect(replies.at(-1)).toEqual({ text: GOAL_MET_ANSWER })
      const last = turns.at(-1)?.turn
      expectTheLoop(last?.taken ?? [], r.daemon.peerId)
      // Every command ran (none waited for an approval or failed): Pi reports a failure as "Command exited with code N".
      expect(
        last?.taken
          .filter(s => /Command exited with code|aborted|denied/i.test(s.outcome.text))
          .map(s => `${JSON.stringify(s.call)}: ${s.outcome.text}`)
      ).toEqual([])

      // Print mode logs the final answer; the session (every step) is kept in the data dir, not in the user's ~/.pi.
      expect(log).toContain(GOAL_MET_ANSWER)
      const sessions = await sessionFiles(join(r.daemon.dataDir, 'harness', 'pi-sessions'))
      expect(sessions).toHaveLength(1)
      expect(await readFile(sessions[0], 'utf8')).toContain('agency integrate --task greet')
      expect(await sessionFiles(join(agentDir, 'sessions'))).toEqual([])
      expectOneCleanRun(log, 'pi')
    },
    SCENARIO_TIMEOUT_MS
  )
})
