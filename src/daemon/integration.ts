// Direct integration: integrate (verify the task branch merged onto the
// shared branch, then push it, fenced against the board), the integration
// request an integrator lands, and the landing the remote's fence proves but
// the log lacks (a crash after the push), recorded once. What each records:
// the integration entry, a failure finding, the shared branch's test run.
import { integrate, pushRequestRef, type Workspace, type TestCounts } from '../repo/index.js'
import { FencedError, NoNewCommitsError } from '../repo/errors.js'
import { checkTaskFence, readTaskFence } from '../repo/task-fence.js'
import { fetchProvenLanding, landedPaths } from '../repo/fence-landing.js'
import { FailedPreconditionError, InvalidArgumentError } from '../core/errors.js'
import { PLAN_TASK_ID, validateTaskId } from '../core/board/task-id.js'
import type { IntegrateReply, TestCounts as TestCountsMsg } from '../gen/agency/v1/api.js'
import type { Metrics } from '../metrics/metrics.js'
import type { Logger } from '../logger.js'
import type { BoardService } from './board-service.js'
import type { LogService } from './log-service.js'
import { type AssistService, type AssistTarget } from './assist-service.js'
import { epochMoved } from './integrator.js'
import { recordRecoveredRun, recordTestRun } from './test-run-record.js'
import type { RepoWorkspace } from './repo-workspace.js'
import {
  HOLD_NO_TASK,
  NO_VERIFY_COMMAND,
  alreadyOnSharedBranch,
  doneFirst,
  holdSeveralTasks,
  integrateOnlyHeld,
  integrated,
  landedFirst,
  noNewCommits
} from '../core/agent-words.js'

export interface DirectIntegrationComponents {
  me: string
  board: BoardService
  log: LogService
  metrics: Metrics
  logger: Logger
  workspace: RepoWorkspace
  /** this agent's assists: integrate lands an assisted task's work (and marks it done) */
  assists?: AssistService
}

export interface DirectIntegrationOptions {
  /** verify command; default: the goal's test command */
  verify?: string
}

/** The task integrate works on: held by this agent, or assisted by it (then `assist` says how). */
export interface IntegrateTarget {
  task: string
  epoch: number
  assist?: AssistTarget
}

/** An integration request this agent wrote: its ref, its commit and its entry. */
export interface WrittenRequest {
  ref: string
  commit: string
  entryId: string
}

function countsMessage(t: TestCounts | null): TestCountsMsg | undefined {
  return t == null ? undefined : { passed: t.passed, failed: t.failed, total: t.total, format: t.format }
}

export class DirectIntegration {
  /** task -> integrates and requests of it running now */
  private readonly busy = new Map<string, number>()
  /** task@epoch -> the landing being recorded (recordLanding) */
  private readonly recovering = new Map<string, Promise<string>>()

  constructor(
    private readonly c: DirectIntegrationComponents,
    private readonly o: DirectIntegrationOptions
  ) {}

  private get ws(): Workspace {
    return this.c.workspace.workspace
  }

  verifyCommand(): string {
    const v = this.o.verify ?? this.c.board.board.goal()?.testCommand ?? ''
    if (v.trim() === '') throw new FailedPreconditionError(NO_VERIFY_COMMAND)
    return v
  }

  /** The task to integrate: the one named, else the only one this agent holds, else the one it assists. */
  resolveTask(task: string): IntegrateTarget {
    if (task === '') {
      const all = this.c.board.held()
      // The tasks worked on: not those on their way to the shared branch (carry-on), which leave their holder free to assist.
      const working = all.length > 0 ? this.c.board.working() : all
      const assist = working.length === 0 ? this.c.assists?.integrateTarget('') : undefined
      const held = working.length === 1 ? working : all
      if (assist !== undefined) return { task: assist.task, epoch: assist.epoch, assist }
      if (held.length !== 1) throw new InvalidArgumentError(held.length === 0 ? HOLD_NO_TASK : holdSeveralTasks(held.map(h => h.task)))
      task = held[0].task
    }
    validateTaskId(task)
    const assist = this.c.board.board.holder(task)?.holder !== this.c.me ? this.c.assists?.integrateTarget(task) : undefined
    if (assist !== undefined) return { task, epoch: assist.epoch, assist }
    try {
      return this.c.board.board.checkDoable(task, this.c.me)
    } catch (err) {
      if (err instanceof FailedPreconditionError) throw new FailedPreconditionError(integrateOnlyHeld(err.message))
      throw err
    }
  }

  /**
   * An assistant's fence: the task is not done, still at the holder's epoch
   * the integration was started at, and still this agent's assist.
   */
  private checkAssistFence(a: AssistTarget): void {
    const board = this.c.board.board
    const done = board.doneRecord(a.task)
    if (done !== undefined) throw new FailedPreconditionError(doneFirst(a.task, done.by, this.c.me))
    const moved = epochMoved(this.c.board.board, a.task, a.epoch)
    if (moved !== undefined) throw new FailedPreconditionError(`${moved} while you integrated: nothing was pushed; integrate again`)
    if (this.c.assists?.current()?.task !== a.task) throw new FailedPreconditionError(`you no longer assist ${a.task}: nothing was pushed`)
  }

  /**
   * Whether this agent's work on `task` is on its way to the shared branch:
   * an integrate or a request running here, or a request of its at `epoch`
   * no integration answers yet (hand-off by speed waits for it).
   */
  merging(task: string, epoch: number): boolean {
    return (this.busy.get(task) ?? 0) > 0 || this.c.board.board.requestPending(task, epoch, this.c.me)
  }

  async whileBusy<T>(task: string, fn: () => Promise<T>): Promise<T> {
    this.busy.set(task, (this.busy.get(task) ?? 0) + 1)
    try {
      return await fn()
    } finally {
      const n = (this.busy.get(task) ?? 1) - 1
      if (n <= 0) this.busy.delete(task)
      else this.busy.set(task, n)
    }
  }

  async integrate(taskArg: string, message: string): Promise<IntegrateReply> {
    const target = this.resolveTask(taskArg)
    return await this.whileBusy(target.task, async () => await this.integrateResolved(target, message))
  }

  async integrateResolved(
    { task, epoch, assist }: IntegrateTarget,
    message: string,
    request = '',
    commit?: string
  ): Promise<IntegrateReply> {
    const verify = this.verifyCommand()
    const fence = async (): Promise<void> => {
      if (assist !== undefined) this.checkAssistFence(assist)
      else this.c.board.board.checkDoable(task, this.c.me)
    }
    const started = performance.now()
    let r
    try {
      r = await integrate({
        workspace: this.ws,
        task,
        epoch,
        agentId: this.c.me,
        branch: assist === undefined ? undefined : this.ws.taskBranch(assist.branch),
        message: message !== '' ? message : undefined,
        verify,
        checkFence: fence,
        commit
      })
    } catch (err) {
      if (err instanceof FencedError) {
        // An assistant holds no claim to close: it is told who landed first.
        if (assist !== undefined) throw this.landedFirstError(task, err)
        await this.c.board.fenced(task, epoch, { epoch: err.remoteEpoch, agent: err.remoteAgent })
      }
      throw err
    }
    const m = this.c.metrics
    m.integrations.inc({ result: r.result === 'up-to-date' ? 'merged' : r.result })
    m.integrationRetries.inc(r.retries)
    const reply: IntegrateReply = {
      result: r.result,
      commit: '',
      conflicts: [],
      summary: '',
      attempts: r.attempts,
      tests: undefined,
      findingId: '',
      epoch,
      paths: []
    }
    switch (r.result) {
      case 'merged': {
        m.verifySeconds.observe(r.verifyMs / 1000)
        reply.commit = r.commit
        reply.tests = countsMessage(r.tests)
        reply.paths = r.paths
        await this.c.log.append('integration', { task, epoch, commit: r.commit, result: 'merged', paths: r.paths, request })
        await recordTestRun(this.c.log, this.ws, r.commit, r.tests, r.verifyMs)
        if (assist !== undefined) {
          // The first passing integration wins: the assisted task is done, by its assistant (core/board/claim-ledger);
          // the assists write that done, here or, after a stop or a crash in between, at the next start.
          await this.c.assists?.landed(task)
          reply.summary = integrated({ branch: this.ws.branch, commit: r.commit, task, assist: true })
          break
        }
        reply.summary = integrated({ branch: this.ws.branch, commit: r.commit, task, assist: false })
        break
      }
      case 'up-to-date': {
        // Only work that landed counts: a branch with no commits of its own is not an integration.
        // A landing the remote's fence proves but the log lacks (a crash after the push) is recorded now.
        const recorded = assist === undefined ? this.c.board.board.integratedAt(task, epoch) : undefined
        const landed = recorded ?? (r.landing != null ? await this.recordLanding(task, epoch, r.landing) : undefined)
        const recovered = recorded === undefined && landed !== undefined
        if (assist !== undefined) {
          if (landed === undefined)
            throw this.noNewCommitsError({ assist: true, branch: this.ws.taskBranch(assist.branch), again: 'integrate' })
          await this.c.assists?.landed(task)
          reply.result = 'merged'
          reply.commit = landed
          reply.summary = integrated({ branch: this.ws.branch, commit: landed, task, assist: true, recovered })
          break
        }
        if (landed == null)
          throw this.noNewCommitsError({ assist: false, branch: this.ws.taskBranch(task), again: 'integrate', noChangeTask: task })
        reply.result = 'merged'
        reply.commit = landed
        reply.summary = recovered
          ? integrated({ branch: this.ws.branch, commit: landed, task, assist: false, recovered })
          : alreadyOnSharedBranch(landed, task)
        break
      }
      case 'conflict': {
        reply.conflicts = r.files
        reply.summary = `merge conflict in ${r.files.join(', ')}`
        reply.findingId = await this.recordUnlanded(task, epoch, { result: 'conflict', files: r.files }, request)
        break
      }
      case 'failed': {
        reply.summary = r.summary
        reply.tests = countsMessage(r.tests)
        reply.findingId = await this.recordUnlanded(task, epoch, { result: 'failed', summary: r.summary, verifyMs: r.verifyMs }, request)
        break
      }
      case 'contended':
        reply.summary = r.reason
        break
    }
    this.c.logger.info({ task, epoch, result: reply.result, ms: Math.round(performance.now() - started) }, 'integrate')
    return reply
  }

  /**
   * What an integrate that landed nothing records (and a background verify
   * that failed before its request): its integration entry (`request`: the
   * request it answers, if any) and a failure finding, whose id is returned.
   */
  async recordUnlanded(
    task: string,
    epoch: number,
    r: { result: 'conflict'; files: string[] } | { result: 'failed'; summary: string; verifyMs: number },
    request = ''
  ): Promise<string> {
    if (r.result === 'conflict') {
      await this.c.log.append('integration', { task, epoch, commit: '', result: 'conflict', paths: r.files, request })
      const f = await this.c.log.append('finding', {
        kind: 'failure',
        text: `integrating ${task}@${epoch} conflicts with ${this.ws.branch} in ${r.files.join(', ')}`,
        paths: r.files,
        tags: [`task:${task}`, 'conflict'],
        refs: [],
        supersedes: ''
      })
      return f.id
    }
    this.c.metrics.verifySeconds.observe(r.verifyMs / 1000)
    await this.c.log.append('integration', { task, epoch, commit: '', result: 'failed', paths: [], request })
    const f = await this.c.log.append('finding', {
      kind: 'failure',
      text: `integrating ${task}@${epoch} failed verify (${this.verifyCommand()}): ${r.summary}`.slice(0, 8000),
      paths: [],
      tags: [`task:${task}`, 'verify'],
      refs: [],
      supersedes: ''
    })
    return f.id
  }

  /**
   * Records the landing of `task`@`epoch` by this agent that the remote's
   * fence proves (`commit`, its merge on the shared branch) and the log lacks:
   * the daemon died between the push and the integration entry. At most one
   * entry per landing, however many callers ask at once; the commit recorded.
   */
  private async recordLanding(task: string, epoch: number, commit: string): Promise<string> {
    const key = `${task}@${epoch}`
    const running = this.recovering.get(key)
    if (running !== undefined) return await running
    const board = this.c.board.board
    const recording = (async () => {
      const paths = await landedPaths(this.ws.dir, commit)
      const known = board.integratedAt(task, epoch)
      if (known !== undefined) return known
      await this.c.log.append('integration', { task, epoch, commit, result: 'merged', paths, request: '' })
      await recordRecoveredRun(this.c.log, this.ws, commit)
      this.c.logger.warn({ task, epoch, commit }, 'recovered a landing whose integration entry was missing')
      return commit
    })()
    this.recovering.set(key, recording)
    try {
      return await recording
    } finally {
      this.recovering.delete(key)
    }
  }

  /**
   * Before `agency done`: a held task whose landing at its epoch the log lacks
   * but the remote's fence proves gets that landing recorded. Does nothing
   * otherwise, and when the remote cannot be read (done then refuses as usual).
   */
  async recoverLanding(task: string): Promise<void> {
    if (task === PLAN_TASK_ID) return
    const board = this.c.board.board
    const h = board.holder(task)
    if (h?.holder !== this.c.me || board.integratedAt(task, h.epoch) !== undefined) return
    let landing
    try {
      landing = await fetchProvenLanding(this.ws, task, h.epoch, this.c.me)
    } catch (err) {
      this.c.logger.warn({ err, task }, 'cannot read the task fence to look for a landing the log lacks')
      return
    }
    if (landing != null) await this.recordLanding(task, h.epoch, landing)
  }

  /**
   * Publishes the branch of the task held (or assisted) as this agent's
   * request ref and asks an integrator to land it at the holder's epoch. An
   * assistant's request is fenced as its integrate is (checkAssistFence), its
   * branch must have commits of its own, and the remote's fence must not name
   * another agent at that epoch; when an integrator lands it, the assistant's
   * daemon marks the task done (assist-service).
   */
  async requestIntegration(taskArg: string): Promise<WrittenRequest> {
    const target = this.resolveTask(taskArg)
    return await this.whileBusy(target.task, async () => await this.requestResolved(target))
  }

  /** `commit`: publish this commit of the task branch (verified before: verifyThenRequest) rather than its tip. */
  async requestResolved({ task, epoch, assist }: IntegrateTarget, commit?: string): Promise<WrittenRequest> {
    const ws = this.ws
    const fence = async (): Promise<void> => {
      if (assist === undefined) {
        this.c.board.board.checkDoable(task, this.c.me)
        return
      }
      this.checkAssistFence(assist)
      try {
        checkTaskFence(await readTaskFence(ws, task), task, epoch, this.c.me)
      } catch (err) {
        if (err instanceof FencedError) throw this.landedFirstError(task, err)
        throw err
      }
    }
    let pushed
    try {
      pushed = await pushRequestRef(
        ws,
        task,
        assist === undefined
          ? { checkFence: fence, commit }
          : { checkFence: fence, branch: ws.taskBranch(assist.branch), requireNewCommits: true }
      )
    } catch (err) {
      if (err instanceof NoNewCommitsError)
        throw this.noNewCommitsError({ assist: assist !== undefined, branch: err.branch, again: 'request integration' })
      throw err
    }
    const e = await this.c.log.append('integration_request', { task, epoch, ref: pushed.ref, commit: pushed.commit })
    return { ref: pushed.ref, commit: pushed.commit, entryId: e.id }
  }

  /**
   * The refusal of a branch with no commits of its own beyond the shared
   * branch (integrate, request-integration): what to commit where, what to run
   * again, and for a held task how to finish one that needs no change.
   */
  private noNewCommitsError(o: {
    assist: boolean
    branch: string
    again: 'integrate' | 'request integration'
    noChangeTask?: string
  }): FailedPreconditionError {
    const ws = this.ws
    return new FailedPreconditionError(noNewCommits({ ...o, sharedBranch: ws.branch, dir: ws.dir }))
  }

  /** What an assistant is told when the remote's fence shows another agent's work landed first. */
  private landedFirstError(task: string, err: FencedError): FailedPreconditionError {
    return new FailedPreconditionError(landedFirst(err.remoteAgent, task, err.remoteEpoch))
  }
}
