// The agentd of the real-agent tests, started the way a user starts one: as
// this test's user, in a clean environment (a temporary HOME, PATH with the
// installed agent CLIs, the model settings the test names) rather than the test
// runner's own, which carries VITEST=true and other settings a CLI reacts to
// (Gemini CLI does). Also what goes with it: the temporary directories and
// daemons of one test (AgentDaemons), a seeded bare shared repository, git
// without the machine's configuration, and the harness log.
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir, userInfo } from 'node:os'
import { delimiter, dirname, join } from 'node:path'
import { createInterface } from 'node:readline'
import { promisify } from 'node:util'
import { AGENTD_BIN, REPO_ROOT, assertBuilt } from '../helpers/agent-loop.js'

const run = promisify(execFile)

/**
 * How long a starting agentd may take to say `ready`: only a bound on a hang.
 * Beside three agents whose CLIs are running, on a machine loaded by other
 * test files, a start has taken over a minute.
 */
const READY_TIMEOUT_MS = 180_000

/** Where the real CLIs are installed (devDependencies). */
export const CLI_BIN_DIR = join(REPO_ROOT, 'node_modules', '.bin')

export interface AgentDaemonOptions {
  name: string
  dataDir: string
  /** The user's HOME for this run (a temporary one); the XDG directories are inside it. */
  home: string
  /** More environment: the model endpoint and key the CLI reads. */
  env?: Record<string, string>
  /** Daemons to dial (their listen addresses). */
  peers?: string[]
  extraArgs?: string[]
}

export interface AgentDaemon {
  name: string
  peerId: string
  /** The libp2p addresses it listens on. */
  addrs: string[]
  grpc: string
  dataDir: string
  child: ChildProcess
  /** The end of agentd's stderr (its log). */
  stderr: () => string
  /** SIGTERM (the harness goes down with the daemon), SIGKILL if it hangs; the exit code. */
  stop: () => Promise<number | null>
}

/** PATH for the daemon and its harness: the installed agent CLIs, this node, then the usual. */
export function agentPath(): string {
  return [CLI_BIN_DIR, dirname(process.execPath), process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin'].join(delimiter)
}

export async function startAgentDaemon(o: AgentDaemonOptions): Promise<AgentDaemon> {
  assertBuilt()
  const user = userInfo().username
  const env: NodeJS.ProcessEnv = {
    PATH: agentPath(),
    HOME: o.home,
    // Every per-user directory a CLI may use is inside the temporary HOME.
    XDG_CONFIG_HOME: join(o.home, '.config'),
    XDG_CACHE_HOME: join(o.home, '.cache'),
    XDG_DATA_HOME: join(o.home, '.local', 'share'),
    XDG_STATE_HOME: join(o.home, '.local', 'state'),
    USER: user,
    LOGNAME: user,
    LANG: 'C.UTF-8',
    AGENCY_LOG_LEVEL: 'info',
    ...o.env
  }
  const peers = o.peers != null && o.peers.length > 0 ? ['--peers', o.peers.join(',')] : []
  const args = [
    AGENTD_BIN,
    '--data-dir',
    o.dataDir,
    '--name',
    o.name,
    '--listen',
    '/ip4/127.0.0.1/tcp/0',
    '--grpc',
    '127.0.0.1:0',
    ...peers,
    ...(o.extraArgs ?? [])
  ]
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env })
  let stderr = ''
  child.stderr.setEncoding('utf8')
  child.stderr.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-8000)
  })
  const exited = new Promise<number | null>(resolve => {
    child.once('close', code => resolve(code))
  })
  const banner = await new Promise<{ peerId: string; grpc: string; addrs: string[] }>((resolve, reject) => {
    let peerId = ''
    let grpc = ''
    const addrs: string[] = []
    const timer = setTimeout(() => {
      reject(new Error(`agentd ${o.name} not ready after ${READY_TIMEOUT_MS / 1000} s:\n${stderr}`))
    }, READY_TIMEOUT_MS)
    createInterface({ input: child.stdout }).on('line', line => {
      const words = line.split(' ')
      if (words[0] === 'agentd') peerId = words[3]
      else if (words[0] === 'listening') addrs.push(words[1])
      else if (words[0] === 'grpc') grpc = words[1]
      else if (line === 'ready') {
        clearTimeout(timer)
        resolve({ peerId, grpc, addrs })
      }
    })
    void exited.then(() => {
      clearTimeout(timer)
      reject(new Error(`agentd ${o.name} exited before it was ready:\n${stderr}`))
    })
  }).catch(async err => {
    child.kill('SIGKILL')
    await exited
    throw err
  })
  return {
    name: o.name,
    ...banner,
    dataDir: o.dataDir,
    child,
    stderr: () => stderr,
    stop: async () => {
      if (child.exitCode != null || child.signalCode != null) return await exited
      const kill = setTimeout(() => {
        child.kill('SIGKILL')
      }, 20_000)
      child.kill('SIGTERM')
      const code = await exited
      clearTimeout(kill)
      return code
    }
  }
}

/** The temporary directories and daemons of one test; `cleanup()` stops the daemons and removes the directories. */
export class AgentDaemons {
  private readonly dirs: string[] = []
  private readonly daemons: AgentDaemon[] = []

  async dir(prefix: string): Promise<string> {
    const d = await mkdtemp(join(tmpdir(), prefix))
    this.dirs.push(d)
    return d
  }

  async start(o: AgentDaemonOptions): Promise<AgentDaemon> {
    const d = await startAgentDaemon(o)
    this.daemons.push(d)
    return d
  }

  async cleanup(): Promise<void> {
    await Promise.all(
      this.daemons.splice(0).map(async d => {
        await d.stop()
      })
    )
    await Promise.all(
      this.dirs.splice(0).map(async d => {
        await rm(d, { recursive: true, force: true })
      })
    )
  }
}

/** git with no user or system configuration, so the machine's settings do not leak in. */
export async function git(args: string[], cwd?: string): Promise<string> {
  const env = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' }
  return (await run('git', args, { cwd, encoding: 'utf8', env })).stdout.trim()
}

/** A bare repository at `<dir>/shared.git` whose `main` holds `files`, committed once. */
export async function seedSharedRepo(dir: string, files: Record<string, string>): Promise<string> {
  const shared = join(dir, 'shared.git')
  const seed = join(dir, 'seed')
  await git(['init', '--quiet', '--bare', '--initial-branch', 'main', shared])
  await git(['init', '--quiet', '--initial-branch', 'main', seed])
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(seed, path)), { recursive: true })
    await writeFile(join(seed, path), content)
  }
  await git(['add', '-A'], seed)
  await git(
    ['-c', 'user.name=seed', '-c', 'user.email=seed@agency.invalid', 'commit', '--quiet', '-m', 'The project before the agents'],
    seed
  )
  await git(['push', '--quiet', shared, 'main'], seed)
  await rm(seed, { recursive: true, force: true })
  return shared
}

/** The harness log, or '' before there is one. */
export async function harnessLog(d: { dataDir: string }): Promise<string> {
  return await readFile(join(d.dataDir, 'harness.log'), 'utf8').catch(() => '')
}

export function count(text: string, re: RegExp): number {
  return (text.match(new RegExp(re.source, re.flags.includes('g') ? re.flags : `${re.flags}g`)) ?? []).length
}
