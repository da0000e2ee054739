// One way to run git. We call the git binary directly rather than through
// simple-git because integration needs the exit code and stderr of every call
// (to tell a non-fast-forward push from an unreachable remote, a conflict from
// a failure), a kill-on-timeout for network operations, and an environment we
// control; simple-git hides the first behind parsed summaries and drops GIT_*
// variables unless each is allowed one by one.
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
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
  'GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES', 'GIT_COMMON_DIR', 'GIT_NAMESPACE', 'GIT_PREFIX'
]

/** The environment for git and verify processes: the user's, minus repository selectors. */
export function childEnv (): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const name of REPO_SELECTING_ENV) delete env[name]
  // Credentials come from the user's git config (helpers, ssh agent); a prompt
  // would hang a daemon that has no terminal.
  env.GIT_TERMINAL_PROMPT = '0'
  return env
}

function gitEnv (): NodeJS.ProcessEnv {
  // English messages: push rejections and conflicts are classified by text.
  return { ...childEnv(), LC_ALL: 'C', LANG: 'C', LANGUAGE: 'C' }
}

export async function git (cwd: string, args: string[], opts: GitOptions = {}): Promise<GitResult> {
  return await new Promise((resolve, reject) => {
    execFile('git', ['-c', 'core.quotePath=false', ...args], {
      cwd,
      env: gitEnv(),
      timeout: opts.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS,
      maxBuffer: 64 * 1024 * 1024,
      encoding: 'utf8'
    }, (err, stdout, stderr) => {
      if (err == null) { resolve({ code: 0, stdout, stderr }); return }
      const e = err as NodeJS.ErrnoException & { code?: number | string, killed?: boolean }
      if (e.code === 'ENOENT') {
        // Node reports a missing cwd and a missing binary alike; tell them apart.
        reject(existsSync(cwd) ? new GitNotFoundError() : new FailedPreconditionError(`directory ${cwd} does not exist`))
        return
      }
      const code = typeof e.code === 'number' ? e.code : -1
      const why = e.killed === true ? `${stderr}\n(killed after ${opts.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS} ms)` : stderr
      if (opts.allowFail === true) { resolve({ code, stdout, stderr: why }); return }
      reject(new GitCommandError(args, code, why))
    })
  })
}

/** stdout, trimmed: for commands that print one value. */
export async function gitOut (cwd: string, args: string[], opts: GitOptions = {}): Promise<string> {
  return (await git(cwd, args, opts)).stdout.trim()
}

/** Split NUL-separated output (`-z`) into names. */
export function splitZ (out: string): string[] {
  return out.split('\0').filter(s => s.length > 0)
}

export async function revParse (cwd: string, rev: string): Promise<string | null> {
  const r = await git(cwd, ['rev-parse', '--verify', '--quiet', `${rev}^{commit}`], { allowFail: true })
  return r.code === 0 ? r.stdout.trim() : null
}
