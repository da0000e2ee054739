// The one-task scenario the real-agent tests share: a greet project in a bare
// shared repository, a goal with its test command and one task on the board
// before the agent first looks, then one agentd running the real agent CLI
// (`--harness <name>`) against a scripted model, until the task is done.
// Everything lives in one directory under the system temporary directory,
// HOME included; `cleanup()` stops what was started and removes it.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'vitest'
import { connectAgency, type Agency } from '../../src/api/client.js'
import type { AgencyClient, LogEntry, TaskView } from '../../src/gen/agency/v1/api.js'
import { waitFor } from '../agents/helpers.js'
import { DONE_MESSAGE, type AgentSkills, type AgentStep } from './models/scripted-agent.js'
import { GREET_SOLUTION, GREET_TEST_COMMAND, countMatches, git, greetProject, harnessLog, startAgentDaemon, type AgentDaemon } from './agent-daemon.js'

/** What the scripted model "knows how to write": greet.js for the greet task. */
export const GREET_SKILLS: AgentSkills = {
  filesFor: (task): Record<string, string> => task.id === 'greet' ? { 'greet.js': GREET_SOLUTION } : {}
}

/** The scripted agent's reason to stop, if it stopped anywhere but at the end of its task. */
export function gaveUp (turns: Array<{ step?: AgentStep }>): string | undefined {
  const stop = turns.map(t => t.step).find(step => step?.kind === 'finish' && step.text !== DONE_MESSAGE)
  return stop?.kind === 'finish' ? `the scripted agent stopped early: ${stop.text}` : undefined
}

export interface OneTask {
  root: string
  home: string
  dataDir: string
  shared: string
  tokenFile: string
  /** Starts the daemon with the harness; the board is set up first. */
  start: (o: { harness: string, env: Record<string, string> }) => Promise<void>
  daemon: () => AgentDaemon
  api: () => Agency
  cleanup: () => Promise<void>
}

export async function oneTask (prefix: string): Promise<OneTask> {
  const root = await mkdtemp(join(tmpdir(), prefix))
  const dataDir = join(root, 'agent')
  const tokenFile = join(root, 'api-token')
  const shared = await greetProject(root)
  let daemon: AgentDaemon | undefined
  let api: Agency | undefined
  const home = join(root, 'home')
  // The API wants a token: a CLI whose tools do not pass it on to `agency` cannot work.
  const common = ['--repo', shared, '--settle-ms', '300', '--heartbeat-ms', '400', '--api-token-file', tokenFile]
  return {
    root,
    home,
    dataDir,
    shared,
    tokenFile,
    start: async ({ harness, env }) => {
      const setup = await startAgentDaemon({ name: 'solo', dataDir, home, env, extraArgs: common })
      const setupApi = connectAgency(setup.grpc, { tokenFile })
      try {
        await setupApi.call((c: AgencyClient) => c.setGoal, { text: 'a greet function', files: [], testCommand: GREET_TEST_COMMAND })
        await setupApi.call((c: AgencyClient) => c.addTask, { id: 'greet', title: 'a greet function', description: 'greet(name) returns "Hello, <name>!" from greet.js', deps: [], scope: ['greet.js'], priority: 0 })
      } finally {
        setupApi.close()
        await setup.stop()
      }
      daemon = await startAgentDaemon({ name: 'solo', dataDir, home, env, extraArgs: [...common, '--harness', harness] })
      api = connectAgency(daemon.grpc, { tokenFile })
    },
    daemon: () => { if (daemon == null) throw new Error('not started'); return daemon },
    api: () => { if (api == null) throw new Error('not started'); return api },
    cleanup: async () => {
      api?.close()
      await daemon?.stop()
      await rm(root, { recursive: true, force: true })
    }
  }
}

/**
 * Waits for the greet task to be done, and for the supervisor to leave the
 * finished CLI stopped. Stops early, with the reason, when the scripted agent
 * gave up or the CLI failed (exited non-zero).
 */
export async function waitForGreetDone (t: OneTask, gaveUp: () => string | undefined, timeoutMs: number): Promise<TaskView> {
  const outcome = await waitFor('the greet task to be done', async () => {
    const task = (await t.api().call((c: AgencyClient) => c.getTask, { id: 'greet' })).task
    if (task?.state === 'done') return task
    const failed = /agentd: harness exited \(code [1-9]\d*/.exec(await harnessLog(t.dataDir))
    return gaveUp() ?? (failed != null ? `the CLI failed: ${failed[0]}` : undefined)
  }, timeoutMs, 500)
  if (typeof outcome === 'string') throw new Error(outcome)
  await waitFor('the supervisor to leave the finished CLI stopped', async () => (await harnessLog(t.dataDir)).includes('work is done; not restarting the harness'), 60_000, 500)
  return outcome
}

export async function wholeLog (a: Agency): Promise<LogEntry[]> {
  const out: LogEntry[] = []
  for await (const e of a.stream((c: AgencyClient, m) => c.watchLog({ after: 0, follow: false }, m))) out.push(e)
  return out
}

/**
 * What every harness must have done: the task claimed and done by this agent
 * alone, one merge on the shared branch carrying `Agency-Task: greet@<epoch>`,
 * greet.js there and nothing else new, the goal's tests run once and green.
 */
export async function expectGreetIntegrated (t: OneTask, task: TaskView): Promise<{ commit: string, epoch: number }> {
  const me = t.daemon().peerId
  const log = await wholeLog(t.api())
  const body = (e: LogEntry): any => JSON.parse(e.bodyJson)
  expect(log.filter(e => e.kind === 'done').map(e => [body(e).task, e.author])).toEqual([['greet', me]])
  expect(log.filter(e => e.kind === 'claim' && body(e).task === 'greet').map(e => e.author)).toEqual([me])
  const merged = log.filter(e => e.kind === 'integration' && body(e).result === 'merged')
  expect(merged).toHaveLength(1)
  const { commit, epoch } = body(merged[0]) as { commit: string, epoch: number }
  expect(task.epoch).toBe(epoch)

  expect(await git(['--git-dir', t.shared, 'rev-parse', 'main'])).toBe(commit)
  const trailers = await git(['--git-dir', t.shared, 'log', '--format=%(trailers:key=Agency-Task,valueonly)', 'main'])
  expect(trailers.split('\n').filter(l => l.trim() !== '')).toEqual([`greet@${epoch}`])
  const files = (await git(['--git-dir', t.shared, 'ls-tree', '-r', '--name-only', 'main'])).split('\n')
  expect(files.sort()).toEqual(['README.md', 'greet.js', 'package.json', 'test/greet.test.js'])
  expect(await git(['--git-dir', t.shared, 'show', 'main:greet.js'])).toBe(GREET_SOLUTION.trim())
  // proto3 JSON leaves zeros out.
  expect(log.filter(e => e.kind === 'test_run').map(e => [body(e).commit, body(e).passed, body(e).failed ?? 0])).toEqual([[commit, 1, 0]])
  return { commit, epoch }
}

/** One run of `command`, which ended by itself with 0, and no start after it. */
export async function expectOneCleanRun (t: OneTask, command: string): Promise<void> {
  const hl = await harnessLog(t.dataDir)
  expect(countMatches(hl, new RegExp(`agentd: starting ${command} `))).toBe(1)
  expect(countMatches(hl, /agentd: harness exited \(code 0, signal null\)/)).toBe(1)
  expect(hl).not.toMatch(/agentd: harness exited \(code [1-9]/)
}

/** What a failing real-agent test prints: the ends of the harness log and the daemon's log, and the model's turns. */
export async function diagnosis (t: OneTask, turns: Array<{ step?: unknown, history?: Array<unknown> }>): Promise<string> {
  let agentd = ''
  try { agentd = t.daemon().stderr() } catch { /* not started */ }
  const model = turns.map(turn => `${JSON.stringify(turn.step)}\n  after: ${JSON.stringify(turn.history?.at(-1) ?? null).slice(0, 1500)}`).join('\n')
  return `--- harness.log ---\n${(await harnessLog(t.dataDir)).slice(-6000)}\n--- agentd ---\n${agentd}\n--- model turns ---\n${model}`
}
