// The agent's own clone of the shared repository: opened (cloned or reused)
// once at daemon start, then used for task branches and integration.
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readdir, realpath, rename, rm, rmdir, stat } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'
import { FailedPreconditionError, InvalidArgumentError, NotFoundError } from '../core/errors.js'
import { componentLogger, type Logger } from '../logger.js'
import {
  DirtyWorkspaceError,
  RemoteBranchNotFoundError,
  RemoteUnavailableError,
  TaskBranchNotFoundError,
  WorkspaceMismatchError,
  lastLines
} from './errors.js'
import { DEFAULT_GIT_TIMEOUT_MS, git, gitOut, revParse, splitZ } from './git.js'
import { ensureMirror } from './object-mirror.js'
import { checkBranchName, checkRefComponent, taskBranchName } from './ref-names.js'
import { normalizeRemote, sameRemote } from './remote-url.js'

export interface GitIdentity {
  name: string
  email: string
}

export interface WorkspaceOptions {
  /** The shared repository: a path, file://, ssh (url or user@host:path) or http(s) url. */
  remote: string
  /** The shared branch that verified work lands on. */
  branch?: string
  /** The agent's clone; created if missing or empty, reused if it is a clone of `remote`. */
  workdir: string
  agentId: string
  /** Host-wide directory for the object mirror that clones on this host borrow from. */
  mirrorDir?: string
  /** Committer for merge commits, written to the clone's local config. Default: the user's git config, else the agent id. */
  identity?: GitIdentity
  /** Bound on each network git operation (clone, fetch, push). */
  gitTimeoutMs?: number
  /**
   * An existing clone whose remote cannot be reached now: 'refuse' (the
   * default) throws RemoteUnavailableError; 'open' opens it as it is, and the
   * next fetch or push names the outage. A daemon restarted during an outage
   * of the remote keeps its mesh, log and claims.
   */
  unreachableRemote?: 'refuse' | 'open'
}

export interface Workspace {
  readonly dir: string
  /** The clone's .git directory (absolute). */
  readonly gitDir: string
  readonly remote: string
  readonly branch: string
  readonly agentId: string
  readonly gitTimeoutMs: number
  readonly log: Logger
  /** `agency/<agentId>/<task>`. */
  taskBranch: (task: string) => string
  /**
   * Switch to the task branch, creating it if new from the fetched shared
   * branch, or from `from`: a local revision, or a request ref
   * (refs/agency/<agent>/<task>) on the remote, fetched first (task takeover).
   */
  checkoutTask: (task: string, opts?: { from?: string }) => Promise<{ branch: string; created: boolean }>
  isDirty: () => Promise<boolean>
  /** Paths with uncommitted changes, untracked files included. */
  dirtyFiles: () => Promise<string[]>
  currentBranch: () => Promise<string | null>
  /** Fetch the shared branch into refs/remotes/origin/<branch>; returns its commit. */
  fetchShared: () => Promise<string>
  /** Throws DirtyWorkspaceError if there is anything uncommitted. */
  assertClean: () => Promise<void>
  /** Runs `fn` with no other exclusive section of this workspace running (integrations share scratch space). */
  exclusive: <T>(fn: () => Promise<T>) => Promise<T>
  /** Where temporary merge worktrees live: inside the clone's .git, invisible to the agent. */
  readonly scratchDir: string
}

export async function openWorkspace(opts: WorkspaceOptions): Promise<Workspace> {
  const remote = normalizeRemote(opts.remote)
  const branch = checkBranchName(opts.branch ?? 'main')
  const agentId = checkRefComponent('agent id', opts.agentId)
  if (typeof opts.workdir !== 'string' || opts.workdir.trim() === '') throw new InvalidArgumentError('workdir must be a non-empty path')
  if (opts.identity !== undefined) checkIdentity(opts.identity)
  const workdir = resolve(opts.workdir)
  const timeoutMs = opts.gitTimeoutMs ?? DEFAULT_GIT_TIMEOUT_MS
  const log = componentLogger('repo', { agentId })

  const state = await inspectWorkdir(workdir)
  if (state === 'other') {
    throw new WorkspaceMismatchError(`workdir ${workdir} exists, is not empty and is not a git clone; choose another workdir`)
  }
  let ws: Workspace
  if (state === 'clone') {
    const origin = await git(workdir, ['config', '--get', 'remote.origin.url'], { allowFail: true })
    if (origin.code !== 0 || !sameRemote(origin.stdout.trim(), remote)) {
      throw new WorkspaceMismatchError(
        `workdir ${workdir} is a clone of ${origin.stdout.trim() || '(no origin)'}, not of ${remote}; choose another workdir`
      )
    }
    ws = await workspaceAt(workdir, remote, branch, agentId, timeoutMs, log)
    // Also the reachability check: it fails with a named error and touches only refs/remotes.
    try {
      await ws.fetchShared()
    } catch (err) {
      if (!(err instanceof RemoteUnavailableError) || opts.unreachableRemote !== 'open') throw err
      log.warn({ workdir, remote, err: err.message }, 'the shared remote cannot be reached: opening the workspace as it is')
    }
    log.info({ workdir, remote }, 'reusing workspace')
  } else {
    await cloneInto(workdir, remote, branch, opts.mirrorDir, opts.identity, timeoutMs, log)
    ws = createWorkspace({ dir: workdir, gitDir: join(workdir, '.git'), remote, branch, agentId, gitTimeoutMs: timeoutMs, log })
    log.info({ workdir, remote, mirror: opts.mirrorDir }, 'cloned workspace')
  }
  await setIdentity(workdir, agentId, opts.identity)
  await clearScratch(ws)
  return ws
}

async function workspaceAt(
  dir: string,
  remote: string,
  branch: string,
  agentId: string,
  gitTimeoutMs: number,
  log: Logger
): Promise<Workspace> {
  const gitDir = await gitOut(dir, ['rev-parse', '--absolute-git-dir'])
  return createWorkspace({ dir, gitDir, remote, branch, agentId, gitTimeoutMs, log })
}

interface WorkspaceParts {
  dir: string
  gitDir: string
  remote: string
  branch: string
  agentId: string
  gitTimeoutMs: number
  log: Logger
}

function createWorkspace(p: WorkspaceParts): Workspace {
  let queue: Promise<unknown> = Promise.resolve()
  const remoteRef = `refs/remotes/origin/${p.branch}`

  const ws: Workspace = {
    ...p,
    scratchDir: join(p.gitDir, 'agency', 'scratch'),
    taskBranch: task => taskBranchName(p.agentId, task),

    async dirtyFiles() {
      // Not trimmed: its leading space of " M path" is part of the status.
      const out = (await git(p.dir, ['status', '--porcelain=v1', '-z', '--untracked-files=all'])).stdout
      const fields = splitZ(out)
      const files: string[] = []
      for (let i = 0; i < fields.length; i++) {
        const f = fields[i]
        files.push(f.slice(3))
        if (f[0] === 'R' || f[0] === 'C') i++ // a rename carries its old path as the next field
      }
      return files
    },

    async isDirty() {
      return (await ws.dirtyFiles()).length > 0
    },

    async assertClean() {
      const files = await ws.dirtyFiles()
      if (files.length > 0) throw new DirtyWorkspaceError(p.dir, files)
    },

    async currentBranch() {
      const r = await git(p.dir, ['symbolic-ref', '--quiet', '--short', 'HEAD'], { allowFail: true })
      return r.code === 0 ? r.stdout.trim() : null
    },

    async fetchShared() {
      await fetchRefspecs(ws, [`+refs/heads/${p.branch}:${remoteRef}`])
      const sha = await revParse(p.dir, remoteRef)
      if (sha == null) throw new RemoteBranchNotFoundError(p.remote, p.branch)
      return sha
    },

    async checkoutTask(task, o = {}) {
      const branch = ws.taskBranch(task)
      if ((await revParse(p.dir, `refs/heads/${branch}`)) != null) {
        await switchTo(p.dir, [branch])
        return { branch, created: false }
      }
      let start: string
      if (o.from !== undefined) {
        // Taking over a task: start from the previous holder's published branch.
        const published = typeof o.from === 'string' ? /^refs\/agency\/([^/]+)\/([^/]+)$/.exec(o.from) : null
        if (published != null) {
          const local = `refs/remotes/origin-agency/${checkRefComponent('agent id', published[1])}/${checkRefComponent('task', published[2])}`
          await fetchRefspecs(ws, [`+${o.from}:${local}`])
        }
        const sha =
          typeof o.from === 'string' && !o.from.startsWith('-')
            ? await revParse(p.dir, published != null ? `refs/remotes/origin-agency/${published[1]}/${published[2]}` : o.from)
            : null
        if (sha == null) throw new InvalidArgumentError(`start point ${JSON.stringify(o.from)} is not a commit in the workspace`)
        start = sha
      } else {
        await fetchRefspecs(ws, [`+refs/heads/${p.branch}:${remoteRef}`])
        start = remoteRef
      }
      await switchTo(p.dir, ['--no-track', '-c', branch, start])
      return { branch, created: true }
    },

    async exclusive<T>(fn: () => Promise<T>): Promise<T> {
      const run = queue.then(fn, fn)
      queue = run.catch(() => {})
      return await run
    }
  }
  return ws
}

/**
 * The commit a branch hands over (to integrate, to verify, to an integrator):
 * `commit` when given, one handed over before (a background integrate's,
 * whose agent has gone on with other work since: its working tree is not
 * looked at); else the branch's tip, with the working tree clean, since work
 * not committed would not go with it.
 */
export async function handedCommit(ws: Pick<Workspace, 'dir' | 'assertClean'>, branch: string, commit?: string): Promise<string> {
  if (commit !== undefined) {
    const known = await revParse(ws.dir, commit)
    if (known == null) throw new InvalidArgumentError(`commit ${commit} is not in the clone`)
    return known
  }
  const tip = await revParse(ws.dir, `refs/heads/${branch}`)
  if (tip == null) throw new TaskBranchNotFoundError(branch)
  await ws.assertClean()
  return tip
}

/** Fetch from origin (`extra`: more flags, e.g. --prune), mapping failures to named errors. */
export async function fetchRefspecs(
  ws: Pick<Workspace, 'dir' | 'remote' | 'branch' | 'gitTimeoutMs'>,
  refspecs: string[],
  extra: string[] = []
): Promise<void> {
  const r = await git(ws.dir, ['fetch', '--quiet', '--no-tags', ...extra, 'origin', ...refspecs], {
    allowFail: true,
    timeoutMs: ws.gitTimeoutMs
  })
  if (r.code === 0) return
  const missing = /couldn't find remote ref (\S+)/i.exec(r.stderr)
  if (missing != null) {
    if (missing[1] === `refs/heads/${ws.branch}` || missing[1] === ws.branch) throw new RemoteBranchNotFoundError(ws.remote, ws.branch)
    throw new NotFoundError(`shared repository ${ws.remote} has no ${missing[1]}`)
  }
  throw new RemoteUnavailableError(ws.remote, lastLines(r.stderr, 2) || `git fetch exited ${r.code}`)
}

async function switchTo(dir: string, args: string[]): Promise<void> {
  const r = await git(dir, ['switch', '--quiet', ...args], { allowFail: true })
  if (r.code !== 0) throw new FailedPreconditionError(`cannot switch branches: ${lastLines(r.stderr, 3)}`)
}

async function inspectWorkdir(workdir: string): Promise<'missing' | 'empty' | 'clone' | 'other'> {
  if (!existsSync(workdir)) return 'missing'
  if (!(await stat(workdir)).isDirectory()) return 'other'
  if ((await readdir(workdir)).length === 0) return 'empty'
  const top = await git(workdir, ['rev-parse', '--show-toplevel'], { allowFail: true })
  if (top.code === 0 && top.stdout.trim() === (await realpath(workdir))) return 'clone'
  return 'other'
}

/**
 * Clone aside and rename into place: a failed clone leaves the workdir as it
 * was. The clone's own errors tell an unreachable remote from a missing branch.
 */
async function cloneInto(
  workdir: string,
  remote: string,
  branch: string,
  mirrorDir: string | undefined,
  identity: GitIdentity | undefined,
  timeoutMs: number,
  log: Logger
): Promise<void> {
  const parent = dirname(workdir)
  await mkdir(parent, { recursive: true })
  const tmp = await mkdtemp(join(parent, `.${basename(workdir)}.clone-`))
  try {
    const mirror = mirrorDir !== undefined ? await ensureMirror(resolve(mirrorDir), remote, log) : null
    const config = identity !== undefined ? ['--config', `user.name=${identity.name}`, '--config', `user.email=${identity.email}`] : []
    const cloneArgs = (ref: string | null): string[] => [
      'clone',
      '--quiet',
      '--no-tags',
      '--branch',
      branch,
      ...config,
      ...(ref != null ? ['--reference', ref] : []),
      '--',
      remote,
      tmp
    ]
    let r = await git(parent, cloneArgs(mirror), { allowFail: true, timeoutMs })
    if (r.code !== 0 && mirror != null && !isRemoteProblem(r.stderr)) {
      log.warn({ stderr: r.stderr }, 'clone with the object mirror failed; cloning without it')
      await rm(tmp, { recursive: true, force: true })
      await mkdir(tmp)
      r = await git(parent, cloneArgs(null), { allowFail: true, timeoutMs })
    }
    if (r.code !== 0) {
      if (/Remote branch .* not found/i.test(r.stderr)) throw new RemoteBranchNotFoundError(remote, branch)
      throw new RemoteUnavailableError(remote, lastLines(r.stderr, 2) || `git clone exited ${r.code}`)
    }
    if (existsSync(workdir)) await rmdir(workdir) // known empty: inspectWorkdir said so
    await rename(tmp, workdir)
  } finally {
    await rm(tmp, { recursive: true, force: true })
  }
}

function isRemoteProblem(stderr: string): boolean {
  return /Remote branch .* not found|does not appear to be a git repository|Could not read from remote|not found|unable to access|Could not resolve/i.test(
    stderr
  )
}

function checkIdentity(id: GitIdentity): void {
  for (const v of [id?.name, id?.email]) {
    if (typeof v !== 'string' || v.trim() === '' || /[\0\n\r<>]/.test(v)) {
      throw new InvalidArgumentError('identity needs a non-empty name and email without newlines or angle brackets')
    }
  }
}

/** Merge commits need a committer; never touch the user's global config to get one. */
async function setIdentity(dir: string, agentId: string, identity: GitIdentity | undefined): Promise<void> {
  const current = new Map<string, string>()
  // An explicit identity belongs in the clone's own config; otherwise any level counts.
  const scope = identity !== undefined ? ['--local'] : []
  const r = await git(dir, ['config', ...scope, '--get-regexp', '^user\\.(name|email)$'], { allowFail: true })
  for (const line of r.stdout.split('\n')) {
    const at = line.indexOf(' ')
    if (at > 0) current.set(line.slice(0, at), line.slice(at + 1))
  }
  const wanted: Array<[string, string]> =
    identity !== undefined
      ? [
          ['user.name', identity.name],
          ['user.email', identity.email]
        ]
      : [
          ['user.name', `agency ${agentId}`],
          ['user.email', `${agentId}@agency.invalid`]
        ]
  for (const [key, value] of wanted) {
    // Without an explicit identity, whatever the user configured wins.
    const keep = identity !== undefined ? current.get(key) === value : (current.get(key) ?? '') !== ''
    if (!keep) await git(dir, ['config', key, value])
  }
}

/** Drop merge worktrees a crashed integration left behind. */
async function clearScratch(ws: Workspace): Promise<void> {
  if (!existsSync(ws.scratchDir)) return
  await rm(ws.scratchDir, { recursive: true, force: true })
  await git(ws.dir, ['worktree', 'prune'])
}
