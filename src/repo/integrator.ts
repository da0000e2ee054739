// The integrator queue, as a library. An agent publishes its branch as
// refs/agency/<agent>/<task> on the shared remote (pushRequestRef); an
// integrator takes requests in log order, merges the ones that merge cleanly
// one after another, verifies the batch once, and on a red batch bisects to
// find the bad requests, then lands the good ones in one push.
//
// One push per batch instead of one per agent is what keeps a large swarm out
// of a push storm. That push carries the fence ref of every landed task
// (task-fence.ts), atomically with the shared branch: a request the remote's
// fence has superseded is refused, and one request per task goes in a batch.
import { FailedPreconditionError, InvalidArgumentError, UnavailableError } from '../core/errors.js'
import { defaultJitter, sleep, type Jitter } from './backoff.js'
import { FencedError, GitCommandError, NoNewCommitsError, RemoteBranchNotFoundError } from './errors.js'
import { revParse } from './git.js'
import { isAncestor, provenLanding } from './fence-landing.js'
import { checkAttempts, DEFAULT_MAX_ATTEMPTS } from './integrate.js'
import { pushRefspecs } from './push.js'
import { agencyTrailers, checkBranchName, checkEpoch, checkRefComponent, mergeMessage, requestRefName } from './ref-names.js'
import { checkTaskFence, fenceLease, fenceRefspec, trackedTaskFence, type TaskFence } from './task-fence.js'
import { addScratchTree, checkLinks, type ScratchTree } from './scratch-tree.js'
import type { TestCounts } from './test-results.js'
import { checkJunitPaths, checkVerifyCommand, runVerify, type VerifyRun } from './verify.js'
import { fetchRefspecs, handedCommit, type Workspace } from './workspace.js'

export interface IntegrationRequest {
  /** refs/agency/<author>/<task> on the shared remote. */
  ref: string
  /** The commit the author asked to land (the ref may have moved since). */
  commit: string
  task: string
  epoch: number
  /** The requesting agent; goes into the Agency-Agent trailer. */
  author: string
}

export interface BatchOptions {
  /** The integrator's own workspace (any clone of the shared repository). */
  workspace: Workspace
  /** In log order; merged in this order. */
  requests: IntegrationRequest[]
  verify: string
  /** Push attempts before the good requests are deferred as contended. */
  maxAttempts?: number
  jitter?: Jitter
  verifyTimeoutMs?: number
  junitPaths?: string[]
  linkFromWorkspace?: string[]
  /** Delete the request refs of landed requests from the remote (only if they still point at the landed commit). */
  deleteLandedRefs?: boolean
}

export interface BatchResult {
  /** `commit`: the request's merge commit in the pushed history. */
  landed: Array<{ request: IntegrationRequest; commit: string }>
  /** Already in the shared branch's history; nothing to do. */
  alreadyMerged: IntegrationRequest[]
  /**
   * Landed before this batch, and the log may not say so (the integrator died
   * between its push and its log entries): the task's fence names the
   * request's (author, epoch) and `commit`, its merge on the shared branch,
   * contains the request's commit (fence-landing.ts). Nothing is pushed for it.
   */
  recovered: Array<{ request: IntegrationRequest; commit: string }>
  conflicts: Array<{ request: IntegrationRequest; files: string[] }>
  /** The request turned the batch red: `summary` is from the verify of the first prefix that failed with it. */
  failed: Array<{ request: IntegrationRequest; summary: string; tests: TestCounts | null; verifyMs: number }>
  /** Not decided: commit missing on the remote, the shared branch is red without it, or every push lost a race. */
  deferred: Array<{ request: IntegrationRequest; reason: string }>
  /**
   * Will never land as asked: malformed (a ref that is not the author's own, a
   * commit that is not a hex id, ...), or a commit git refuses to merge. Each
   * is set aside with its reason; the rest of the batch goes on. `request` is
   * what the caller passed. `fenced`: the remote's task fence refused it (the
   * work of `agent` at `epoch` landed first).
   */
  refused: Array<{ request: IntegrationRequest; reason: string; fenced?: { epoch: number; agent: string } }>
  /** The shared branch's new tip, or null when nothing landed. */
  pushed: string | null
  /** Verify of the pushed tip (for the test-run entry: commit = pushed). */
  tests: TestCounts | null
  verifyMs: number | null
  verifyRuns: number
  attempts: number
  retries: number
}

export const MAX_BATCH = 256

export interface RequestRefOptions {
  /** Run just before the push (inside the workspace's lock): throws to refuse. */
  checkFence?: () => Promise<void>
  /** The branch to publish; default: the workspace's task branch of the task (an assistant names its own). */
  branch?: string
  /** Refuse (NoNewCommitsError) a branch with no commits beyond the shared branch, as fetched now. */
  requireNewCommits?: boolean
  /**
   * Publish this commit (one of the branch's, verified before: a background
   * integrate) instead of the branch's tip. The working tree is not checked
   * then: the agent has gone on with other work since it handed this over.
   */
  commit?: string
}

/**
 * Publish a branch for an integrator as refs/agency/<agent>/<task>; returns
 * what to put in the integration request. The ref is the agent's own: a
 * holder's and an assistant's requests for one task never share a ref.
 *
 * Not inside the clone's exclusive section: it uses no scratch tree and
 * moves no ref an integrate reads (its check of new commits fetches into a
 * ref of its own), and an integrate holds that section for its whole verify,
 * minutes: a request (and so `agency integrate --background`, which answers
 * at once) would have waited for the verify of the change before it.
 */
export async function pushRequestRef(ws: Workspace, task: string, opts: RequestRefOptions = {}): Promise<{ ref: string; commit: string }> {
  const branch = opts.branch !== undefined ? checkBranchName(opts.branch) : ws.taskBranch(task)
  const ref = requestRefName(ws.agentId, task)
  const commit = await handedCommit(ws, branch, opts.commit)
  if (opts.requireNewCommits === true) await checkNewCommits(ws, branch, commit)
  await opts.checkFence?.()
  // Forced: the author may re-publish after more work. Only lock contention can refuse it.
  for (let attempt = 1; ; attempt++) {
    const pushed = await pushRefspecs(ws, [`+${commit}:${ref}`])
    if (pushed.ok) return { ref, commit }
    if (attempt >= 3) throw new UnavailableError(`publishing ${ref} did not land: ${pushed.reason}`)
    await sleep(defaultJitter(attempt, 100))
  }
}

/** Throws NoNewCommitsError when `commit` is already in the shared branch's history (fetched now). */
async function checkNewCommits(ws: Workspace, branch: string, commit: string): Promise<void> {
  // A ref of its own: an integrate running meanwhile fetches refs/remotes/origin/<branch> and merges on it.
  const sharedRef = `refs/agency-requests/shared/${ws.branch}`
  await fetchRefspecs(ws, [`+refs/heads/${ws.branch}:${sharedRef}`])
  if (await isAncestor(ws.dir, commit, sharedRef)) throw new NoNewCommitsError(branch, ws.branch)
}

interface Link {
  request: IntegrationRequest
  commit: string
}

export async function integrateBatch(opts: BatchOptions): Promise<BatchResult> {
  const ws = opts.workspace
  const { valid: requests, refused } = checkRequests(opts.requests)
  const verify = await checkVerifyCommand(opts.verify)
  const junitPaths = checkJunitPaths(opts.junitPaths)
  const links = checkLinks(opts.linkFromWorkspace)
  const maxAttempts = checkAttempts(opts.maxAttempts ?? DEFAULT_MAX_ATTEMPTS)
  const jitter = opts.jitter ?? defaultJitter

  const cleanUp = async (out: BatchResult): Promise<BatchResult> => {
    const landed = [...out.landed, ...out.recovered]
    if (opts.deleteLandedRefs !== false && landed.length > 0) await deleteRequestRefs(ws, landed)
    return out
  }

  return await ws.exclusive(async () => {
    const out: BatchResult = {
      landed: [],
      alreadyMerged: [],
      recovered: [],
      conflicts: [],
      failed: [],
      deferred: [],
      refused,
      pushed: null,
      tests: null,
      verifyMs: null,
      verifyRuns: 0,
      attempts: 0,
      retries: 0
    }
    const sharedRef = `refs/remotes/origin/${ws.branch}`
    let candidates = requests
    let lastReason = ''
    let attemptMs = 0

    while (candidates.length > 0 && out.attempts < maxAttempts) {
      if (out.attempts > 0) await sleep(jitter(out.attempts, attemptMs))
      out.attempts++
      const started = performance.now()
      out.retries = out.attempts - 1
      // Every request ref and task fence in one fetch; a wildcard tolerates refs that are gone.
      await fetchRefspecs(ws, [`+refs/heads/${ws.branch}:${sharedRef}`, '+refs/agency/*:refs/remotes/origin-agency/*'], ['--prune'])
      const base = await revParse(ws.dir, sharedRef)
      if (base == null) throw new RemoteBranchNotFoundError(ws.remote, ws.branch)

      const fences = new Map<string, TaskFence | null>()
      const present: IntegrationRequest[] = []
      for (const r of candidates) {
        if (fences.has(r.task)) {
          out.deferred.push({ request: r, reason: `another request for task ${r.task} is in this batch; this one goes in a later batch` })
          continue
        }
        let fence: TaskFence | null
        try {
          fence = await trackedTaskFence(ws, r.task)
          checkTaskFence(fence, r.task, r.epoch, r.author)
        } catch (err) {
          // Superseded at the remote (or its fence is unreadable): this request never lands.
          if (!(err instanceof FailedPreconditionError)) throw err
          out.refused.push({
            request: r,
            reason: err.message,
            ...(err instanceof FencedError ? { fenced: { epoch: err.remoteEpoch, agent: err.remoteAgent } } : {})
          })
          continue
        }
        fences.set(r.task, fence)
        if ((await revParse(ws.dir, r.commit)) == null) {
          out.deferred.push({ request: r, reason: `commit ${r.commit} is not on the remote (was ${r.ref} re-published?)` })
          continue
        }
        const landing = await provenLanding(ws.dir, fence, { epoch: r.epoch, agent: r.author, sharedRef, contains: r.commit })
        if (landing != null) out.recovered.push({ request: r, commit: landing })
        else present.push(r)
      }
      if (present.length === 0) return await cleanUp(out)

      const tree = await addScratchTree(ws, base, links)
      try {
        const batch = await bisectBatch(ws, tree, base, present, out, cwd =>
          runVerify({ command: verify, cwd, timeoutMs: opts.verifyTimeoutMs, junitPaths })
        )
        if (batch.good.length === 0) return await cleanUp(out)
        // The shared branch and every landed task's fence, all or nothing, each fence leased at what was read.
        const pushed = await pushRefspecs(
          ws,
          [`${batch.tip}:refs/heads/${ws.branch}`, ...batch.good.map(l => fenceRefspec(l.request.task, l.commit))],
          ['--atomic', ...batch.good.map(l => fenceLease(l.request.task, fences.get(l.request.task) ?? null))]
        )
        if (pushed.ok) {
          out.landed = batch.good
          out.pushed = batch.tip
          out.tests = batch.tipRun?.tests ?? null
          out.verifyMs = batch.tipRun?.durationMs ?? null
          ws.log.info(
            { landed: batch.good.length, failed: out.failed.length, conflicts: out.conflicts.length, retries: out.retries },
            'batch integrated'
          )
          return await cleanUp(out)
        }
        lastReason = pushed.reason
        attemptMs = performance.now() - started
        candidates = batch.good.map(l => l.request)
      } finally {
        await tree.remove()
      }
    }
    for (const request of candidates) out.deferred.push({ request, reason: `every push lost a race (${lastReason})` })
    return await cleanUp(out)
  })
}

interface Bisected {
  good: Link[]
  tip: string
  tipRun: VerifyRun | null
}

/**
 * Merge `requests` onto `base` in order and find the good ones. A red batch is
 * split by binary search for its shortest failing prefix; that prefix's last
 * request is bad, the requests before it are good, and the rest are merged
 * again without it and the search repeats. Conflicts, already-merged and bad
 * requests are recorded in `out`.
 */
async function bisectBatch(
  ws: Workspace,
  tree: ScratchTree,
  base: string,
  requests: IntegrationRequest[],
  out: BatchResult,
  verifyIn: (cwd: string) => Promise<VerifyRun>
): Promise<Bisected> {
  const runs = new Map<string, VerifyRun>()
  const verifyAt = async (commit: string): Promise<VerifyRun> => {
    const known = runs.get(commit)
    if (known != null) return known
    await tree.reset(commit)
    tree.touched()
    const run = await verifyIn(tree.path)
    out.verifyRuns++
    runs.set(commit, run)
    return run
  }

  const good: Link[] = []
  let start = base // always `base` or a commit that verified green
  let pending = requests
  while (pending.length > 0) {
    const chain = await mergeChain(ws, tree, start, pending, out)
    if (chain.length === 0) break
    const tipRun = await verifyAt(chain[chain.length - 1].commit)
    if (tipRun.ok) {
      good.push(...chain)
      return { good, tip: chain[chain.length - 1].commit, tipRun }
    }
    // Prefix `lo` is green (0 = start), prefix `hi` is red.
    let lo = 0
    let hi = chain.length
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1
      if ((await verifyAt(chain[mid - 1].commit)).ok) lo = mid
      else hi = mid
    }
    if (hi === 1 && start === base && good.length === 0 && !(await verifyAt(base)).ok) {
      // Red before any request: blaming the first one would be wrong.
      const why = (await verifyAt(base)).summary.split('\n')[0]
      for (const l of chain) out.deferred.push({ request: l.request, reason: `the shared branch fails verify on its own (${why})` })
      break
    }
    const bad = chain[hi - 1]
    const badRun = await verifyAt(bad.commit)
    out.failed.push({ request: bad.request, summary: badRun.summary, tests: badRun.tests, verifyMs: badRun.durationMs })
    good.push(...chain.slice(0, hi - 1))
    if (hi > 1) start = chain[hi - 2].commit
    pending = chain.slice(hi).map(l => l.request)
  }
  return { good, tip: good.length > 0 ? good[good.length - 1].commit : base, tipRun: good.length > 0 ? (runs.get(start) ?? null) : null }
}

/** Merge each request onto the last, in order; conflicting and already-merged ones are set aside. */
async function mergeChain(
  ws: Workspace,
  tree: ScratchTree,
  start: string,
  requests: IntegrationRequest[],
  out: BatchResult
): Promise<Link[]> {
  await tree.reset(start)
  const chain: Link[] = []
  for (const request of requests) {
    const trailers = agencyTrailers(request.task, request.epoch, request.author, { 'Agency-Integrator': ws.agentId })
    let merged
    try {
      merged = await tree.merge(request.commit, mergeMessage(undefined, `Merge ${request.ref}`, trailers))
    } catch (err) {
      // git refused the merge itself (unrelated histories, a commit that is not a commit):
      // that request can never land, the others still can. The tree is back where it was.
      if (!(err instanceof GitCommandError)) throw err
      out.refused.push({ request, reason: err.message })
      continue
    }
    if (merged.result === 'up-to-date') out.alreadyMerged.push(request)
    else if (merged.result === 'conflict') out.conflicts.push({ request, files: merged.files })
    else chain.push({ request, commit: merged.commit })
  }
  return chain
}

/** Best effort: a ref the author re-published since (lease fails) is left alone. */
async function deleteRequestRefs(ws: Workspace, landed: Link[]): Promise<void> {
  const leases = landed.map(l => `--force-with-lease=${l.request.ref}:${l.request.commit}`)
  const deletions = landed.map(l => `:${l.request.ref}`)
  try {
    await pushRefspecs(ws, deletions, leases)
  } catch (err) {
    ws.log.debug({ err }, 'could not delete landed request refs')
  }
}

/**
 * Splits the batch into requests that can be tried and requests refused with
 * their reason. A peer wrote these requests: one malformed request must not
 * stop the batch, for this run or any later one. Only a batch that is not a
 * list, or is too long, is the caller's error.
 */
function checkRequests(requests: unknown): { valid: IntegrationRequest[]; refused: BatchResult['refused'] } {
  if (!Array.isArray(requests)) throw new InvalidArgumentError('requests must be an array')
  if (requests.length > MAX_BATCH) throw new InvalidArgumentError(`a batch holds at most ${MAX_BATCH} requests, got ${requests.length}`)
  const valid: IntegrationRequest[] = []
  const refused: BatchResult['refused'] = []
  for (const r of requests as unknown[]) {
    try {
      valid.push(validateRequest(r))
    } catch (err) {
      refused.push({ request: r as IntegrationRequest, reason: (err as Error).message })
    }
  }
  return { valid, refused }
}

/**
 * Throws InvalidArgumentError unless `r` is a well-formed request whose ref is
 * the author's own for the task (refs/agency/<author>/<task>), so that one
 * agent cannot ask to land another's branch under its name. Use it to filter
 * requests read from the log before batching them.
 */
export function validateRequest(r: unknown): IntegrationRequest {
  if (r == null || typeof r !== 'object') throw new InvalidArgumentError('an integration request must be an object')
  const { ref, commit, task, epoch, author } = r as Partial<IntegrationRequest>
  const expected = requestRefName(checkRefComponent('author', author), checkRefComponent('task', task))
  checkEpoch(epoch)
  if (ref !== expected) throw new InvalidArgumentError(`ref ${JSON.stringify(ref)} is not the author's request ref ${expected}`)
  if (typeof commit !== 'string' || !/^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(commit)) {
    throw new InvalidArgumentError(`commit ${JSON.stringify(commit)} is not a full hex object id`)
  }
  return { ref, commit, task: task as string, epoch: epoch as number, author: author as string }
}
