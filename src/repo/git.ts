// One way to run git: simple-git, configured so integration still sees what it
// depends on. Every call yields its exit code and stderr (to tell a
// non-fast-forward push from an unreachable remote, a conflict from a
// failure), is killed after a timeout (network operations must not hang the
// daemon), and runs in an environment we set: simple-git's guard would drop
// GIT_* variables, so each one we pass is allowed by name.
import { existsSync } from 'node:fs'
import { simpleGit, type SimpleGitOptions } from 'simple-git'
import { FailedPreconditionError } from '../core/errors.js'
import { GitCommandError, GitNotFoundError } from './errors.js'

export interface GitResult {
  code: number
  stdout: string
  stderr: string
}

export interface GitOptions {
  /** Resolve with the non-zero exit code instead of throwing. */
  allowFail?: boolean
  /** Kill git after this long; network operations must not hang the daemon. */
  timeoutMs?: number
}

export const DEFAULT_GIT_TIMEOUT_MS = 5 * 60_000

// Variables that would point git at some other repository than the one we
// name (set, for instance, when agentd is started from inside a git hook).
const REPO_SELECTING_ENV = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_COMMON_DIR',
  'GIT_NAMESPACE',
  'GIT_PREFIX'
]

/** The environment for git and verify processes: the user's, minus repository selectors. */
export function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const name of REPO_SELECTING_ENV) delete env[name]
  // Credentials come from the user's git config (helpers, ssh agent); a prompt
  // would hang a daemon that has no terminal.
  env.GIT_TERMINAL_PROMPT = '0'
  return env
}

type UnsafeFlag = keyof NonNullable<SimpleGitOptions['unsafe']>

// The user's own git setup in the environment (editor, askpass, ssh command,
// pager, proxy, config paths) is honoured as when they run git themselves;
// simple-git refuses each of these variables until its category is allowed.
const GUARDED_ENV: Record<string, UnsafeFlag> = {
  editor: 'allowUnsafeEditor',
  visual: 'allowUnsafeEditor',
  git_editor: 'allowUnsafeEditor',
  git_sequence_editor: 'allowUnsafeEditor',
  git_askpass: 'allowUnsafeAskPass',
  ssh_askpass: 'allowUnsafeAskPass',
  git_ssh: 'allowUnsafeSshCommand',
  git_ssh_command: 'allowUnsafeSshCommand',
  pager: 'allowUnsafePager',
  git_pager: 'allowUnsafePager',
  git_proxy_command: 'allowUnsafeGitProxy',
  git_config: 'allowUnsafeConfigPaths',
  git_config_global: 'allowUnsafeConfigPaths',
  git_config_system: 'allowUnsafeConfigPaths',
  prefix: 'allowUnsafeConfigPaths',
  git_config_count: 'allowUnsafeConfigEnvCount',
  git_config_parameters: 'allowUnsafeConfigEnvCount',
  git_exec_path: 'allowUnsafeExec',
  git_external_diff: 'allowUnsafeDiffExternal',
  git_template_dir: 'allowUnsafeTemplateDir'
}

function allowedFor(env: NodeJS.ProcessEnv): SimpleGitOptions['unsafe'] {
  const flags = Object.keys(env)
    .map(name => GUARDED_ENV[name.toLowerCase()])
    .filter(f => f != null)
  return Object.fromEntries(flags.map(f => [f, true]))
}

function gitEnv(): NodeJS.ProcessEnv {
  // English messages: push rejections and conflicts are classified by text.
  return { ...childEnv(), LC_ALL: 'C', LANG: 'C', LANGUAGE: 'C' }
}

export async function git(cwd: string, args: string[], opts: GitOptions = {}): Promise<GitResult> {
  // simple-git refuses a missing base directory with a message of its own.
  if (!existsSync(cwd)) throw new FailedPreconditionError(`directory ${cwd} does not exist`)
  const timeoutMs = opts.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS
  const env = gitEnv()
  let failure: Error | undefined
  let exit = { code: 0, stderr: '' }
  const client = simpleGit({
    baseDir: cwd,
    config: ['core.quotePath=false'],
    abort: AbortSignal.timeout(timeoutMs),
    allowEnvironment: Object.keys(env),
    unsafe: allowedFor(env),
    // The exit code and stderr of every call, failing or not; the caller decides.
    errors: (error, result) => {
      if (error instanceof Error) failure = error
      exit = { code: typeof result.exitCode === 'number' ? result.exitCode : -1, stderr: Buffer.concat(result.stdErr).toString('utf8') }
      return undefined
    }
  }).env(env)
  let stdout = ''
  try {
    stdout = await client.raw(args)
  } catch (err) {
    failure = err as Error
  }
  if (failure != null && /ENOENT/.test(failure.message)) throw new GitNotFoundError()
  if ((failure as { plugin?: string } | undefined)?.plugin === 'abort') {
    exit = { code: -1, stderr: `${exit.stderr}\n(killed after ${timeoutMs} ms)` }
  } else if (failure != null && exit.code === 0) {
    // Refused before git ran (simple-git's own checks): no exit code to report.
    exit = { code: -1, stderr: failure.message }
  }
  if (exit.code === 0) return { code: 0, stdout, stderr: exit.stderr }
  if (opts.allowFail === true) return { code: exit.code, stdout, stderr: exit.stderr }
  throw new GitCommandError(args, exit.code, exit.stderr)
}

/** stdout, trimmed: for commands that print one value. */
export async function gitOut(cwd: string, args: string[], opts: GitOptions = {}): Promise<string> {
  return (await git(cwd, args, opts)).stdout.trim()
}

/** Split NUL-separated output (`-z`) into names. */
export function splitZ(out: string): string[] {
  return out.split('\0').filter(s => s.length > 0)
}

export async function revParse(cwd: string, rev: string): Promise<string | null> {
  const r = await git(cwd, ['rev-parse', '--verify', '--quiet', `${rev}^{commit}`], { allowFail: true })
  return r.code === 0 ? r.stdout.trim() : null
}
