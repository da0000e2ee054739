// The one-task scenario every real-CLI test shares: the greeter project
// (projects.ts) in a bare shared repository, a goal with its test command and
// one task on the board before the agent first looks, and one agentd running a
// real agent CLI (`--harness <name>`, in agency's sandbox: --sandbox auto) in a temporary HOME against a scripted
// model (models/*.ts, which say they stand in for the model only), until the
// goal is met. The API wants a token, so a CLI whose tools do not pass it on to
// `agency` cannot work. Then what every such test asserts: the task done by
// this agent alone, its commit on the shared branch with the trailer of its
// claim, the loop of the prompt in order, one run that exited 0 and no restart.
import { existsSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { expect } from 'vitest'
import { connectAgency, type Agency } from '../../src/client/agency.js'
import type { AgencyClient, LogEntry } from '../../src/gen/agency/v1/api.js'
import { waitFor } from '../helpers/wait-for.js'
import { AgentDaemons, CLI_BIN_DIR, count, git, harnessLog, seedSharedRepo, type AgentDaemon } from './agent-daemon.js'
import { BRANCH_COMMAND, type TakenStep } from './models/agent-script.js'
import { GREETER, TEST_COMMAND } from './projects.js'

/** A whole real-CLI scenario may take this long on a busy machine; on an idle one it takes seconds. */
export const SCENARIO_TIMEOUT_MS = 240_000

export interface GreeterRun {
  daemon: AgentDaemon
  api: Agency
  /** The bare shared repository. */
  shared: string
  home: string
  cleanup: () => Promise<void>
}

/**
 * One agentd on a fresh shared repository whose board holds the goal and the
 * task before the harness starts: the daemon is started once without a harness
 * to put them in its log, stopped, and started again on the same data dir with
 * `--harness <harness>`, so the CLI's first `status` already sees the work.
 * `setup` writes the CLI's configuration into the temporary HOME and returns
 * the environment it needs.
 */
export async function startGreeter(harness: string, setup: (home: string) => Promise<Record<string, string>>): Promise<GreeterRun> {
  assertCli(harness)
  const daemons = new AgentDaemons()
  try {
    const root = await daemons.dir(`agency-${harness}-`)
    const shared = await seedSharedRepo(root, GREETER.files)
    const home = join(root, 'home')
    await mkdir(home, { recursive: true })
    const env = await setup(home)
    const dataDir = join(root, 'agent')
    const tokenFile = join(root, 'api-token')
    const common = {
      name: 'solo',
      dataDir,
      home,
      env,
      extraArgs: ['--repo', shared, '--settle-ms', '300', '--heartbeat-ms', '400', '--api-token-file', tokenFile]
    }
    const seeder = await daemons.start(common)
    const seedApi = connectAgency(seeder.grpc, { tokenFile })
    try {
      await seedApi.call((c: AgencyClient) => c.setGoal, { text: GREETER.goal, files: [], testCommand: TEST_COMMAND })
      const t = GREETER.task
      await seedApi.call((c: AgencyClient) => c.addTask, {
        id: t.id,
        title: t.title,
        description: t.description,
        deps: [],
        scope: t.scope,
        priority: 0
      })
    } finally {
      seedApi.close()
    }
    if ((await seeder.stop()) !== 0) throw new Error(`the seeding agentd did not exit cleanly:\n${seeder.stderr()}`)
    const daemon = await daemons.start({ ...common, extraArgs: [...common.extraArgs, '--harness', harness] })
    const api = connectAgency(daemon.grpc, { tokenFile })
    return {
      daemon,
      api,
      shared,
      home,
      cleanup: async () => {
        api.close()
        await daemons.cleanup()
      }
    }
  } catch (err) {
    await daemons.cleanup()
    throw err
  }
}

/** The CLIs are devDependencies; say how to get them if one is missing. */
export function assertCli(name: string): string {
  const bin = join(CLI_BIN_DIR, name)
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run npm install (the real agent CLIs are devDependencies)`)
  return bin
}

/**
 * Waits until the supervisor has decided not to restart the harness (the goal
 * is met) and returns the harness log. Fails at once, saying why, when
 * `stopEarly` names a reason (the scripted model could not go on, a call was
 * refused), the CLI exited non-zero, or it was started a third time.
 */
export async function waitForFinished(
  run: GreeterRun,
  stopEarly: () => string | undefined,
  explain: () => string | Promise<string> = () => ''
): Promise<string> {
  const outcome = await waitFor(
    async () => {
      const log = await harnessLog(run.daemon)
      if (log.includes('agentd: work is done; not restarting the harness')) return { log }
      const failed = /agentd: harness exited \(code [1-9]\d*/.exec(log)?.[0]
      return (
        stopEarly() ??
        (failed != null
          ? `the CLI failed: ${failed}`
          : count(log, /agentd: starting /) >= 3
            ? 'the harness was restarted twice without meeting the goal'
            : undefined)
      )
    },
    { what: 'the harness to finish and the supervisor to stop restarting it', timeoutMs: SCENARIO_TIMEOUT_MS - 30_000, intervalMs: 500 }
  ).catch((err: Error) => err.message)
  if (typeof outcome === 'string') {
    throw new Error(
      `${outcome}\n${await explain()}\n--- harness.log without the prompt ---\n${withoutPrompt(await harnessLog(run.daemon)).slice(-6000)}\n--- agentd ---\n${run.daemon.stderr()}`
    )
  }
  return outcome.log
}

/** The harness log minus the lines of the shared prompt that CLIs echo (markdown lists, tables, headings). */
function withoutPrompt(log: string): string {
  return log
    .split('\n')
    .filter(l => !/^(\s{2,}|- |\||#|\d+\. |\*\*)/.test(l) && l.trim() !== '')
    .join('\n')
}

export async function wholeLog(a: Agency): Promise<LogEntry[]> {
  const out: LogEntry[] = []
  for await (const e of a.stream((c: AgencyClient, m) => c.watchLog({ after: 0, follow: false }, m))) out.push(e)
  return out
}

export const body = (e: LogEntry): any => JSON.parse(e.bodyJson)

/**
 * The task claimed and done by this agent alone, the goal's tests green, one
 * merge on the shared branch: the task's commit carrying `Agency-Task:
 * greet@<epoch of the claim>` and `Agency-Agent: <this agent>`, greet.js as the
 * solution and nothing else new. Returns the log for more.
 */
export async function expectGreetIntegrated(run: GreeterRun): Promise<LogEntry[]> {
  const me = run.daemon.peerId
  const t = GREETER.task
  const status = await run.api.call((c: AgencyClient) => c.getStatus, {})
  const task = status.tasks.find(x => x.id === t.id)
  expect(task).toMatchObject({ state: 'done', holder: me })
  expect(status.tests).toMatchObject({ passed: 1, failed: 0 })
  const log = await wholeLog(run.api)
  expect(log.filter(e => e.kind === 'done').map(e => [body(e).task, e.author])).toEqual([[t.id, me]])
  expect(log.filter(e => e.kind === 'claim' && body(e).task === t.id).map(e => e.author)).toEqual([me])
  const merged = log.filter(e => e.kind === 'integration' && body(e).result === 'merged')
  expect(merged).toHaveLength(1)
  const { commit, epoch } = body(merged[0]) as { commit: string; epoch: number }
  expect(task?.epoch).toBe(epoch)

  expect(await git(['--git-dir', run.shared, 'rev-parse', 'main'])).toBe(commit)
  const messages = (await git(['--git-dir', run.shared, 'log', '--format=%B%x00', 'main'])).split('\x00').map(m => m.trim())
  expect(messages.some(m => m.startsWith(`${t.id}: ${t.title}`))).toBe(true)
  expect(messages[0]).toContain(`Agency-Agent: ${me}`)
  const trailers = await git(['--git-dir', run.shared, 'log', '--format=%(trailers:key=Agency-Task,valueonly)', 'main'])
  expect(trailers.split('\n').filter(l => l.trim() !== '')).toEqual([`${t.id}@${epoch}`])
  const files = (await git(['--git-dir', run.shared, 'ls-tree', '-r', '--name-only', 'main'])).split('\n')
  expect(files.sort()).toEqual([...Object.keys(GREETER.files), 'src/greet.js'].sort())
  expect(await git(['--git-dir', run.shared, 'show', 'main:src/greet.js'])).toBe(GREETER.solution.trim())
  // proto3 JSON leaves zeros out.
  expect(log.filter(e => e.kind === 'test_run').map(e => [body(e).commit, body(e).passed, body(e).failed ?? 0])).toEqual([[commit, 1, 0]])
  return log
}

/** One run of `command`, which exited 0 by itself, and after it the supervisor ended supervision instead of restarting. */
export function expectOneCleanRun(log: string, command: string): void {
  expect(count(log, new RegExp(`agentd: starting ${command} `)), log.slice(-4000)).toBe(1)
  expect(count(log, /agentd: harness exited/)).toBe(1)
  const exited = log.indexOf('agentd: harness exited (code 0, signal null)')
  const finished = log.indexOf('agentd: work is done; not restarting the harness')
  expect(exited).toBeGreaterThan(-1)
  expect(finished).toBeGreaterThan(exited)
  expect(log.slice(finished)).not.toContain('agentd: starting ')
}

/**
 * The run went through the whole loop of the shared prompt, in order (GREETER.playbook:
 * the tests pass at once): the board, the inbox, the ready tasks, the claim
 * (claim --next), a search from the shell, the task branch the daemon switched to, the file, the
 * tests, the commit, integrate, done, and round again to see the goal met;
 * every call came back with an answer and none was refused or left waiting for
 * a human. A tool search the CLI needs first (Codex) is not part of the loop.
 */
export function expectTheLoop(taken: TakenStep[], agentId: string): void {
  const loop = taken.filter(s => s.step !== 'loadTools')
  const brief = loop.map(({ intent: i }) =>
    i.kind === 'agency' ? i.tool : i.kind === 'shell' ? i.command : i.kind === 'write' ? `write ${i.path}` : i.kind
  )
  const t = GREETER.task
  expect(brief).toEqual([
    'status',
    'read_inbox',
    'ready',
    'claim',
    `agency find '${t.title}' --json`,
    BRANCH_COMMAND,
    'write src/greet.js',
    TEST_COMMAND,
    `git add -A && git commit -q -m '${t.id}: ${t.title}'`,
    'integrate',
    'done',
    'status',
    'read_inbox'
  ])
  expect(loop[5].outcome.text).toContain(`agency/${agentId}/${t.id}`)
  expect(loop[7].outcome.isError).toBe(false)
  // agency status's own fields about the operator's approvals are not a refusal of the agent's command.
  const refusal = /approv|permission|denied|rejected by user|not allowed|command not found/i
  for (const s of taken)
    expect(s.outcome.text.replace(/\\?"(approvalsPending|operator)\\?": ?(\d+|\\?"[^"\\]*\\?")/g, '')).not.toMatch(refusal)
}

/** What a stand-in sent, turn by turn: each call by its tool's name, a call of the shell tool as `$ <first two words>`. */
export function sentCalls(
  replies: Array<{ name: string; args: Record<string, unknown> } | { text: string } | undefined>,
  shell: string
): string[] {
  return replies.flatMap(r =>
    r != null && 'name' in r ? [r.name === shell ? `$ ${String(r.args.command).split(' ').slice(0, 2).join(' ')}` : r.name] : []
  )
}
