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
import { harnessLog } from './agent-daemon.js'
import { piDialect, startChatStandIn, type ChatStandIn } from './models/openai-chat.js'
import { DONE_MESSAGE } from './models/scripted-agent.js'
import { GREET_SKILLS, diagnosis, gaveUp, expectGreetIntegrated, expectOneCleanRun, oneTask, waitForGreetDone, type OneTask } from './one-task.js'

const TIMEOUT_MS = 4 * 60_000

/** The session files (*.jsonl) under a directory, at any depth; none if it does not exist. */
async function sessionFiles (dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true }).catch(() => [] as string[])
  return entries.filter(e => e.endsWith('.jsonl')).map(e => join(dir, e))
}

let t: OneTask | undefined
let model: ChatStandIn | undefined

afterAll(async () => {
  await t?.cleanup()
  await model?.close()
}, 60_000)

describe('agentd --harness pi (Pi 0.73 against a scripted OpenAI-compatible endpoint)', () => {
  it('does the one task through the agency CLI in bash: claimed, committed, integrated with its trailer, done; Pi exits 0 and is not restarted', async () => {
    const run = t = await oneTask('agency-pi-')
    const m = model = await startChatStandIn({ skills: GREET_SKILLS, dialect: piDialect })
    // The user's own Pi configuration: a custom provider and it as the default model.
    const agentDir = join(run.home, '.pi', 'agent')
    await mkdir(agentDir, { recursive: true })
    await writeFile(join(agentDir, 'models.json'), JSON.stringify({
      providers: { 'stand-in': { baseUrl: m.baseUrl, api: 'openai-completions', apiKey: 'anything', models: [{ id: m.model }] } }
    }))
    await writeFile(join(agentDir, 'settings.json'), JSON.stringify({ defaultProvider: 'stand-in', defaultModel: m.model }))

    try {
      // PI_OFFLINE: no update check or telemetry at start-up (nothing leaves loopback).
      await run.start({ harness: 'pi', env: { PI_OFFLINE: '1' } })
      const task = await waitForGreetDone(run, () => gaveUp(m.turns()), TIMEOUT_MS - 60_000)
      await expectGreetIntegrated(run, task)

      // ---- what Pi did, as the model saw it: every coordination step an `agency` command in bash ----
      const turns = m.turns()
      const offered = (turns[0].body.tools as any[]).map(tool => tool.function.name)
      expect(offered).toEqual(expect.arrayContaining(['bash', 'write']))
      expect(offered.filter(name => name.startsWith('mcp'))).toEqual([])
      const replies = turns.map(turn => turn.reply)
      const calls = replies.flatMap(r => r != null && 'name' in r ? [r] : [])
      const commands = calls.map(c => c.name === 'bash' ? String(c.args.command).split(' ').slice(0, 2).join(' ') : c.name)
      expect(commands).toEqual([
        'agency status', 'agency inbox', 'agency ready', 'agency find', 'agency claim',
        // The claim put the workspace on the task branch: the agent only checks.
        'git rev-parse',
        'write', 'node --test', 'git add', 'agency integrate', 'agency done'
      ])
      expect(replies.at(-1)).toEqual({ text: DONE_MESSAGE })
      // Every command ran (none waited for an approval or failed): Pi reports a failure as "Command exited with code N".
      expect(turns.at(-1)?.history?.filter(h => /Command exited with code|aborted|denied/i.test(h.output)).map(h => `${JSON.stringify(h.step)}: ${h.output}`)).toEqual([])

      // Print mode logs the final answer; the session (every step) is kept in the data dir, not in the user's ~/.pi.
      expect(await harnessLog(run.dataDir)).toContain(DONE_MESSAGE)
      const sessions = await sessionFiles(join(run.dataDir, 'harness', 'pi-sessions'))
      expect(sessions).toHaveLength(1)
      expect(await readFile(sessions[0], 'utf8')).toContain('agency integrate --task greet')
      expect(await sessionFiles(join(agentDir, 'sessions'))).toEqual([])
      await expectOneCleanRun(run, 'pi')
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${await diagnosis(run, m.turns())}`, { cause: err })
    }
  }, TIMEOUT_MS)
})
