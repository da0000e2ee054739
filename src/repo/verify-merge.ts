// Verify without landing: merge a commit of a task branch onto the shared
// branch as fetched now, in a scratch tree, and run the verify command there,
// as `integrate` does before its push, then throw the merge away. What a
// daemon runs before it asks an integrator to land a change (a background
// integrate while an integrator serves the swarm), so the integrator's batch
// takes verified changes only. Nothing is pushed, and the agent's own working
// tree is never touched: it may already be at work on its next task.
import { InvalidArgumentError } from '../core/errors.js'
import { gitOut } from './git.js'
import { TASK_FENCES_REFSPEC, agencyTrailers, checkEpoch, checkRefComponent, mergeMessage } from './ref-names.js'
import { checkTaskFence, trackedTaskFence } from './task-fence.js'
import { addScratchTree, checkLinks } from './scratch-tree.js'
import type { TestCounts } from './test-results.js'
import { checkJunitPaths, checkVerifyCommand, runVerify } from './verify.js'
import { fetchRefspecs, handedCommit, type Workspace } from './workspace.js'

export interface VerifyMergeOptions {
  workspace: Workspace
  task: string
  /** the epoch of the agent's claim: the remote's task fence must not have superseded it */
  epoch: number
  /** the commit to merge (the task branch's tip when the change was handed over) */
  commit: string
  /** Default: the workspace's agent. */
  agentId?: string
  verify: string
  verifyTimeoutMs?: number
  junitPaths?: string[]
  linkFromWorkspace?: string[]
}

export type VerifyMergeResult =
  /** `merge`: the merge that was tested (not pushed); `base`: the shared branch it was made on */
  | { result: 'green'; merge: string; base: string; tests: TestCounts | null; verifyMs: number }
  /** the commit is already in the shared branch's history: nothing to verify */
  | { result: 'up-to-date'; base: string }
  | { result: 'conflict'; files: string[]; base: string }
  | { result: 'failed'; summary: string; tests: TestCounts | null; merge: string; base: string; verifyMs: number }

/**
 * Merges `commit` onto the shared branch and verifies the merge. Throws
 * FencedError when the remote's task fence shows a later claim landed (no
 * verify is spent on it), and NotFoundError for a commit the clone lacks.
 */
export async function verifyMerge(opts: VerifyMergeOptions): Promise<VerifyMergeResult> {
  const ws = opts.workspace
  const epoch = checkEpoch(opts.epoch)
  const agentId = checkRefComponent('agent id', opts.agentId ?? ws.agentId)
  const verify = await checkVerifyCommand(opts.verify)
  const junitPaths = checkJunitPaths(opts.junitPaths)
  const links = checkLinks(opts.linkFromWorkspace)
  if (typeof opts.commit !== 'string' || !/^[0-9a-f]{40,64}$/.test(opts.commit))
    throw new InvalidArgumentError(`commit ${JSON.stringify(opts.commit)} is not a full hex object id`)
  const messageArgs = mergeMessage(undefined, `Verify ${opts.task}@${epoch}`, agencyTrailers(opts.task, epoch, agentId))

  // Exclusive as integrate is: merges share the clone's scratch space and its fetched refs.
  return await ws.exclusive(async () => {
    await handedCommit(ws, ws.taskBranch(opts.task), opts.commit)
    const sharedRef = `refs/remotes/origin/${ws.branch}`
    await fetchRefspecs(ws, [`+refs/heads/${ws.branch}:${sharedRef}`, TASK_FENCES_REFSPEC], ['--prune'])
    checkTaskFence(await trackedTaskFence(ws, opts.task), opts.task, epoch, agentId)
    const tree = await addScratchTree(ws, sharedRef, links)
    try {
      const base = await gitOut(tree.path, ['rev-parse', 'HEAD'])
      const merge = await tree.merge(opts.commit, messageArgs)
      if (merge.result === 'up-to-date') return { result: 'up-to-date', base }
      if (merge.result === 'conflict') return { result: 'conflict', files: merge.files, base }
      const run = await runVerify({ command: verify, cwd: tree.path, timeoutMs: opts.verifyTimeoutMs, junitPaths })
      if (!run.ok) return { result: 'failed', summary: run.summary, tests: run.tests, merge: merge.commit, base, verifyMs: run.durationMs }
      return { result: 'green', merge: merge.commit, base, tests: run.tests, verifyMs: run.durationMs }
    } finally {
      await tree.remove()
    }
  })
}
