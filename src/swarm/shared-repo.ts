// Where a local swarm's shared repository comes from: an ordinary working
// repository of the user's (copied into a bare repository in the swarm's
// directory, from its current branch, so the swarm never touches the user's
// working tree), a bare repository or a URL (used as it is), or an example.
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { InvalidArgumentError } from '../core/errors.js'

const run = promisify(execFile)

export interface SharedRepo {
  /** what agentd gets as --repo */
  remote: string
  /** the shared branch */
  branch: string
  /** the user's working repository the swarm was seeded from, if any */
  source?: string
}

async function git(args: string[], cwd?: string): Promise<{ ok: boolean; out: string; err: string }> {
  try {
    const r = await run('git', args, { cwd, encoding: 'utf8' })
    return { ok: true, out: r.stdout.trim(), err: r.stderr }
  } catch (e) {
    const x = e as { stdout?: string; stderr?: string }
    return { ok: false, out: (x.stdout ?? '').trim(), err: (x.stderr ?? '').trim() }
  }
}

/** What `--repo` names: a URL, a bare repository, or a working repository (made into a bare copy in `swarmDir`). */
export async function sharedRepoFor(repo: string, swarmDir: string, branch?: string): Promise<SharedRepo> {
  if (/^[a-z+]+:\/\//.test(repo) || /^[^/]+@[^:]+:/.test(repo)) return { remote: repo, branch: branch ?? 'main' }
  const path = resolve(repo)
  if (!existsSync(path)) throw new InvalidArgumentError(`--repo ${repo}: no such directory`)
  const bare = await git(['rev-parse', '--is-bare-repository'], path)
  if (!bare.ok)
    throw new InvalidArgumentError(
      `--repo ${repo} is not a git repository: run git init && git add -A && git commit -m init there first, or give a bare repository or a URL`
    )
  if (bare.out === 'true') return { remote: path, branch: branch ?? 'main' }
  const top = await git(['rev-parse', '--show-toplevel'], path)
  const current = branch ?? (await git(['symbolic-ref', '--quiet', '--short', 'HEAD'], path)).out
  if (current === '') throw new InvalidArgumentError(`--repo ${repo} is on a detached HEAD: check out a branch (or pass --branch)`)
  const head = await git(['rev-parse', '--verify', '--quiet', `refs/heads/${current}^{commit}`], path)
  if (!head.ok)
    throw new InvalidArgumentError(`--repo ${repo} has no commit on ${current}: commit something first (git add -A && git commit -m init)`)
  const shared = join(swarmDir, 'shared.git')
  if (!existsSync(shared)) {
    const r = await git(['clone', '--quiet', '--bare', '--single-branch', '--branch', current, '--', top.out, shared])
    if (!r.ok) throw new InvalidArgumentError(`cannot copy ${top.out} into ${shared}: ${r.err}`)
  }
  return { remote: shared, branch: current, source: top.out }
}

/**
 * Brings the swarm's result back into the user's repository as a branch
 * (their working tree and current branch are left alone). Returns the branch.
 */
export async function exportResult(shared: SharedRepo, into: string, asBranch: string): Promise<string> {
  const r = await git(['fetch', '--quiet', shared.remote, `+refs/heads/${shared.branch}:refs/heads/${asBranch}`], into)
  if (!r.ok)
    throw new InvalidArgumentError(
      `cannot fetch the result into ${into}: ${r.err || 'git fetch failed'}${/checked out/.test(r.err) ? ` (${asBranch} is checked out there: pass --branch another-name)` : ''}`
    )
  return asBranch
}

/** The command a user can run by hand to do what exportResult does. */
export function exportCommand(shared: SharedRepo, into: string, asBranch: string): string {
  return `git -C ${JSON.stringify(into)} fetch ${JSON.stringify(shared.remote)} ${shared.branch}:${asBranch}`
}
