// The scenario the real-CLI tests share: a bare shared repository seeded with a
// tiny project (a test for a greet function that does not exist yet), a goal
// whose test command is `node --test` with TAP output, one task on the board,
// and one agentd that runs a real agent CLI as its harness in a temporary HOME.
// Only the model behind the CLI is scripted (models/*.ts, which say so).
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join } from 'node:path'
import { promisify } from 'node:util'
import { expect } from 'vitest'
import { connectAgency } from '../../src/api/client.js'
import type { AgencyClient, StatusReply } from '../../src/gen/agency/v1/api.js'
import type { LocalDaemon } from '../../src/swarm/local-daemon.js'
import { REPO_ROOT, type Scratch } from '../agents/helpers.js'
import { waitFor } from '../helpers/wait-for.js'
import type { AgentSkills, TakenStep } from './models/scripted-agent.js'

const run = promisify(execFile)

/** Where the real CLIs are installed (devDependencies). */
export const CLI_BIN_DIR = join(REPO_ROOT, 'node_modules', '.bin')

/** A whole real-CLI scenario may take this long on a busy machine; on an idle one it takes seconds. */
export const SCENARIO_TIMEOUT_MS = 240_000

export const GREETER = {
  goal: 'A greet function: greet(name) returns "Hello, <name>!" (src/greet.js).',
  testCommand: 'node --test --test-reporter=tap',
  task: { id: 'greet', title: 'greet function', description: 'Write src/greet.js exporting greet(name), which returns "Hello, <name>!".', scope: ['src/**'] },
  seed: {
    'package.json': '{ "name": "greeter", "private": true, "type": "module" }\n',
    'test/greet.test.js': [
      'import { test } from \'node:test\'',
      'import assert from \'node:assert/strict\'',
      'import { greet } from \'../src/greet.js\'',
      '',
      'test(\'greet says hello to a name\', () => {',
      '  assert.equal(greet(\'Ada\'), \'Hello, Ada!\')',
      '})',
      ''
    ].join('\n')
  } as Record<string, string>,
  /** What the scripted model "knows how to write". */
  skills: {
    filesFor: () => ({ 'src/greet.js': 'export function greet (name) {\n  return `Hello, ${name}!`\n}\n' })
  } satisfies AgentSkills
}

async function git (args: string[], cwd?: string): Promise<string> {
  const env = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' }
  return (await run('git', args, { cwd, env, encoding: 'utf8' })).stdout.trim()
}

/** A bare repository at `<dir>/shared.git` whose main holds the greeter's seed. */
export async function seedSharedRepo (dir: string): Promise<string> {
  const work = await mkdtemp(join(tmpdir(), 'agency-greeter-seed-'))
  const bare = join(dir, 'shared.git')
  try {
    for (const [path, content] of Object.entries(GREETER.seed)) {
      await mkdir(dirname(join(work, path)), { recursive: true })
      await writeFile(join(work, path), content)
    }
    await git(['init', '-q', '-b', 'main'], work)
    await git(['add', '-A'], work)
    await git(['-c', 'user.name=seed', '-c', 'user.email=seed@agency.invalid', 'commit', '-q', '-m', 'seed: greeter'], work)
    await git(['init', '-q', '--bare', '-b', 'main', bare])
    await git(['push', '-q', bare, 'main'], work)
  } finally {
    await rm(work, { recursive: true, force: true })
  }
  return bare
}

export interface SeededAgent {
  daemon: LocalDaemon
  repo: string
  home: string
}

/**
 * One agentd on a fresh shared repository whose board holds the goal and the
 * task before the harness starts: the daemon is started once without a harness
 * to put them in its log, stopped, and started again on the same data dir with
 * `--harness <harness>`, so the CLI's first `status` already sees the work.
 * `env` is added to the daemon's (and so the harness's) environment over a
 * temporary HOME and a PATH that starts with node_modules/.bin.
 */
export async function startSeededAgent (scratch: Scratch, name: string, harness: string, setup: (home: string) => Promise<Record<string, string>>): Promise<SeededAgent> {
  const dir = await scratch.dir(`agency-${name}-`)
  const repo = await seedSharedRepo(dir)
  const home = join(dir, 'home')
  await mkdir(home, { recursive: true })
  // Every per-user directory the CLIs may use is inside the temporary HOME.
  const env = {
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    PATH: [CLI_BIN_DIR, process.env.PATH].filter(p => p != null && p !== '').join(delimiter),
    ...(await setup(home))
  }
  const dataDir = join(dir, 'data')
  const common = ['--repo', repo, '--mirror-dir', join(dir, 'mirrors'), '--settle-ms', '300']
  const seeder = await scratch.daemon(`${name}-seed`, { dataDir, logFile: join(dir, 'agentd-seed.log'), env, extraArgs: common })
  const api = connectAgency(seeder.grpc)
  try {
    await api.call((c: AgencyClient) => c.setGoal, { text: GREETER.goal, files: [], testCommand: GREETER.testCommand })
    const t = GREETER.task
    await api.call((c: AgencyClient) => c.addTask, { id: t.id, title: t.title, description: t.description, deps: [], scope: t.scope, priority: 0 })
  } finally {
    api.close()
  }
  if (await seeder.stop('SIGTERM') !== 0) throw new Error('the seeding agentd did not exit cleanly')
  const daemon = await scratch.daemon(name, { dataDir, logFile: join(dir, 'agentd.log'), env, extraArgs: [...common, '--harness', harness] })
  return { daemon, repo, home }
}

export async function harnessLog (d: LocalDaemon): Promise<string> {
  return await readFile(join(d.dataDir, 'harness.log'), 'utf8').catch(() => '')
}

/**
 * Waits until the supervisor has decided not to restart the harness (the goal
 * is met); fails at once when the harness has been started a third time, since
 * a run that ends without meeting the goal is restarted.
 */
export async function waitForHarnessFinished (d: LocalDaemon, explain: () => string = () => ''): Promise<string> {
  const log = await waitFor(async () => {
    const text = await harnessLog(d)
    return text.includes('agentd: work is done; not restarting the harness') || count(text, /agentd: starting /) >= 3 ? text : undefined
  }, { timeoutMs: SCENARIO_TIMEOUT_MS - 30_000, intervalMs: 500, what: 'the harness to finish and the supervisor to stop restarting it' })
  if (!log.includes('agentd: work is done')) throw new Error(`the harness was restarted twice without meeting the goal. ${explain()}\nharness.log without the prompt:\n${withoutPrompt(log).slice(-6000)}`)
  return log
}

/** The harness log minus the lines of the shared prompt that CLIs echo (markdown lists, tables, headings). */
function withoutPrompt (log: string): string {
  return log.split('\n').filter(l => !/^(\s{2,}|- |\||#|\d+\. |\*\*)/.test(l) && l.trim() !== '').join('\n')
}

export async function statusOf (d: LocalDaemon): Promise<StatusReply> {
  const api = connectAgency(d.grpc)
  try {
    return await api.call((c: AgencyClient) => c.getStatus, {})
  } finally {
    api.close()
  }
}

/** Each commit on the shared branch: sha, subject and full message. */
export async function sharedHistory (repo: string): Promise<Array<{ sha: string, message: string }>> {
  const out = await git(['--git-dir', repo, 'log', '--format=%H%x00%B%x01', 'main'])
  return out.split('\x01').map(s => s.trim()).filter(s => s !== '').map(s => {
    const [sha, message] = s.split('\x00')
    return { sha, message: message.trim() }
  })
}

export async function sharedFile (repo: string, path: string): Promise<string> {
  return await git(['--git-dir', repo, 'show', `main:${path}`])
}

/** The CLIs are devDependencies; say how to get them if one is missing. */
export function assertCli (name: string): string {
  const bin = join(CLI_BIN_DIR, name)
  if (!existsSync(bin)) throw new Error(`${bin} is missing: run npm install (the real agent CLIs are devDependencies)`)
  return bin
}

/**
 * The run went through the whole loop of the shared prompt, in order: the
 * board, the inbox, the ready tasks, a search from the shell, the claim, the
 * task branch the daemon switched to, the file, the tests, the commit,
 * integrate, done; every call came back with an answer and none was refused or
 * left waiting for a human.
 */
export function expectTheLoop (taken: TakenStep[], agentId: string): void {
  const brief = taken.map(({ step: s }) => s.kind === 'agency' ? s.tool : s.kind === 'shell' ? s.command : s.kind === 'write' ? `write ${s.path}` : s.kind)
  expect(brief).toEqual([
    'status', 'read_inbox', 'ready', `agency find '${GREETER.task.title}'`, 'claim', 'git rev-parse --abbrev-ref HEAD',
    'write src/greet.js', GREETER.testCommand, `git add -A && git commit -m '${GREETER.task.id}: ${GREETER.task.title}'`, 'integrate', 'done'
  ])
  expect(taken[5].output).toContain(`agency/${agentId}/${GREETER.task.id}`)
  for (const s of taken) expect(s.output).not.toMatch(/approv|permission|denied|rejected by user|not allowed|command not found/i)
}

/** The one run exited 0, and after it the supervisor ended supervision instead of restarting. */
export function expectExitedZeroThenFinished (log: string): void {
  const exited = log.indexOf('agentd: harness exited (code 0, signal null)')
  const finished = log.indexOf('agentd: work is done; not restarting the harness')
  expect(exited, log.slice(-4000)).toBeGreaterThan(-1)
  expect(finished).toBeGreaterThan(exited)
  expect(log.slice(finished)).not.toContain('agentd: starting ')
}

export function count (text: string, re: RegExp): number {
  return (text.match(new RegExp(re.source, re.flags.includes('g') ? re.flags : `${re.flags}g`)) ?? []).length
}
