// A landing the remote proves. The merge and the task's fence go to the shared
// remote in one atomic push, and the log entry that records the landing is
// appended after it: a daemon that dies in between leaves a landing the log
// does not know of. The fence is the proof that it happened: it names the
// claim (task@epoch, agent) whose merge it points at, and that merge is on
// the shared branch. Nothing short of that is taken as a landing.
import { GitCommandError } from './errors.js'
import { git, splitZ } from './git.js'
import { TASK_FENCES_REFSPEC } from './ref-names.js'
import { trackedTaskFence, type TaskFence } from './task-fence.js'
import { fetchRefspecs, type Workspace } from './workspace.js'

/** Whether `ancestor` is in the history of `descendant` (both must be objects in `dir`). */
export async function isAncestor(dir: string, ancestor: string, descendant: string): Promise<boolean> {
  const args = ['merge-base', '--is-ancestor', ancestor, descendant]
  const r = await git(dir, args, { allowFail: true })
  if (r.code === 0) return true
  if (r.code === 1) return false
  throw new GitCommandError(args, r.code, r.stderr)
}

export interface LandingQuery {
  epoch: number
  agent: string
  /** the shared branch as fetched (e.g. refs/remotes/origin/main) */
  sharedRef: string
  /** when given, the landing must contain this commit (the work asked to land) */
  contains?: string
}

/**
 * The fence's merge commit when `fence` proves that the work of `agent` at
 * `epoch` landed: it names that claim and its commit is on the shared branch
 * (and contains `contains`); null otherwise. Read the fence and the shared
 * branch from one fetch.
 */
export async function provenLanding(dir: string, fence: TaskFence | null, q: LandingQuery): Promise<string | null> {
  if (fence == null || fence.epoch !== q.epoch || fence.agent !== q.agent) return null
  if (!(await isAncestor(dir, fence.commit, q.sharedRef))) return null
  if (q.contains !== undefined && !(await isAncestor(dir, q.contains, fence.commit))) return null
  return fence.commit
}

/** The paths the landing merge `commit` changed on the branch it merged into (its first parent); [] when git cannot say. */
export async function landedPaths(dir: string, commit: string): Promise<string[]> {
  const r = await git(dir, ['diff', '--name-only', '-z', `${commit}^1`, commit], { allowFail: true })
  return r.code === 0 ? splitZ(r.stdout) : []
}

/** Fetches the shared branch and the task fences, then answers provenLanding for `task` (see there). */
export async function fetchProvenLanding(ws: Workspace, task: string, epoch: number, agent: string): Promise<string | null> {
  return await ws.exclusive(async () => {
    const sharedRef = `refs/remotes/origin/${ws.branch}`
    await fetchRefspecs(ws, [`+refs/heads/${ws.branch}:${sharedRef}`, TASK_FENCES_REFSPEC], ['--prune'])
    return await provenLanding(ws.dir, await trackedTaskFence(ws, task), { epoch, agent, sharedRef })
  })
}
