// `agency integrate`: merge the agent's task branch onto the shared branch,
// verify the merged tree, push; on a lost push race fetch, merge and verify
// again. Nothing is pushed on a conflict, a red verify or a lost claim, and
// success is reported only for a push git confirmed. The shared branch and the
// task's fence ref go in one atomic push, refused by the remote when a later
// claim has landed (see task-fence.ts).
import { InvalidArgumentError } from '../core/errors.js'
import { provenLanding } from './fence-landing.js'
import { defaultJitter, sleep, type Jitter } from './backoff.js'
import { git, gitOut, splitZ } from './git.js'
import { pushRefspecs } from './push.js'
import { TASK_FENCES_REFSPEC, agencyTrailers, checkBranchName, checkEpoch, checkRefComponent, mergeMessage } from './ref-names.js'
import { testFaults } from '../test-faults.js'
import { checkTaskFence, fenceLease, fenceRefspec, trackedTaskFence } from './task-fence.js'
import { addScratchTree, checkLinks } from './scratch-tree.js'
import type { TestCounts } from './test-results.js'
import { checkJunitPaths, checkVerifyCommand, runVerify } from './verify.js'
import { fetchRefspecs, handedCommit, type Workspace } from './workspace.js'

export interface IntegrateOptions {
  workspace: Workspace
  task: string
  /** The epoch of the agent's claim on the task; written into the merge commit. */
  epoch: number
  /** Default: the workspace's agent. */
  agentId?: string
  /** The branch to merge; default: the workspace's task branch of `task` (an assistant names its own, see daemon/assist-service). */
  branch?: string
  /** Merge commit subject and body; the trailers are appended. */
  message?: string
  /** Shell command run in the merged tree; exit 0 (and no failed test parsed) means green. */
  verify: string
  /**
   * Throws (e.g. FailedPreconditionError) when the claim on the task was lost
   * on this agent's board. Called before anything and before each push. The
   * remote's task fence is checked too, whatever this says (FencedError).
   */
  checkFence: () => Promise<void>
  /** Push attempts before giving up with 'contended'. */
  maxAttempts?: number
  jitter?: Jitter
  verifyTimeoutMs?: number
  junitPaths?: string[]
  /** Paths of the agent's clone linked into the merged tree before verify, e.g. ['node_modules']. */
  linkFromWorkspace?: string[]
  /**
   * Merge this commit of the branch (what a background integrate's request
   * named) instead of its tip, and leave the working tree unchecked: the
   * agent has gone on with its next task since it handed this one over, and
   * its uncommitted work there is none of this integrate's business.
   */
  commit?: string
}

interface Attempts {
  attempts: number
  retries: number
}

export type IntegrateResult =
  | ({ result: 'merged'; commit: string; base: string; tests: TestCounts | null; verifyMs: number; paths: string[] } & Attempts)
  /**
   * The branch is already in the shared branch's history; nothing to push.
   * `landing`: the merge that the remote's task fence proves landed this
   * claim's work (task@epoch by this agent, on the shared branch), else null;
   * what a caller whose record of that landing was lost records (fence-landing.ts).
   */
  | ({ result: 'up-to-date'; commit: string; landing: string | null } & Attempts)
  | ({ result: 'conflict'; files: string[]; base: string } & Attempts)
  /** `commit` is the merge that was tested and not pushed. */
  | ({
      result: 'failed'
      summary: string
      tests: TestCounts | null
      commit: string
      base: string
      exitCode: number | null
      timedOut: boolean
      verifyMs: number
    } & Attempts)
  /** Every push lost a race; nothing of ours landed. Try again later. */
  | ({ result: 'contended'; reason: string } & Attempts)

export const DEFAULT_MAX_ATTEMPTS = 5

export async function integrate(opts: IntegrateOptions): Promise<IntegrateResult> {
  const ws = opts.workspace
  const branch = opts.branch !== undefined ? checkBranchName(opts.branch) : ws.taskBranch(opts.task)
  const epoch = checkEpoch(opts.epoch)
  const agentId = checkRefComponent('agent id', opts.agentId ?? ws.agentId)
  const maxAttempts = checkAttempts(opts.maxAttempts ?? DEFAULT_MAX_ATTEMPTS)
  const verify = await checkVerifyCommand(opts.verify)
  const junitPaths = checkJunitPaths(opts.junitPaths)
  const links = checkLinks(opts.linkFromWorkspace)
  if (typeof opts.checkFence !== 'function') throw new InvalidArgumentError('checkFence must be a function')
  const jitter = opts.jitter ?? defaultJitter
  const messageArgs = mergeMessage(opts.message, `Merge ${branch}`, agencyTrailers(opts.task, epoch, agentId))

  return await ws.exclusive(async () => {
    const head = await handedCommit(ws, branch, opts.commit)
    await opts.checkFence()

    const sharedRef = `refs/remotes/origin/${ws.branch}`
    let attempts = 0
    let reason = ''
    let attemptMs = 0
    while (attempts < maxAttempts) {
      if (attempts > 0) await sleep(jitter(attempts, attemptMs))
      attempts++
      const started = performance.now()
      const counted = { attempts, retries: attempts - 1 }
      await fetchRefspecs(ws, [`+refs/heads/${ws.branch}:${sharedRef}`, TASK_FENCES_REFSPEC], ['--prune'])
      // Superseded at the remote: refused before spending a verify on it.
      const fence = await trackedTaskFence(ws, opts.task)
      if (!testFaults().breaks.has('fence')) checkTaskFence(fence, opts.task, epoch, agentId)
      const tree = await addScratchTree(ws, sharedRef, links)
      try {
        const merge = await tree.merge(head, messageArgs)
        if (merge.result === 'up-to-date') {
          const landing = await provenLanding(ws.dir, fence, { epoch, agent: agentId, sharedRef })
          return { result: 'up-to-date', commit: await gitOut(tree.path, ['rev-parse', 'HEAD']), landing, ...counted }
        }
        if (merge.result === 'conflict')
          return { result: 'conflict', files: merge.files, base: await gitOut(tree.path, ['rev-parse', 'HEAD']), ...counted }
        const base = merge.base

        const run = await runVerify({ command: verify, cwd: tree.path, timeoutMs: opts.verifyTimeoutMs, junitPaths })
        if (!run.ok) {
          return {
            result: 'failed',
            summary: run.summary,
            tests: run.tests,
            commit: merge.commit,
            base,
            exitCode: run.exitCode,
            timedOut: run.timedOut,
            verifyMs: run.durationMs,
            ...counted
          }
        }

        // Verify may take minutes; the claim must still be ours when we push.
        await opts.checkFence()
        // Both refs or neither; the lease fails if the fence moved since it was read (then the next attempt reads it again).
        const pushed = await pushRefspecs(
          ws,
          [`${merge.commit}:refs/heads/${ws.branch}`, fenceRefspec(opts.task, merge.commit)],
          ['--atomic', fenceLease(opts.task, fence)]
        )
        if (pushed.ok) {
          // The push landed: nothing after this line may turn the result into an error.
          const diff = await git(ws.dir, ['diff', '--name-only', '-z', `${base}...${head}`], { allowFail: true })
          const paths = diff.code === 0 ? splitZ(diff.stdout) : []
          ws.log.info({ task: opts.task, commit: merge.commit, ...counted }, 'integrated')
          return { result: 'merged', commit: merge.commit, base, tests: run.tests, verifyMs: run.durationMs, paths, ...counted }
        }
        reason = pushed.reason
        attemptMs = performance.now() - started
        ws.log.debug({ task: opts.task, attempt: attempts, reason }, 'push lost a race; merging again')
      } finally {
        await tree.remove()
      }
    }
    return { result: 'contended', reason, attempts, retries: attempts - 1 }
  })
}

export function checkAttempts(n: unknown): number {
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 100)
    throw new InvalidArgumentError(`maxAttempts ${String(n)} must be an integer from 1 to 100`)
  return n
}
