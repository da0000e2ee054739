// The shared repository inside agentd: this agent's workspace, verified
// integration with fencing against the board, the integrator queue, and the
// log entries that record what happened (integrations, test runs, failures).
import { homedir } from 'node:os'
import { join } from 'node:path'
import { openWorkspace, handedCommit, integrate, integrateBatch, pushRequestRef, verifyMerge, type Workspace, type IntegrationRequest as RepoRequest, type TestCounts } from '../repo/index.js'
import { pushWip, wipRefName } from '../repo/wip-ref.js'
import { backgroundMarks, clearBackground, markBackground } from '../repo/background-ref.js'
import { FencedError, NoNewCommitsError } from '../repo/errors.js'
import { checkTaskFence, readTaskFence } from '../repo/task-fence.js'
import { fetchProvenLanding, landedPaths } from '../repo/fence-landing.js'
import { revParse } from '../repo/git.js'
import { FailedPreconditionError, InvalidArgumentError, NotFoundError, isAgencyError } from '../core/errors.js'
import { PLAN_TASK_ID, validateTaskId } from '../core/board/task-id.js'
import { DEFAULT_INTEGRATOR_WINDOW_MS, IntegratorSightings } from '../core/board/integrator-serving.js'
import { decodeBody } from '../core/log/kinds.js'
import type { IntegrateReply, RunIntegratorReply, TestCounts as TestCountsMsg, WorkspaceReply } from '../gen/agency/v1/api.js'
import type { BoardService } from './board-service.js'
import { doneFirstText, type AssistService, type AssistTarget } from './assist-service.js'
import type { LogService } from './log-service.js'
import { backgroundVerifyFailedText } from './notice-writer.js'
import type { StoredEntry } from '../core/log/ingest-result.js'
import type { Metrics } from '../metrics/metrics.js'
import type { Logger } from '../logger.js'

/** The entries pendingRequests reads: only these are read from the log. */
const INTEGRATION_KINDS: ReadonlySet<string> = new Set(['integration', 'integration_request'])

export interface RepoConfig {
  /** the shared repository: path, file://, ssh or http */
  remote: string
  branch: string
  /** this agent's clone */
  workdir: string
  /** verify command; default: the goal's test command */
  verify?: string
  /** where clones on this host share objects */
  mirrorDir?: string
  /** how often a held task's branch is pushed to its wip ref; default 3 min, 0: only on release */
  wipPushMs?: number
  /** an agent seen answering another agent's integration request this recently, and live, serves as integrator (core/board/integrator-serving); default 15 min */
  integratorWindowMs?: number
}

export interface RepoServiceInit {
  config: RepoConfig
  me: string
  name: string
  board: BoardService
  log: LogService
  metrics: Metrics
  logger: Logger
  notify: (peer: string, text: string) => Promise<void>
  /** this agent's assists: integrate lands an assisted task's work (and marks it done) */
  assists?: AssistService
  /** an inbox notice for this agent (`once`: stored once ever under that key): what a background verify that failed tells it */
  notice?: (text: string, task: string, once: string) => void
}

/** What a background integrate hands the integrator: the request written after a green verify. */
interface HandedOver { target: IntegrateTarget, message: string, request: { ref: string, commit: string, entryId: string } }

/** How often requests handed to an integrator are checked for one that no integrator serves any more. */
const HANDED_OVER_CHECK_MS = 10_000

/** The task integrate works on: held by this agent, or assisted by it (then `assist` says how). */
interface IntegrateTarget { task: string, epoch: number, assist?: AssistTarget }

function countsMessage (t: TestCounts | null): TestCountsMsg | undefined {
  return t == null ? undefined : { passed: t.passed, failed: t.failed, total: t.total, format: t.format }
}

/** What a green verify run whose output no parser recognised records: its exit status decided. */
const EXIT_CODE_PASS = { passed: 1, failed: 0, total: 1, format: 'exit-code' } as const

const DEFAULT_WIP_PUSH_MS = 3 * 60_000

/** The summary of a test run recorded for a recovered landing: green by exit status, counts lost. */
export const RECOVERED_RUN_FORMAT = 'recovered'

/** Where a HELD claim left the workspace. */
export interface TaskStart { branch: string, note: string }

export function defaultMirrorDir (): string {
  return join(homedir(), '.agency', 'mirrors')
}

export class RepoService {
  workspace!: Workspace
  private readonly init: RepoServiceInit
  /** task -> the commit last pushed to its wip ref */
  private readonly wipPushed = new Map<string, string>()
  private wipTimer?: NodeJS.Timeout
  /** task -> integrates and requests of it running now */
  private readonly busy = new Map<string, number>()
  /** task@epoch -> the landing being recorded (recordLanding) */
  private readonly recovering = new Map<string, Promise<string>>()
  /** background integrates running now (integrateInBackground): the daemon's own integrates and its verifies before a request */
  private readonly inBackground = new Set<Promise<void>>()
  /** who was seen answering other agents' integration requests, on this daemon's clock */
  private readonly sightings = new IntegratorSightings()
  /** task -> its request written after a green verify, waiting for an integrator's batch */
  private readonly handedOver = new Map<string, HandedOver>()
  private handedOverTimer?: NodeJS.Timeout
  /** tasks whose change this daemon verifies now, before requesting (handOverToVerify) */
  private readonly verifying = new Set<string>()
  private unsubscribe?: () => void
  private stopped = false

  constructor (init: RepoServiceInit) {
    this.init = init
  }

  stop (): void {
    this.stopped = true
    clearInterval(this.wipTimer)
    clearInterval(this.handedOverTimer)
    this.unsubscribe?.()
  }

  /**
   * Puts the workspace on the task branch of a task just won: the existing
   * local branch, else a new one from the task's wip ref on the remote (the
   * previous holder's pushed work), else from the shared branch.
   */
  async startTask (task: string, handoffBranch: string, o: { fromAssist?: string } = {}): Promise<TaskStart> {
    const ws = this.workspace
    // A hand-off to this agent's assist of the task: its own assist branch (it has its approach's work) goes on.
    const from = o.fromAssist !== undefined ? `refs/heads/${ws.taskBranch(o.fromAssist)}` : handoffBranch.startsWith('refs/agency/') ? handoffBranch : wipRefName(task)
    try {
      let r
      try {
        r = await ws.checkoutTask(task, { from })
      } catch (err) {
        if (!(err instanceof NotFoundError)) throw err
        r = await ws.checkoutTask(task) // nothing pushed for it yet
        return { branch: r.branch, note: `your workspace ${ws.dir} is on ${r.branch}${r.created ? `, new from ${ws.branch}` : ''}: commit your work there, then agency integrate` }
      }
      const note = !r.created ? '' : o.fromAssist !== undefined ? `, starting from your assist branch (${ws.taskBranch(o.fromAssist)})` : `, starting from the previous holder's work (${from})`
      return { branch: r.branch, note: `your workspace ${ws.dir} is on ${r.branch}${note}: commit your work there, then agency integrate` }
    } catch (err) {
      if (!isAgencyError(err)) throw err
      return { branch: ws.taskBranch(task), note: `could not switch your workspace to ${ws.taskBranch(task)}: ${err.message}; switch with agency workspace --task ${task} once that is fixed` }
    }
  }

  /** Puts the workspace on a new branch for an assist, from the shared branch: a new approach starts from what landed. */
  async startAssist (branchTask: string): Promise<TaskStart> {
    const ws = this.workspace
    try {
      const r = await ws.checkoutTask(branchTask)
      return { branch: r.branch, note: `your workspace ${ws.dir} is on ${r.branch}${r.created ? `, new from ${ws.branch}` : ''}: commit your work there, then agency integrate (the first passing integration of the task wins)` }
    } catch (err) {
      if (!isAgencyError(err)) throw err
      return { branch: ws.taskBranch(branchTask), note: `could not switch your workspace to ${ws.taskBranch(branchTask)}: ${err.message}` }
    }
  }

  /** Pushes the task branch to the task's wip ref if it moved since the last push; the ref, or '' if nothing was pushed. */
  async saveWork (task: string): Promise<string> {
    try {
      const pushed = await pushWip(this.workspace, task, this.wipPushed.get(task))
      if (pushed == null) return this.wipPushed.has(task) ? wipRefName(task) : ''
      this.wipPushed.set(task, pushed)
      return wipRefName(task)
    } catch (err) {
      this.init.logger.warn({ err, task }, 'cannot push work in progress')
      return ''
    }
  }

  private startWipPushes (): void {
    const every = this.init.config.wipPushMs ?? DEFAULT_WIP_PUSH_MS
    if (every <= 0) return
    let running = false
    this.wipTimer = setInterval(() => {
      if (running) return
      running = true
      const held = this.init.board.held().map(h => h.task)
      void (async () => { for (const task of held) await this.saveWork(task) })().finally(() => { running = false })
    }, every)
    this.wipTimer.unref()
  }

  async start (): Promise<void> {
    const c = this.init.config
    this.workspace = await openWorkspace({
      remote: c.remote,
      branch: c.branch,
      workdir: c.workdir,
      agentId: this.init.me,
      mirrorDir: c.mirrorDir ?? defaultMirrorDir(),
      identity: { name: `agency ${this.init.name}`, email: `${this.init.name}@agency.invalid` },
      unreachableRemote: 'open'
    })
    this.startWipPushes()
    this.unsubscribe = this.init.log.onAccepted(e => { this.sawEntry(e) })
    this.resumeBackground().catch(err => { this.init.logger.warn({ err }, 'cannot resume the background integrates a stop left unanswered') })
  }

  private verifyCommand (): string {
    const v = this.init.config.verify ?? this.init.board.board.goal()?.testCommand ?? ''
    if (v.trim() === '') throw new FailedPreconditionError('no verify command: set the goal\'s test command (agency goal set "<goal>" --test "<command>") or start agentd with --verify')
    return v
  }

  /** The task to integrate: the one named, else the only one this agent holds, else the one it assists. */
  private resolveTask (task: string): IntegrateTarget {
    if (task === '') {
      const all = this.init.board.held()
      // The tasks worked on: not those on their way to the shared branch (carry-on), which leave their holder free to assist.
      const working = all.length > 0 ? this.init.board.working() : all
      const assist = working.length === 0 ? this.init.assists?.integrateTarget('') : undefined
      const held = working.length === 1 ? working : all
      if (assist !== undefined) return { task: assist.task, epoch: assist.epoch, assist }
      if (held.length !== 1) throw new InvalidArgumentError(held.length === 0 ? 'you hold no task: claim one first (agency ready, then agency claim <task>)' : `you hold ${held.length} tasks (${held.map(h => h.task).join(', ')}): name one with agency integrate --task <task>`)
      task = held[0].task
    }
    validateTaskId(task)
    const assist = this.init.board.board.holder(task)?.holder !== this.init.me ? this.init.assists?.integrateTarget(task) : undefined
    if (assist !== undefined) return { task, epoch: assist.epoch, assist }
    try {
      return this.init.board.board.checkDoable(task, this.init.me)
    } catch (err) {
      if (err instanceof FailedPreconditionError) throw new FailedPreconditionError(`${err.message}; integrate only a task you hold (agency status shows yours; agency claim <task> to take one)`)
      throw err
    }
  }

  async workspaceInfo (task: string): Promise<WorkspaceReply> {
    const ws = this.workspace
    let taskBranch = ''
    if (task !== '') {
      validateTaskId(task)
      taskBranch = (await ws.checkoutTask(task)).branch
    }
    return { path: ws.dir, remote: ws.remote, branch: ws.branch, taskBranch }
  }

  /**
   * An assistant's fence: the task is not done, still at the holder's epoch
   * the integration was started at, and still this agent's assist.
   */
  private checkAssistFence (a: AssistTarget): void {
    const board = this.init.board.board
    const done = board.doneRecord(a.task)
    if (done !== undefined) throw new FailedPreconditionError(doneFirstText(a.task, done.by, this.init.me))
    const moved = this.epochMoved(a.task, a.epoch)
    if (moved !== undefined) throw new FailedPreconditionError(`${moved} while you integrated: nothing was pushed; integrate again`)
    if (this.init.assists?.current()?.task !== a.task) throw new FailedPreconditionError(`you no longer assist ${a.task}: nothing was pushed`)
  }

  /**
   * Whether this agent's work on `task` is on its way to the shared branch:
   * an integrate or a request running here, or a request of its at `epoch`
   * no integration answers yet (hand-off by speed waits for it).
   */
  merging (task: string, epoch: number): boolean {
    return (this.busy.get(task) ?? 0) > 0 || this.init.board.board.requestPending(task, epoch, this.init.me)
  }

  private async whileBusy<T> (task: string, fn: () => Promise<T>): Promise<T> {
    this.busy.set(task, (this.busy.get(task) ?? 0) + 1)
    try {
      return await fn()
    } finally {
      const n = (this.busy.get(task) ?? 1) - 1
      if (n <= 0) this.busy.delete(task)
      else this.busy.set(task, n)
    }
  }

  async integrate (taskArg: string, message: string): Promise<IntegrateReply> {
    const target = this.resolveTask(taskArg)
    return await this.whileBusy(target.task, async () => await this.integrateResolved(target, message))
  }

  /**
   * Integrates the held task in the background (backgroundVerify in the
   * simulator); the answer is "accepted" at once, and the holder goes on with
   * claim --next.
   *
   * With no integrator serving the swarm (integratorServing), the request
   * request-integration writes is written first, at the held epoch, so the
   * task is on its way (carry-on). This daemon then integrates it as
   * `integrate` does and answers the request with its integration entry, as
   * an integrator does: a merged answer has the done written (board-service),
   * any other answers it with a failure finding and the holder's notice, and
   * the task is the holder's current task again. An integrator may serve the
   * same request: whichever lands it first answers it.
   *
   * While an integrator serves, the request is written only after this daemon
   * verified the change on the shared branch (verifyThenRequest), so the
   * integrator's batch never takes an unverified change.
   */
  async integrateInBackground (taskArg: string, message: string): Promise<IntegrateReply> {
    const target = this.resolveTask(taskArg)
    if (target.assist !== undefined) throw new FailedPreconditionError(`you assist ${target.task}, you do not hold it: integrate an assist without --background (agency integrate)`)
    this.verifyCommand()
    const { task, epoch } = target
    const integrator = this.integratorServing()
    if (integrator !== undefined) {
      const commit = await this.whileBusy(task, async () => await this.handOverToVerify(target, message))
      return { result: 'accepted', commit: '', conflicts: [], summary: `accepted: ${task}@${epoch} (${commit.slice(0, 12)}) is on its way; an integrator serves the swarm (${integrator}), so your daemon verifies it on the shared branch first, then asks the integrator to land it, and marks it done when it lands. Go on with agency claim --next; a notice tells you if it did not pass or land (then claim returns ${task} to fix first)`, attempts: 0, tests: undefined, findingId: '', epoch, paths: [] }
    }
    const request = await this.whileBusy(task, async () => {
      const r = await this.requestResolved(target)
      await markBackground(this.workspace, task, r.commit)
      return r
    })
    this.runInBackground(target, message, request)
    return { result: 'accepted', commit: '', conflicts: [], summary: `accepted: ${task}@${epoch} (${request.commit.slice(0, 12)}) is on its way; your daemon integrates it and marks it done when it lands. Go on with agency claim --next; a notice tells you if it did not land (then claim returns ${task} to fix first)`, attempts: 0, tests: undefined, findingId: '', epoch, paths: [] }
  }

  /**
   * The agent serving the swarm as integrator now, by what this daemon saw
   * (core/board/integrator-serving: live, and it answered another agent's
   * integration request within the window); undefined when none does.
   */
  integratorServing (): string | undefined {
    const board = this.init.board
    const now = board.now()
    return this.sightings.serving(now, this.init.config.integratorWindowMs ?? DEFAULT_INTEGRATOR_WINDOW_MS, peer => board.protocol.leases.isLive(peer, now))[0]
  }

  /** An integration answering a request: its author is seen integrating for the request's author (on this daemon's clock, when it arrived). */
  private sawEntry (e: StoredEntry): void {
    if (e.entry.kind !== 'integration') return
    try {
      const i = decodeBody('integration', e.entry.body)
      if (i.request === '') return
      const requester = this.init.log.state.get(i.request)?.entry.author
      if (requester !== undefined) this.sightings.saw(e.entry.author, requester, this.init.board.now())
    } catch { /* a malformed body answers nothing */ }
  }

  /**
   * Takes the task's committed tip for a verify before its request: the task
   * is carried on its way by this daemon alone (claim-protocol carryHere), so
   * claim --next, wait and status give its holder another task; peers see it
   * at work until the request is on the log. Returns the commit.
   */
  private async handOverToVerify (target: IntegrateTarget, message: string): Promise<string> {
    const { task, epoch } = target
    const ws = this.workspace
    // What request-integration refuses: work not committed would not be verified nor landed.
    const commit = await handedCommit(ws, ws.taskBranch(task))
    this.init.board.board.checkDoable(task, this.init.me)
    if (this.verifying.has(task)) throw new FailedPreconditionError(`your daemon is verifying ${task} already: go on with agency claim --next; a notice tells you if it did not pass`)
    this.verifying.add(task)
    this.init.board.protocol.carryHere(task, epoch)
    const running: Promise<void> = this.whileBusy(task, async () => { await this.verifyThenRequest(target, message, commit) })
      .catch(err => { this.init.logger.warn({ err, task }, 'background verify failed') })
      .finally(() => {
        this.init.board.protocol.stopCarrying(task)
        this.verifying.delete(task)
        this.inBackground.delete(running)
      })
    this.inBackground.add(running)
    return commit
  }

  /**
   * Verifies `commit` merged onto the shared branch (a scratch tree, as
   * integrate does), then: green, writes the integration request as
   * request-integration does, for that commit, and leaves it to the
   * integrator (handOver); red or a conflict, records the failed integrate
   * (its integration entry and failure finding) and tells the holder: no
   * request, and the task is its current task again. A stop meanwhile writes
   * nothing: the local carry is gone after a restart, so the task is the
   * holder's current task again.
   */
  private async verifyThenRequest (target: IntegrateTarget, message: string, commit: string): Promise<void> {
    const { task, epoch } = target
    const started = performance.now()
    let r
    try {
      r = await verifyMerge({ workspace: this.workspace, task, epoch, commit, agentId: this.init.me, verify: this.verifyCommand() })
    } catch (err) {
      if (this.stopped) return
      if (err instanceof FencedError) await this.init.board.fenced(task, epoch, { epoch: err.remoteEpoch, agent: err.remoteAgent })
      this.init.board.protocol.stopCarrying(task)
      if (this.init.board.board.holder(task)?.holder !== this.init.me) return // lost meanwhile: its holder was told so
      this.tellVerifyFailed(task, epoch, `could not verify: ${(err as Error).message}`, `error:${task}@${epoch}:${commit}:${Date.now()}`)
      return
    }
    this.init.logger.info({ task, epoch, result: r.result, ms: Math.round(performance.now() - started) }, 'background verify')
    if (this.stopped) return
    switch (r.result) {
      case 'green':
      case 'up-to-date': {
        if (r.result === 'green') this.init.metrics.verifySeconds.observe(r.verifyMs / 1000)
        // Marked first: a stop after the request is written finds it again at the next start (resumeBackground).
        await markBackground(this.workspace, task, commit)
        let request
        try {
          request = await this.requestResolved(target, commit)
        } catch (err) {
          await clearBackground(this.workspace, task)
          this.init.board.protocol.stopCarrying(task)
          if (this.init.board.board.holder(task)?.holder !== this.init.me) return
          this.tellVerifyFailed(task, epoch, `verified, but the request could not be written: ${(err as Error).message}`, `request:${task}@${epoch}:${commit}:${Date.now()}`)
          return
        }
        // Nothing to verify (already on the branch): integrated here, which records a landing the log lacks or refuses it.
        if (r.result === 'up-to-date') this.runInBackground(target, message, request)
        else this.handOver({ target, message, request })
        return
      }
      case 'conflict':
      case 'failed': {
        // Current again before anything tells the agent (the entries below wake agency wait).
        this.init.board.protocol.stopCarrying(task)
        const findingId = await this.recordUnlanded(task, epoch, r.result === 'conflict' ? { result: 'conflict', files: r.files } : { result: 'failed', summary: r.summary, verifyMs: r.verifyMs })
        this.tellVerifyFailed(task, epoch, r.result === 'conflict' ? `conflict in ${r.files.join(', ')}` : 'failed', `finding:${findingId}`)
      }
    }
  }

  private tellVerifyFailed (task: string, epoch: number, what: string, once: string): void {
    this.init.notice?.(backgroundVerifyFailedText(task, epoch, what), task, `background-verify:${once}`)
  }

  /**
   * A request written after a green verify waits for the integrator's batch.
   * Should no integrator serve any more while it is unanswered, this daemon
   * integrates it itself, as with no integrator, so it never waits for nobody.
   */
  private handOver (h: HandedOver): void {
    this.handedOver.set(h.target.task, h)
    if (this.handedOverTimer !== undefined || this.stopped) return
    this.handedOverTimer = setInterval(() => { this.checkHandedOver() }, HANDED_OVER_CHECK_MS)
    this.handedOverTimer.unref()
  }

  private checkHandedOver (): void {
    const board = this.init.board.board
    const serving = this.integratorServing() !== undefined
    for (const [task, h] of this.handedOver) {
      const { epoch } = h.target
      if (!board.requestPending(task, epoch, this.init.me) || board.holder(task)?.holder !== this.init.me || board.holder(task)?.epoch !== epoch) {
        this.handedOver.delete(task)
        clearBackground(this.workspace, task).catch(() => {})
        continue
      }
      if (serving) continue
      this.handedOver.delete(task)
      this.init.logger.info({ task, epoch }, 'no integrator serves any more: integrating the request here')
      this.runInBackground(h.target, h.message, h.request)
    }
    if (this.handedOver.size === 0) {
      clearInterval(this.handedOverTimer)
      this.handedOverTimer = undefined
    }
  }

  private runInBackground (target: IntegrateTarget, message: string, request: { ref: string, commit: string, entryId: string }): void {
    const running: Promise<void> = this.whileBusy(target.task, async () => { await this.answerInBackground(target, message, request) })
      .catch(err => { this.init.logger.warn({ err, task: target.task }, 'background integrate failed') })
      .finally(() => { this.inBackground.delete(running) })
    this.inBackground.add(running)
  }

  /**
   * At start: the background integrates a stop left unanswered (their mark in
   * the clone names the request's commit, and the request of this agent at the
   * epoch it still holds is unanswered) run again; other marks are cleared.
   */
  private async resumeBackground (): Promise<void> {
    const marks = await backgroundMarks(this.workspace)
    if (marks.size === 0) return
    const board = this.init.board.board
    for (const r of this.pendingRequests()) {
      if (r.author !== this.init.me || marks.get(r.task) !== r.commit || board.holder(r.task)?.holder !== this.init.me || board.holder(r.task)?.epoch !== r.epoch) continue
      marks.delete(r.task)
      this.init.logger.info({ task: r.task, epoch: r.epoch }, 'resuming a background integrate a stop left unanswered')
      this.runInBackground({ task: r.task, epoch: r.epoch }, '', { ref: r.ref, commit: r.commit, entryId: r.id })
    }
    for (const task of marks.keys()) await clearBackground(this.workspace, task)
  }

  /** Resolves once every background integrate running now has answered its request. */
  async backgroundSettled (): Promise<void> {
    await Promise.all([...this.inBackground])
  }

  /** A background integrate: integrate answers the request; a refusal answers it too (reportBad). */
  private async answerInBackground (target: IntegrateTarget, message: string, request: { ref: string, commit: string, entryId: string }): Promise<void> {
    try {
      await this.answerRequest(target, message, request)
    } finally {
      if (!this.init.board.board.requestPending(target.task, target.epoch, this.init.me)) await clearBackground(this.workspace, target.task)
    }
  }

  private async answerRequest (target: IntegrateTarget, message: string, request: { ref: string, commit: string, entryId: string }): Promise<void> {
    const { task, epoch } = target
    if (!this.init.board.board.requestPending(task, epoch, this.init.me)) return // an integrator answered it first
    const asked: RepoRequest = { ref: request.ref, commit: request.commit, task, epoch, author: this.init.me }
    let r: IntegrateReply
    try {
      // the request's commit, not the branch's tip: the agent's tree is at work on its next task by now
      r = await this.integrateResolved(target, message, request.entryId, request.commit)
    } catch (err) {
      if (!this.init.board.board.requestPending(task, epoch, this.init.me)) return
      const fenced = err instanceof FencedError
      await this.reportBad(asked, request.entryId, fenced ? 'fenced' : 'refused', `is ${fenced ? 'fenced' : 'refused'}: ${(err as Error).message}`, [])
      return
    }
    // Landed already (up to date) or lost a push race: answered here when the entry that landed it does not answer it.
    if (r.result === 'merged' && this.init.board.board.requestPending(task, epoch, this.init.me)) await this.init.log.append('integration', { task, epoch, commit: r.commit, result: 'merged', paths: r.paths, request: request.entryId })
    if (r.result === 'contended') await this.reportBad(asked, request.entryId, 'refused', `is refused: ${r.summary}; integrate again`, [])
  }

  private async integrateResolved ({ task, epoch, assist }: IntegrateTarget, message: string, request = '', commit?: string): Promise<IntegrateReply> {
    const verify = this.verifyCommand()
    const fence = async (): Promise<void> => {
      if (assist !== undefined) this.checkAssistFence(assist)
      else this.init.board.board.checkDoable(task, this.init.me)
    }
    const started = performance.now()
    let r
    try {
      r = await integrate({ workspace: this.workspace, task, epoch, agentId: this.init.me, branch: assist === undefined ? undefined : this.workspace.taskBranch(assist.branch), message: message !== '' ? message : undefined, verify, checkFence: fence, commit })
    } catch (err) {
      if (err instanceof FencedError) {
        // An assistant holds no claim to close: it is told who landed first.
        if (assist !== undefined) throw this.landedFirst(task, err)
        await this.init.board.fenced(task, epoch, { epoch: err.remoteEpoch, agent: err.remoteAgent })
      }
      throw err
    }
    const m = this.init.metrics
    m.integrations.inc({ result: r.result === 'up-to-date' ? 'merged' : r.result })
    m.integrationRetries.inc(r.retries)
    const reply: IntegrateReply = { result: r.result, commit: '', conflicts: [], summary: '', attempts: r.attempts, tests: undefined, findingId: '', epoch, paths: [] }
    switch (r.result) {
      case 'merged': {
        m.verifySeconds.observe(r.verifyMs / 1000)
        reply.commit = r.commit
        reply.tests = countsMessage(r.tests)
        reply.paths = r.paths
        await this.init.log.append('integration', { task, epoch, commit: r.commit, result: 'merged', paths: r.paths, request })
        await this.recordTestRun(r.commit, r.tests, r.verifyMs)
        if (assist !== undefined) {
          // The first passing integration wins: the assisted task is done, by its assistant (core/board/claim-ledger);
          // the assists write that done, here or, after a stop or a crash in between, at the next start.
          await this.init.assists?.landed(task)
          reply.summary = `merged into ${this.workspace.branch} as ${r.commit.slice(0, 12)}: your assist landed first, so ${task} is done by you (its holder and the other assistants are told to stop); next: agency claim --next`
          break
        }
        reply.summary = `merged into ${this.workspace.branch} as ${r.commit.slice(0, 12)}; when the task is finished: agency done ${task}`
        break
      }
      case 'up-to-date': {
        // Only work that landed counts: a branch with no commits of its own is not an integration.
        // A landing the remote's fence proves but the log lacks (a crash after the push) is recorded now.
        const recorded = assist === undefined ? this.init.board.board.integratedAt(task, epoch) : undefined
        const landed = recorded ?? (r.landing != null ? await this.recordLanding(task, epoch, r.landing) : undefined)
        const recovered = recorded === undefined && landed !== undefined ? ' (recovered: the push had landed, its integration entry was missing)' : ''
        if (assist !== undefined) {
          if (landed === undefined) throw this.noNewCommits({ assist: true, branch: this.workspace.taskBranch(assist.branch), again: 'integrate' })
          await this.init.assists?.landed(task)
          reply.result = 'merged'
          reply.commit = landed
          reply.summary = `merged into ${this.workspace.branch} as ${landed.slice(0, 12)}${recovered}: your assist landed first, so ${task} is done by you (its holder and the other assistants are told to stop); next: agency claim --next`
          break
        }
        if (landed == null) throw this.noNewCommits({ assist: false, branch: this.workspace.taskBranch(task), again: 'integrate', noChangeTask: task })
        reply.result = 'merged'
        reply.commit = landed
        reply.summary = recovered !== ''
          ? `merged into ${this.workspace.branch} as ${landed.slice(0, 12)}${recovered}; when the task is finished: agency done ${task}`
          : `already on the shared branch (${landed.slice(0, 12)}); when the task is finished: agency done ${task}`
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
    this.init.logger.info({ task, epoch, result: reply.result, ms: Math.round(performance.now() - started) }, 'integrate')
    return reply
  }

  /**
   * What an integrate that landed nothing records (and a background verify
   * that failed before its request): its integration entry (`request`: the
   * request it answers, if any) and a failure finding, whose id is returned.
   */
  private async recordUnlanded (task: string, epoch: number, r: { result: 'conflict', files: string[] } | { result: 'failed', summary: string, verifyMs: number }, request = ''): Promise<string> {
    if (r.result === 'conflict') {
      await this.init.log.append('integration', { task, epoch, commit: '', result: 'conflict', paths: r.files, request })
      const f = await this.init.log.append('finding', { kind: 'failure', text: `integrating ${task}@${epoch} conflicts with ${this.workspace.branch} in ${r.files.join(', ')}`, paths: r.files, tags: [`task:${task}`, 'conflict'], refs: [], supersedes: '' })
      return f.id
    }
    this.init.metrics.verifySeconds.observe(r.verifyMs / 1000)
    await this.init.log.append('integration', { task, epoch, commit: '', result: 'failed', paths: [], request })
    const f = await this.init.log.append('finding', { kind: 'failure', text: `integrating ${task}@${epoch} failed verify (${this.verifyCommand()}): ${r.summary}`.slice(0, 8000), paths: [], tags: [`task:${task}`, 'verify'], refs: [], supersedes: '' })
    return f.id
  }

  /**
   * Records the landing of `task`@`epoch` by this agent that the remote's
   * fence proves (`commit`, its merge on the shared branch) and the log lacks:
   * the daemon died between the push and the integration entry. At most one
   * entry per landing, however many callers ask at once; the commit recorded.
   */
  private async recordLanding (task: string, epoch: number, commit: string): Promise<string> {
    const key = `${task}@${epoch}`
    const running = this.recovering.get(key)
    if (running !== undefined) return await running
    const board = this.init.board.board
    const recording = (async () => {
      const paths = await landedPaths(this.workspace.dir, commit)
      const known = board.integratedAt(task, epoch)
      if (known !== undefined) return known
      await this.init.log.append('integration', { task, epoch, commit, result: 'merged', paths, request: '' })
      await this.recordRecoveredRun(commit)
      this.init.logger.warn({ task, epoch, commit }, 'recovered a landing whose integration entry was missing')
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
  async recoverLanding (task: string): Promise<void> {
    if (task === PLAN_TASK_ID) return
    const board = this.init.board.board
    const h = board.holder(task)
    if (h?.holder !== this.init.me || board.integratedAt(task, h.epoch) !== undefined) return
    let landing
    try {
      landing = await fetchProvenLanding(this.workspace, task, h.epoch, this.init.me)
    } catch (err) {
      this.init.logger.warn({ err, task }, 'cannot read the task fence to look for a landing the log lacks')
      return
    }
    if (landing != null) await this.recordLanding(task, h.epoch, landing)
  }

  /**
   * The test run of a recovered landing (fence-landing): its verify passed,
   * since the push follows a green verify only, but its counts and duration
   * died with the daemon. What is known is recorded, as a green run by exit
   * status (format "recovered"), when `commit` is still the tip of the shared
   * branch as fetched; a later landing's run describes the branch otherwise.
   */
  private async recordRecoveredRun (commit: string): Promise<void> {
    const tip = await revParse(this.workspace.dir, `refs/remotes/origin/${this.workspace.branch}`).catch(() => null)
    if (tip !== commit) return
    await this.init.log.append('test_run', { commit, branch: this.workspace.branch, passed: 1, failed: 0, total: 1, durationMs: 0, summary: RECOVERED_RUN_FORMAT })
  }

  /** The shared branch's new test result; a green run whose output no parser read counts by its exit status. */
  private async recordTestRun (commit: string, counts: TestCounts | null, durationMs: number): Promise<void> {
    const t = counts ?? EXIT_CODE_PASS
    await this.init.log.append('test_run', { commit, branch: this.workspace.branch, passed: t.passed, failed: t.failed, total: t.total, durationMs: Math.round(durationMs), summary: t.format })
  }

  /**
   * Publishes the branch of the task held (or assisted) as this agent's
   * request ref and asks an integrator to land it at the holder's epoch. An
   * assistant's request is fenced as its integrate is (checkAssistFence), its
   * branch must have commits of its own, and the remote's fence must not name
   * another agent at that epoch; when an integrator lands it, the assistant's
   * daemon marks the task done (assist-service).
   */
  async requestIntegration (taskArg: string): Promise<{ ref: string, commit: string, entryId: string }> {
    const target = this.resolveTask(taskArg)
    return await this.whileBusy(target.task, async () => await this.requestResolved(target))
  }

  /** `commit`: publish this commit of the task branch (verified before: verifyThenRequest) rather than its tip. */
  private async requestResolved ({ task, epoch, assist }: IntegrateTarget, commit?: string): Promise<{ ref: string, commit: string, entryId: string }> {
    const ws = this.workspace
    const fence = async (): Promise<void> => {
      if (assist === undefined) { this.init.board.board.checkDoable(task, this.init.me); return }
      this.checkAssistFence(assist)
      try {
        checkTaskFence(await readTaskFence(ws, task), task, epoch, this.init.me)
      } catch (err) {
        if (err instanceof FencedError) throw this.landedFirst(task, err)
        throw err
      }
    }
    let pushed
    try {
      pushed = await pushRequestRef(ws, task, assist === undefined ? { checkFence: fence, commit } : { checkFence: fence, branch: ws.taskBranch(assist.branch), requireNewCommits: true })
    } catch (err) {
      if (err instanceof NoNewCommitsError) throw this.noNewCommits({ assist: assist !== undefined, branch: err.branch, again: 'request integration' })
      throw err
    }
    const e = await this.init.log.append('integration_request', { task, epoch, ref: pushed.ref, commit: pushed.commit })
    return { ref: pushed.ref, commit: pushed.commit, entryId: e.id }
  }

  /**
   * The refusal of a branch with no commits of its own beyond the shared
   * branch (integrate, request-integration): what to commit where, what to run
   * again, and for a held task how to finish one that needs no change.
   */
  private noNewCommits (o: { assist: boolean, branch: string, again: 'integrate' | 'request integration', noChangeTask?: string }): FailedPreconditionError {
    const ws = this.workspace
    const noChange = o.noChangeTask !== undefined ? `; if the task needs no change, agency done ${o.noChangeTask} --no-change "<why>"` : ''
    return new FailedPreconditionError(`your ${o.assist ? 'assist' : 'task'} branch ${o.branch} has no commits beyond ${ws.branch}: commit your work in ${ws.dir} (git add -A && git commit -m "<what you did>") and ${o.again} again${noChange}`)
  }

  /** What an assistant is told when the remote's fence shows another agent's work landed first. */
  private landedFirst (task: string, err: FencedError): FailedPreconditionError {
    return new FailedPreconditionError(`${err.remoteAgent}'s work for ${task}@${err.remoteEpoch} landed first on the shared remote: yours was not pushed (the first passing integration wins). Stop, and record what you learned: agency assist --stop "<what you learned>"`)
  }

  /** Integration requests in log order that no integration entry answers yet. */
  pendingRequests (): Array<RepoRequest & { id: string }> {
    const answered = new Set<string>()
    const requests: Array<RepoRequest & { id: string }> = []
    for (const e of this.init.log.state.ordered(INTEGRATION_KINDS)) {
      if (e.entry.kind === 'integration') {
        const i = decodeBody('integration', e.entry.body)
        if (i.request !== '') answered.add(i.request)
      } else if (e.entry.kind === 'integration_request') {
        const r = decodeBody('integration_request', e.entry.body)
        requests.push({ id: e.id, ref: r.ref, commit: r.commit, task: r.task, epoch: r.epoch, author: e.entry.author })
      }
    }
    return requests.filter(r => !answered.has(r.id))
  }

  /** Whether a request is an assistant's, by this board: another agent won the claim at its epoch. */
  private byAssistant (r: RepoRequest): boolean {
    const winner = this.init.board.board.winnerAt(r.task, r.epoch)
    return winner !== undefined && winner !== r.author
  }

  /**
   * Why an assistant's request can no longer land, by this board: the task is
   * done, or moved on from the request's epoch. Undefined when it may land
   * (the remote's fence still decides), and for any other request.
   */
  private staleAssist (r: RepoRequest): string | undefined {
    if (!this.byAssistant(r)) return undefined
    const board = this.init.board.board
    const done = board.doneRecord(r.task)
    if (done !== undefined) return `task ${r.task} was done by ${done.by} first`
    return this.epochMoved(r.task, r.epoch)
  }

  /** How an assisted task moved on from the holder's epoch `epoch` the assist works at, by this board; undefined while it has not. */
  private epochMoved (task: string, epoch: number): string | undefined {
    const h = this.init.board.board.holder(task)
    return h?.epoch === epoch ? undefined : `task ${task} moved from epoch ${epoch} to ${h === undefined ? 'no holder' : `epoch ${h.epoch}`}`
  }

  async runIntegrator (maxBatch: number): Promise<RunIntegratorReply> {
    const reply: RunIntegratorReply = { landed: [], conflicts: [], failed: [], pending: 0, commit: '' }
    const m = this.init.metrics
    const pending: Array<RepoRequest & { id: string }> = []
    for (const r of this.pendingRequests()) {
      const stale = this.staleAssist(r)
      if (stale === undefined) { pending.push(r); continue }
      m.integrations.inc({ result: 'failed' })
      reply.failed.push(r.task)
      await this.reportBad(r, r.id, 'refused', `is refused: ${stale}`, [])
    }
    const batch = pending.slice(0, maxBatch > 0 ? maxBatch : 16)
    reply.pending = pending.length - batch.length
    if (batch.length === 0) return reply
    const verify = this.verifyCommand()
    const byKey = new Map(batch.map(r => [`${r.ref}@${r.commit}`, r]))
    const idOf = (r: RepoRequest): string => byKey.get(`${r.ref}@${r.commit}`)?.id ?? ''
    const result = await integrateBatch({ workspace: this.workspace, requests: batch.map(({ id: _id, ...r }) => r), verify, deleteLandedRefs: true })
    for (const l of result.landed) {
      m.integrations.inc({ result: 'merged' })
      reply.landed.push(l.request.task)
      await this.init.log.append('integration', { task: l.request.task, epoch: l.request.epoch, commit: l.commit, result: 'merged', paths: [], request: idOf(l.request) })
    }
    for (const r of result.recovered) {
      // Landed by an earlier batch whose entries were never written (fence-landing): answered now, nothing pushed.
      m.integrations.inc({ result: 'merged' })
      reply.landed.push(r.request.task)
      this.init.logger.warn({ task: r.request.task, epoch: r.request.epoch, commit: r.commit }, 'recovered a landed request whose integration entry was missing')
      await this.init.log.append('integration', { task: r.request.task, epoch: r.request.epoch, commit: r.commit, result: 'merged', paths: await landedPaths(this.workspace.dir, r.commit), request: idOf(r.request) })
    }
    for (const r of result.alreadyMerged) {
      // An assistant's branch with nothing of its own lands nothing: its done must not count (claim-ledger).
      if (this.byAssistant(r)) {
        m.integrations.inc({ result: 'failed' })
        reply.failed.push(r.task)
        await this.reportBad(r, idOf(r), 'refused', `is refused: ${r.commit.slice(0, 12)} is already on ${this.workspace.branch}, so it lands nothing of its own`, [])
        continue
      }
      reply.landed.push(r.task)
      await this.init.log.append('integration', { task: r.task, epoch: r.epoch, commit: r.commit, result: 'merged', paths: [], request: idOf(r) })
    }
    for (const c of result.conflicts) {
      m.integrations.inc({ result: 'conflict' })
      reply.conflicts.push(c.request.task)
      await this.reportBad(c.request, idOf(c.request), 'conflict', `conflicts with ${this.workspace.branch} in ${c.files.join(', ')}`, c.files)
    }
    for (const f of result.failed) {
      m.integrations.inc({ result: 'failed' })
      reply.failed.push(f.request.task)
      await this.reportBad(f.request, idOf(f.request), 'failed', `breaks the tests: ${f.summary}`, [])
    }
    for (const x of result.refused) {
      m.integrations.inc({ result: 'failed' })
      reply.failed.push(x.request.task)
      // Fenced: another agent's work landed first at the remote (result "fenced", so its author knows to stop).
      if (x.fenced !== undefined) await this.reportBad(x.request, idOf(x.request), 'fenced', `is fenced: ${x.fenced.agent}'s work for ${x.request.task}@${x.fenced.epoch} landed first on the shared remote`, [])
      else await this.reportBad(x.request, idOf(x.request), 'refused', `is refused: ${x.reason}`, [])
    }
    if (result.pushed != null) {
      reply.commit = result.pushed
      await this.recordTestRun(result.pushed, result.tests, 0)
    } else {
      const last = result.recovered.at(-1)
      if (last !== undefined) await this.recordRecoveredRun(last.commit)
    }
    reply.pending += result.deferred.length
    return reply
  }

  private async reportBad (r: RepoRequest, requestId: string, result: string, what: string, paths: string[]): Promise<void> {
    await this.init.log.append('integration', { task: r.task, epoch: r.epoch, commit: '', result, paths, request: requestId })
    const text = `integration request for ${r.task}@${r.epoch} (${r.commit.slice(0, 12)}) ${what}`.slice(0, 8000)
    await this.init.log.append('finding', { kind: 'failure', text, paths, tags: [`task:${r.task}`, result], refs: requestId !== '' ? [requestId] : [], supersedes: '' })
    if (r.author !== this.init.me) await this.init.notify(r.author, `[agency integrator] ${text}`).catch(() => {})
  }
}
