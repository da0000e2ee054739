// The fence at the shared remote. A claim's epoch is a fencing token, and the
// remote is the resource that checks it: every integration pushes the shared
// branch and refs/agency/tasks/<task> in one atomic push, with a lease that
// the task ref is still what the integrator read. The ref points at the merge
// commit that landed the task's work; that commit's trailers say under which
// claim:
//
//   Agency-Task: <task>@<epoch>
//   Agency-Agent: <holder>
//
// An integration is refused (FencedError, nothing pushed) when the remote's
// fence names a higher epoch, or the same epoch with another holder. Because
// of the lease, a fence that moves between the read and the push fails the
// push, and the next attempt reads it again: a holder cut off from the mesh,
// whose own board still says it holds the task, cannot land superseded work
// once the takeover has landed, whatever its board believes.
import { FailedPreconditionError } from '../core/errors.js'
import { FencedError } from './errors.js'
import { git, revParse } from './git.js'
import { TASK_FENCES_REFSPEC, taskFenceRef, taskFenceTrackingRef } from './ref-names.js'
import { fetchRefspecs, type Workspace } from './workspace.js'

export interface TaskFence {
  task: string
  epoch: number
  /** the holder whose work landed */
  agent: string
  /** the merge commit the ref points at */
  commit: string
}

/** Reads the fence of `task` from the clone's copy (fetched with TASK_FENCES_REFSPEC); null when the task has none. */
export async function trackedTaskFence(ws: Pick<Workspace, 'dir'>, task: string): Promise<TaskFence | null> {
  const commit = await revParse(ws.dir, taskFenceTrackingRef(task))
  if (commit == null) return null
  const r = await git(ws.dir, [
    'show',
    '-s',
    '--format=%(trailers:key=Agency-Task,valueonly,separator=%x00)%x01%(trailers:key=Agency-Agent,valueonly,separator=%x00)',
    commit
  ])
  const [tasks, agents] = r.stdout.replace(/\n$/, '').split('\u0001')
  const at = (tasks ?? '')
    .split('\u0000')
    .map(v => /^(.+)@(\d+)$/.exec(v.trim()))
    .find(m => m?.[1] === task)
  const agent = (agents ?? '').split('\u0000')[0]?.trim() ?? ''
  if (at == null || agent === '') {
    throw new FailedPreconditionError(
      `${taskFenceRef(task)} on the shared remote points at ${commit}, which names no claim (no Agency-Task: ${task}@<epoch> and Agency-Agent trailers); delete that ref on the remote to clear it`
    )
  }
  return { task, epoch: Number(at[2]), agent, commit }
}

/** Fetches the remote's task fences and reads the one of `task`. */
export async function readTaskFence(ws: Workspace, task: string): Promise<TaskFence | null> {
  await fetchRefspecs(ws, [TASK_FENCES_REFSPEC], ['--prune'])
  return await trackedTaskFence(ws, task)
}

/** Throws FencedError when `fence` names a later claim than (`epoch`, `agent`). */
export function checkTaskFence(fence: TaskFence | null, task: string, epoch: number, agent: string): void {
  if (fence == null) return
  if (fence.epoch > epoch || (fence.epoch === epoch && fence.agent !== agent)) throw new FencedError(task, epoch, fence)
}

/** The refspec that moves the task's fence to `commit`, pushed with the shared branch. */
export function fenceRefspec(task: string, commit: string): string {
  return `${commit}:${taskFenceRef(task)}`
}

/** The lease for that refspec: the remote's fence must still be what was read (absent: must not exist). */
export function fenceLease(task: string, fence: TaskFence | null): string {
  return `--force-with-lease=${taskFenceRef(task)}:${fence?.commit ?? ''}`
}
