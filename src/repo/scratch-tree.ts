// A temporary detached worktree of the agent's clone where merges are built
// and verified, so that the agent's own branch and working tree are never
// touched by integration, whatever happens.
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises'
import { dirname, join, resolve, sep } from 'node:path'
import { InvalidArgumentError } from '../core/errors.js'
import { GitCommandError } from './errors.js'
import { git, splitZ } from './git.js'
import type { Workspace } from './workspace.js'

export interface ScratchTree {
  readonly path: string
  /** Check out `commit` (detached), dropping every file the last verify left behind. */
  reset: (commit: string) => Promise<void>
  /** Note that something (a verify run) may have written files, so the next reset must clean. */
  touched: () => void
  /** Merge `commit` into HEAD as a merge commit; on conflict the merge is aborted and HEAD stays. */
  merge: (commit: string, messageArgs: string[]) => Promise<MergeOutcome>
  remove: () => Promise<void>
}

export type MergeOutcome =
  /** `base`: what HEAD was before, the merge commit's first parent. */
  | { result: 'merged'; commit: string; base: string }
  /** The commit is already in HEAD's history; nothing was made. */
  | { result: 'up-to-date' }
  | { result: 'conflict'; files: string[] }

export async function addScratchTree(ws: Workspace, at: string, linkFromWorkspace: string[] = []): Promise<ScratchTree> {
  const links = checkLinks(linkFromWorkspace)
  await mkdir(ws.scratchDir, { recursive: true })
  const path = await mkdtemp(join(ws.scratchDir, 'merge-'))
  await git(ws.dir, ['worktree', 'add', '--quiet', '--detach', path, at])

  // Verify runs in a fresh checkout; linking e.g. node_modules from the
  // agent's clone saves an install per run. Linked paths are removed by
  // `git clean` in reset() (it does not follow links) and linked again.
  const link = async (): Promise<void> => {
    for (const rel of links) {
      const from = join(ws.dir, rel)
      const to = join(path, rel)
      if (existsSync(from) && !existsSync(to) && existsSync(dirname(to))) await symlink(from, to)
    }
  }
  await link()
  // What is checked out, and whether it is exactly that commit's tree (plus links).
  let head = at
  let pristine = true

  return {
    path,
    async reset(commit) {
      if (pristine && commit === head) return
      await git(path, ['reset', '--quiet', '--hard', commit])
      await git(path, ['clean', '-ffdxq'])
      await link()
      head = commit
      pristine = true
    },
    touched() {
      pristine = false
    },
    async merge(commit, messageArgs) {
      // --no-verify: the verify command is the gate; a user's commit hooks may
      // be interactive or slow and are not what integration runs.
      const r = await git(path, ['merge', '--no-ff', '--no-stat', '--no-verify', ...messageArgs, commit], { allowFail: true })
      if (r.code === 0) {
        // git makes no commit for an ancestor, even with --no-ff, and says so (LC_ALL=C).
        if (/^Already up.to.date/m.test(r.stdout)) return { result: 'up-to-date' }
        const [merged, base] = (await git(path, ['rev-parse', 'HEAD', 'HEAD^1'])).stdout.trim().split('\n')
        head = merged
        return { result: 'merged', commit: merged, base }
      }
      const unmerged = splitZ((await git(path, ['diff', '--name-only', '-z', '--diff-filter=U'])).stdout)
      await git(path, ['merge', '--abort'], { allowFail: true })
      await git(path, ['reset', '--quiet', '--hard'], { allowFail: true })
      if (unmerged.length > 0) return { result: 'conflict', files: [...new Set(unmerged)].sort() }
      throw new GitCommandError(['merge', commit], r.code, r.stderr.trim() !== '' ? r.stderr : r.stdout)
    },
    async remove() {
      const r = await git(ws.dir, ['worktree', 'remove', '--force', '--force', path], { allowFail: true })
      if (r.code === 0) return
      await rm(path, { recursive: true, force: true })
      await git(ws.dir, ['worktree', 'prune'], { allowFail: true })
    }
  }
}

/** Throws InvalidArgumentError unless every entry is a relative path inside the workspace. */
export function checkLinks(paths: unknown): string[] {
  if (paths === undefined) return []
  if (!Array.isArray(paths)) throw new InvalidArgumentError('linkFromWorkspace must be an array of relative paths')
  for (const p of paths) {
    if (typeof p !== 'string' || p === '' || p.startsWith('/') || resolve('/x', p) === '/x' || !resolve('/x', p).startsWith(`/x${sep}`)) {
      throw new InvalidArgumentError(`linkFromWorkspace entry ${JSON.stringify(p)} must be a relative path inside the workspace`)
    }
  }
  return paths as string[]
}
