// Background integration (agency integrate --background): the holder goes
// on with its next task while its daemon carries the change to the shared
// branch. With no integrator serving the swarm, the daemon writes the request
// and integrates it itself; while one serves, it verifies the change first and
// hands the request to the integrator's batch, taking it back should no
// integrator serve any more. A stop leaves a mark in the clone
// (repo/background-ref), and the next start resumes what it left unanswered.
import { handedCommit, verifyMerge, type Workspace, type IntegrationRequest as RepoRequest } from '../repo/index.js'
import { backgroundMarks, clearBackground, markBackground } from '../repo/background-ref.js'
import { FencedError } from '../repo/errors.js'
import { FailedPreconditionError } from '../core/errors.js'
import { DEFAULT_INTEGRATOR_WINDOW_MS, IntegratorSightings } from '../core/board/integrator-serving.js'
import { decodeBody } from '../core/log/kinds.js'
import type { StoredEntry } from '../core/log/ingest-result.js'
import type { IntegrateReply } from '../gen/agency/v1/api.js'
import type { Metrics } from '../metrics/metrics.js'
import type { Logger } from '../logger.js'
import type { BoardService } from './board-service.js'
import type { LogService } from './log-service.js'
import type { Integrator } from './integrator.js'
import type { DirectIntegration, IntegrateTarget, WrittenRequest } from './integration.js'
import type { RepoWorkspace } from './repo-workspace.js'
import type { Startable } from './startable.js'
import {
  acceptedForVerify,
  acceptedToIntegrate,
  assistNotInBackground,
  backgroundVerifyFailed,
  verifyingAlready
} from '../core/agent-words.js'

export interface BackgroundIntegrationComponents {
  me: string
  board: BoardService
  log: LogService
  metrics: Metrics
  logger: Logger
  workspace: RepoWorkspace
  integration: DirectIntegration
  integrator: Integrator
  /** an inbox notice for this agent (`once`: stored once ever under that key): what a background verify that failed tells it */
  notice?: (text: string, task: string, once: string) => void
}

export interface BackgroundIntegrationOptions {
  /**
   * an agent seen answering another agent's integration request this recently, and live, serves as integrator
   * (core/board/integrator-serving); default 15 min
   */
  integratorWindowMs?: number
}

/** What a background integrate hands the integrator: the request written after a green verify. */
interface HandedOver {
  target: IntegrateTarget
  message: string
  request: WrittenRequest
}

/** How often requests handed to an integrator are checked for one that no integrator serves any more. */
const HANDED_OVER_CHECK_MS = 10_000

export class BackgroundIntegration implements Startable {
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

  constructor(
    private readonly c: BackgroundIntegrationComponents,
    private readonly o: BackgroundIntegrationOptions
  ) {}

  private get ws(): Workspace {
    return this.c.workspace.workspace
  }

  /** Sightings of integrators from the log; the background integrates a stop left unanswered run again. */
  beforeStart(): void {
    this.unsubscribe = this.c.log.onAccepted(e => {
      this.sawEntry(e)
    })
    this.resumeBackground().catch(err => {
      this.c.logger.warn({ err }, 'cannot resume the background integrates a stop left unanswered')
    })
  }

  stop(): void {
    this.stopped = true
    clearInterval(this.handedOverTimer)
    this.unsubscribe?.()
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
  async integrateInBackground(taskArg: string, message: string): Promise<IntegrateReply> {
    const target = this.c.integration.resolveTask(taskArg)
    if (target.assist !== undefined) throw new FailedPreconditionError(assistNotInBackground(target.task))
    this.c.integration.verifyCommand()
    const { task, epoch } = target
    const integrator = this.integratorServing()
    if (integrator !== undefined) {
      const commit = await this.c.integration.whileBusy(task, async () => await this.handOverToVerify(target, message))
      return {
        result: 'accepted',
        commit: '',
        conflicts: [],
        summary: acceptedForVerify(task, epoch, commit, integrator),
        attempts: 0,
        tests: undefined,
        findingId: '',
        epoch,
        paths: []
      }
    }
    const request = await this.c.integration.whileBusy(task, async () => {
      const r = await this.c.integration.requestResolved(target)
      await markBackground(this.ws, task, r.commit)
      return r
    })
    this.runInBackground(target, message, request)
    return {
      result: 'accepted',
      commit: '',
      conflicts: [],
      summary: acceptedToIntegrate(task, epoch, request.commit),
      attempts: 0,
      tests: undefined,
      findingId: '',
      epoch,
      paths: []
    }
  }

  /**
   * The agent serving the swarm as integrator now, by what this daemon saw
   * (core/board/integrator-serving: live, and it answered another agent's
   * integration request within the window); undefined when none does.
   */
  integratorServing(): string | undefined {
    const board = this.c.board
    const now = board.now()
    return this.sightings.serving(now, this.o.integratorWindowMs ?? DEFAULT_INTEGRATOR_WINDOW_MS, peer =>
      board.protocol.leases.isLive(peer, now)
    )[0]
  }

  /**
   * An integration answering a request: its author is seen integrating for the request's author (on this daemon's clock, when it arrived).
   */
  private sawEntry(e: StoredEntry): void {
    if (e.entry.kind !== 'integration') return
    try {
      const i = decodeBody('integration', e.entry.body)
      if (i.request === '') return
      const requester = this.c.log.state.get(i.request)?.entry.author
      if (requester !== undefined) this.sightings.saw(e.entry.author, requester, this.c.board.now())
    } catch {
      /* a malformed body answers nothing */
    }
  }

  /**
   * Takes the task's committed tip for a verify before its request: the task
   * is carried on its way by this daemon alone (claim-protocol carryHere), so
   * claim --next, wait and status give its holder another task; peers see it
   * at work until the request is on the log. Returns the commit.
   */
  private async handOverToVerify(target: IntegrateTarget, message: string): Promise<string> {
    const { task, epoch } = target
    const ws = this.ws
    // What request-integration refuses: work not committed would not be verified nor landed.
    const commit = await handedCommit(ws, ws.taskBranch(task))
    this.c.board.board.checkDoable(task, this.c.me)
    if (this.verifying.has(task)) throw new FailedPreconditionError(verifyingAlready(task))
    this.verifying.add(task)
    this.c.board.protocol.carryHere(task, epoch)
    const running: Promise<void> = this.c.integration
      .whileBusy(task, async () => {
        await this.verifyThenRequest(target, message, commit)
      })
      .catch(err => {
        this.c.logger.warn({ err, task }, 'background verify failed')
      })
      .finally(() => {
        this.c.board.protocol.stopCarrying(task)
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
  private async verifyThenRequest(target: IntegrateTarget, message: string, commit: string): Promise<void> {
    const { task, epoch } = target
    const started = performance.now()
    let r
    try {
      r = await verifyMerge({ workspace: this.ws, task, epoch, commit, agentId: this.c.me, verify: this.c.integration.verifyCommand() })
    } catch (err) {
      if (this.stopped) return
      if (err instanceof FencedError) await this.c.board.fenced(task, epoch, { epoch: err.remoteEpoch, agent: err.remoteAgent })
      this.c.board.protocol.stopCarrying(task)
      if (this.c.board.board.holder(task)?.holder !== this.c.me) return // lost meanwhile: its holder was told so
      this.tellVerifyFailed(task, epoch, `could not verify: ${(err as Error).message}`, `error:${task}@${epoch}:${commit}:${Date.now()}`)
      return
    }
    this.c.logger.info({ task, epoch, result: r.result, ms: Math.round(performance.now() - started) }, 'background verify')
    if (this.stopped) return
    switch (r.result) {
      case 'green':
      case 'up-to-date': {
        if (r.result === 'green') this.c.metrics.verifySeconds.observe(r.verifyMs / 1000)
        // Marked first: a stop after the request is written finds it again at the next start (resumeBackground).
        await markBackground(this.ws, task, commit)
        let request
        try {
          request = await this.c.integration.requestResolved(target, commit)
        } catch (err) {
          await clearBackground(this.ws, task)
          this.c.board.protocol.stopCarrying(task)
          if (this.c.board.board.holder(task)?.holder !== this.c.me) return
          this.tellVerifyFailed(
            task,
            epoch,
            `verified, but the request could not be written: ${(err as Error).message}`,
            `request:${task}@${epoch}:${commit}:${Date.now()}`
          )
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
        this.c.board.protocol.stopCarrying(task)
        const findingId = await this.c.integration.recordUnlanded(
          task,
          epoch,
          r.result === 'conflict' ? { result: 'conflict', files: r.files } : { result: 'failed', summary: r.summary, verifyMs: r.verifyMs }
        )
        this.tellVerifyFailed(task, epoch, r.result === 'conflict' ? `conflict in ${r.files.join(', ')}` : 'failed', `finding:${findingId}`)
      }
    }
  }

  private tellVerifyFailed(task: string, epoch: number, what: string, once: string): void {
    this.c.notice?.(backgroundVerifyFailed(task, epoch, what), task, `background-verify:${once}`)
  }

  /**
   * A request written after a green verify waits for the integrator's batch.
   * Should no integrator serve any more while it is unanswered, this daemon
   * integrates it itself, as with no integrator, so it never waits for nobody.
   */
  private handOver(h: HandedOver): void {
    this.handedOver.set(h.target.task, h)
    if (this.handedOverTimer !== undefined || this.stopped) return
    this.handedOverTimer = setInterval(() => {
      this.checkHandedOver()
    }, HANDED_OVER_CHECK_MS)
    this.handedOverTimer.unref()
  }

  private checkHandedOver(): void {
    const board = this.c.board.board
    const serving = this.integratorServing() !== undefined
    for (const [task, h] of this.handedOver) {
      const { epoch } = h.target
      if (
        !board.requestPending(task, epoch, this.c.me) ||
        board.holder(task)?.holder !== this.c.me ||
        board.holder(task)?.epoch !== epoch
      ) {
        this.handedOver.delete(task)
        clearBackground(this.ws, task).catch(() => {})
        continue
      }
      if (serving) continue
      this.handedOver.delete(task)
      this.c.logger.info({ task, epoch }, 'no integrator serves any more: integrating the request here')
      this.runInBackground(h.target, h.message, h.request)
    }
    if (this.handedOver.size === 0) {
      clearInterval(this.handedOverTimer)
      this.handedOverTimer = undefined
    }
  }

  private runInBackground(target: IntegrateTarget, message: string, request: WrittenRequest): void {
    const running: Promise<void> = this.c.integration
      .whileBusy(target.task, async () => {
        await this.answerInBackground(target, message, request)
      })
      .catch(err => {
        this.c.logger.warn({ err, task: target.task }, 'background integrate failed')
      })
      .finally(() => {
        this.inBackground.delete(running)
      })
    this.inBackground.add(running)
  }

  /**
   * At start: the background integrates a stop left unanswered (their mark in
   * the clone names the request's commit, and the request of this agent at the
   * epoch it still holds is unanswered) run again; other marks are cleared.
   */
  private async resumeBackground(): Promise<void> {
    const marks = await backgroundMarks(this.ws)
    if (marks.size === 0) return
    const board = this.c.board.board
    for (const r of this.c.integrator.pendingRequests()) {
      if (
        r.author !== this.c.me ||
        marks.get(r.task) !== r.commit ||
        board.holder(r.task)?.holder !== this.c.me ||
        board.holder(r.task)?.epoch !== r.epoch
      )
        continue
      marks.delete(r.task)
      this.c.logger.info({ task: r.task, epoch: r.epoch }, 'resuming a background integrate a stop left unanswered')
      this.runInBackground({ task: r.task, epoch: r.epoch }, '', { ref: r.ref, commit: r.commit, entryId: r.id })
    }
    for (const task of marks.keys()) await clearBackground(this.ws, task)
  }

  /** Resolves once every background integrate running now has answered its request. */
  async backgroundSettled(): Promise<void> {
    await Promise.all([...this.inBackground])
  }

  /** A background integrate: integrate answers the request; a refusal answers it too (reportBad). */
  private async answerInBackground(target: IntegrateTarget, message: string, request: WrittenRequest): Promise<void> {
    try {
      await this.answerRequest(target, message, request)
    } finally {
      if (!this.c.board.board.requestPending(target.task, target.epoch, this.c.me)) await clearBackground(this.ws, target.task)
    }
  }

  private async answerRequest(target: IntegrateTarget, message: string, request: WrittenRequest): Promise<void> {
    const { task, epoch } = target
    if (!this.c.board.board.requestPending(task, epoch, this.c.me)) return // an integrator answered it first
    const asked: RepoRequest = { ref: request.ref, commit: request.commit, task, epoch, author: this.c.me }
    let r: IntegrateReply
    try {
      // the request's commit, not the branch's tip: the agent's tree is at work on its next task by now
      r = await this.c.integration.integrateResolved(target, message, request.entryId, request.commit)
    } catch (err) {
      if (!this.c.board.board.requestPending(task, epoch, this.c.me)) return
      const fenced = err instanceof FencedError
      await this.c.integrator.reportBad(
        asked,
        request.entryId,
        fenced ? 'fenced' : 'refused',
        `is ${fenced ? 'fenced' : 'refused'}: ${(err as Error).message}`,
        []
      )
      return
    }
    // Landed already (up to date) or lost a push race: answered here when the entry that landed it does not answer it.
    if (r.result === 'merged' && this.c.board.board.requestPending(task, epoch, this.c.me))
      await this.c.log.append('integration', { task, epoch, commit: r.commit, result: 'merged', paths: r.paths, request: request.entryId })
    if (r.result === 'contended')
      await this.c.integrator.reportBad(asked, request.entryId, 'refused', `is refused: ${r.summary}; integrate again`, [])
  }
}
