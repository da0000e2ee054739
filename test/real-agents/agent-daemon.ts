// An agentd for the real-agent tests, started the way a user starts one: as
// this test's user, in a clean environment (a temporary HOME, PATH with the
// installed agent CLIs, the model settings the test names) rather than the test
// runner's own, which carries VITEST=true and other settings a CLI reacts to.
// Also a tiny shared project: a bare repository whose one test fails until a
// `greet` function exists.
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { userInfo } from 'node:os'
import { delimiter, dirname, join } from 'node:path'
import { createInterface } from 'node:readline'
import { promisify } from 'node:util'
import { AGENTD_BIN, REPO_ROOT, assertBuilt } from '../agents/helpers.js'

const run = promisify(execFile)

export interface AgentDaemonOptions {
  name: string
  dataDir: string
  /** The user's HOME for this run (a temporary one). */
  home: string
  /** More environment: the model endpoint and key the CLI reads. */
  env?: Record<string, string>
  extraArgs?: string[]
}

export interface AgentDaemon {
  peerId: string
  grpc: string
  dataDir: string
  child: ChildProcess
  /** The end of agentd's stderr (its log). */
  stderr: () => string
  /** SIGTERM (the harness goes down with the daemon), SIGKILL if it hangs. */
  stop: () => Promise<void>
}

/** PATH for the daemon and its harness: the installed agent CLIs, this node, then the usual. */
export function agentPath (): string {
  return [join(REPO_ROOT, 'node_modules', '.bin'), dirname(process.execPath), process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin'].join(delimiter)
}

export async function startAgentDaemon (o: AgentDaemonOptions): Promise<AgentDaemon> {
  assertBuilt()
  const user = userInfo().username
  const env: NodeJS.ProcessEnv = {
    PATH: agentPath(),
    HOME: o.home,
    USER: user,
    LOGNAME: user,
    LANG: 'C.UTF-8',
    AGENCY_LOG_LEVEL: 'info',
    ...o.env
  }
  const args = [AGENTD_BIN, '--data-dir', o.dataDir, '--name', o.name, '--listen', '/ip4/127.0.0.1/tcp/0', '--grpc', '127.0.0.1:0', ...(o.extraArgs ?? [])]
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env })
  let stderr = ''
  child.stderr.setEncoding('utf8')
  child.stderr.on('data', (chunk: string) => { stderr = (stderr + chunk).slice(-8000) })
  const exited = new Promise<void>(resolve => { child.once('close', () => resolve()) })
  const banner = await new Promise<{ peerId: string, grpc: string }>((resolve, reject) => {
    let peerId = ''
    let grpc = ''
    const timer = setTimeout(() => { reject(new Error(`agentd ${o.name} not ready after 60 s:\n${stderr}`)) }, 60_000)
    createInterface({ input: child.stdout }).on('line', line => {
      const words = line.split(' ')
      if (words[0] === 'agentd') peerId = words[3]
      else if (words[0] === 'grpc') grpc = words[1]
      else if (line === 'ready') { clearTimeout(timer); resolve({ peerId, grpc }) }
    })
    void exited.then(() => { clearTimeout(timer); reject(new Error(`agentd ${o.name} exited before it was ready:\n${stderr}`)) })
  }).catch(async err => { child.kill('SIGKILL'); await exited; throw err })
  return {
    ...banner,
    dataDir: o.dataDir,
    child,
    stderr: () => stderr,
    stop: async () => {
      if (child.exitCode != null || child.signalCode != null) return
      const kill = setTimeout(() => { child.kill('SIGKILL') }, 20_000)
      child.kill('SIGTERM')
      await exited
      clearTimeout(kill)
    }
  }
}

/** git with no user or system configuration, so the machine's settings do not leak in. */
export async function git (args: string[], cwd?: string): Promise<string> {
  const env = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' }
  return (await run('git', args, { cwd, encoding: 'utf8', env })).stdout.trim()
}

export const GREET_TEST_COMMAND = 'node --test --test-reporter=tap'

/** The greet function the test asks for, as an agent would write it. */
export const GREET_SOLUTION = 'export function greet (name) {\n  return `Hello, ${name}!`\n}\n'

/**
 * A bare shared repository `<dir>/shared.git` (branch main) holding a project
 * whose one test, test/greet.test.js, fails until greet.js exists.
 */
export async function greetProject (dir: string): Promise<string> {
  const shared = join(dir, 'shared.git')
  const seed = join(dir, 'seed')
  await git(['init', '--quiet', '--bare', '--initial-branch', 'main', shared])
  await mkdir(join(seed, 'test'), { recursive: true })
  await writeFile(join(seed, 'package.json'), JSON.stringify({ name: 'greet', private: true, type: 'module' }, null, 2) + '\n')
  await writeFile(join(seed, 'README.md'), '# greet\n\nA function that says hello.\n')
  await writeFile(join(seed, 'test', 'greet.test.js'), [
    "import { test } from 'node:test'",
    "import assert from 'node:assert/strict'",
    "import { greet } from '../greet.js'",
    '',
    "test('greet says hello by name', () => {",
    "  assert.equal(greet('Ada'), 'Hello, Ada!')",
    '})',
    ''
  ].join('\n'))
  await git(['init', '--quiet', '--initial-branch', 'main', seed])
  await git(['add', '-A'], seed)
  await git(['-c', 'user.name=test', '-c', 'user.email=test@example.invalid', 'commit', '--quiet', '-m', 'A test for greet'], seed)
  await git(['push', '--quiet', shared, 'main'], seed)
  return shared
}

/** The harness log, or '' before there is one. */
export async function harnessLog (dataDir: string): Promise<string> {
  return await readFile(join(dataDir, 'harness.log'), 'utf8').catch(() => '')
}

export function countMatches (text: string, re: RegExp): number {
  return (text.match(new RegExp(re.source, 'g')) ?? []).length
}
