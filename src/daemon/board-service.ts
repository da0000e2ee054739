// The board inside agentd: folds every accepted log entry into the sans-IO
// Board, runs the claim protocol (append, wait the settle window, answer HELD
// or LOST), watches this daemon's own claims for supersession, and tells both
// holders when live claims overlap.
import { performance } from 'node:perf_hooks'
import { Board, claimFromPlan, claimOutcome, overlapsFor, PLAN_TASK_ID, SettleWindow, type ClaimOverlap, type HolderInfo, type NewTask, type TaskView } from '../core/board/index.js'
import { validateGlob } from '../core/board/glob-pattern.js'
import { decodeBody, isKnownKind } from '../core/log/kinds.js'
import type { StoredEntry } from '../core/log/ingest-result.js'
import { FailedPreconditionError, InvalidArgumentError } from '../core/errors.js'
import { VerdictKind } from '../gen/agency/v1/log.js'
import type { LogService } from './log-service.js'
import type { EventBus } from './event-bus.js'
import type { StateStore } from '../store/index.js'
import type { Logger } from '../logger.js'

export interface BoardServiceInit {
  me: string
  log: LogService
  events: EventBus
  state: StateStore
  logger: Logger
  /** is this peer live, on this daemon's monotonic clock */
  isLive: (peer: string) => boolean
  /** a direct message to a peer, for overlap notices */
  notify: (peer: string, text: string) => Promise<void>
  /** the presence heartbeat should go out now (claims changed) */
  onHeldChanged: () => void
  settle?: { minMs?: number, maxMs?: number, defaultMs?: number, fixedMs?: number }
  metrics?: { claimsLost: () => void, claimConflicts: () => void, takeovers: () => void }
}

export interface ClaimAnswer {
  outcome: 'HELD' | 'LOST' | 'PENDING'
  task: string
  epoch: number
  winner: string
  handoff: string
  branch: string
  overlaps: string[]
  settleMs: number
}

const MY_CLAIMS_KEY = 'board/my-claims'

export class BoardService {
  readonly board: Board
  readonly settle: SettleWindow
  private readonly init: BoardServiceInit
  /** claims this daemon believes it holds: task -> epoch (persisted, so a restart learns what it lost) */
  private mine = new Map<string, number>()
  /** tasks whose claim is in its settle window: its answer, not a notice, tells the agent how it went */
  private readonly settling = new Set<string>()
  /** overlap pairs already notified: "myTask|otherTask|otherHolder" */
  private readonly notified = new Set<string>()

  constructor (init: BoardServiceInit) {
    this.init = init
    this.board = new Board({ liveness: { isLive: (peer) => peer === init.me || init.isLive(peer) } })
    const { fixedMs: _fixed, ...window } = init.settle ?? {}
    this.settle = new SettleWindow(Object.fromEntries(Object.entries(window).filter(([, v]) => v !== undefined)))
  }

  /** Folds the restored log in and reloads the claims this daemon held before a restart. */
  async start (): Promise<void> {
    for (const e of this.init.log.state.afterCursor(0)) this.apply(e)
    const saved = await this.init.state.get<Array<[string, number]>>(MY_CLAIMS_KEY)
    this.mine = new Map(saved ?? [])
    this.init.log.onAccepted(e => { this.apply(e); this.afterChange(e) })
    this.checkMine()
  }

  private apply (e: StoredEntry): void {
    const { entry } = e
    if (!isKnownKind(entry.kind)) return
    let body: unknown
    try { body = decodeBody(entry.kind, entry.body) } catch { return }
    this.board.apply({ id: e.id, author: entry.author, seq: entry.seq, lamport: entry.lamport, time: entry.time, kind: entry.kind, body })
  }

  /** A gossip latency sample, for the settle window. */
  observeLatency (ms: number): void {
    this.settle.addSample(ms)
  }

  settleMs (): number {
    return this.init.settle?.fixedMs ?? this.settle.windowMs()
  }

  now (): number {
    return performance.now()
  }

  private afterChange (e: StoredEntry): void {
    const kind = e.entry.kind
    if (kind === 'claim' || kind === 'release' || kind === 'done') this.checkMine()
    if (kind === 'claim' && e.entry.author !== this.init.me) this.checkOverlaps()
  }

  /** Tells the agent when a claim it held is no longer its own. */
  private checkMine (): void {
    let changed = false
    for (const [task, epoch] of this.mine) {
      const o = claimOutcome(this.board, task, this.init.me, epoch)
      if (o.outcome === 'HELD') continue
      if (o.reason === 'released' || (o.reason === 'done' && o.winner === this.init.me)) { this.mine.delete(task); changed = true; continue }
      // Still in its settle window: the claim's own answer says LOST and releases it.
      if (this.settling.has(task)) continue
      this.mine.delete(task)
      changed = true
      this.init.metrics?.claimsLost()
      const type = o.reason === 'superseded' ? 'claim_superseded' : 'claim_lost'
      this.init.events.emit({ type, task, peerId: o.winner ?? '', text: `your claim on ${task}@${epoch} is lost (${o.reason})${o.winner != null ? `: ${o.winner} holds it now` : ''}`, detail: { epoch, reason: o.reason, winner: o.winner ?? null } })
      this.init.logger.info({ task, epoch, reason: o.reason, winner: o.winner }, 'claim lost')
      // After the entry that outbid it has been handed to every listener.
      if (o.reason === 'outbid') {
        setImmediate(() => { this.releaseOutbid(task, epoch).catch(err => { this.init.logger.warn({ err, task }, 'cannot release a lost claim') }) })
      }
    }
    if (changed) this.persistMine()
  }

  private persistMine (): void {
    this.init.state.put(MY_CLAIMS_KEY, [...this.mine], { sync: true }).catch(err => { this.init.logger.warn({ err }, 'cannot save claims') })
    this.init.onHeldChanged()
  }

  /** Overlaps between my live claims and others': an event and a direct message, once per pair. */
  private checkOverlaps (): void {
    const now = this.now()
    for (const [task] of this.mine) {
      const mine = this.board.holder(task)
      if (mine?.holder !== this.init.me) continue
      for (const o of overlapsFor(this.board, mine, now)) this.reportOverlap(o)
    }
  }

  private reportOverlap (o: ClaimOverlap): void {
    const other = o.a
    const mine = o.b
    const key = `${mine.task}|${other.task}|${other.holder}`
    if (this.notified.has(key)) return
    this.notified.add(key)
    this.init.metrics?.claimConflicts()
    const paths = o.globs.map(([x, y]) => x === y ? x : `${x} ~ ${y}`)
    this.init.events.emit({ type: 'overlap', task: mine.task, peerId: other.holder, text: `your task ${mine.task} overlaps ${other.task} held by ${other.holder} on ${paths.join(', ')}`, detail: { myTask: mine.task, otherTask: other.task, other: other.holder, paths } })
    const text = `[agency] scope overlap: my task ${mine.task} (${mine.scope.join(', ')}) overlaps your task ${other.task} (${other.scope.join(', ')}) on ${paths.join(', ')}. Let's agree who changes what.`
    this.init.notify(other.holder, text).catch(err => { this.init.logger.debug({ err: (err as Error).message }, 'overlap notice not sent') })
  }

  // ---- commands ----

  async claim (task: string, scope: string[], noWait = false): Promise<ClaimAnswer> {
    const plan = this.board.checkClaimable(task, this.init.me, this.now(), scope)
    const answer = (outcome: ClaimAnswer['outcome'], winner = '', settleMs = 0): ClaimAnswer => ({
      outcome,
      task,
      epoch: plan.epoch,
      winner,
      handoff: plan.takeover?.note ?? '',
      branch: plan.takeover?.branch ?? '',
      overlaps: this.overlapPeers(task),
      settleMs
    })
    if (plan.alreadyHeld) return answer('HELD', this.init.me)
    await this.init.log.append('claim', claimFromPlan(plan))
    if (plan.takeover?.expired === true) this.init.metrics?.takeovers()
    this.mine.set(task, plan.epoch)
    this.persistMine()
    if (noWait) return answer('PENDING')
    const settleMs = this.settleMs()
    this.settling.add(task)
    try {
      await new Promise(resolve => setTimeout(resolve, settleMs))
    } finally {
      this.settling.delete(task)
    }
    const o = claimOutcome(this.board, task, this.init.me, plan.epoch)
    if (o.outcome === 'HELD') {
      this.checkOverlaps()
      return answer('HELD', this.init.me, settleMs)
    }
    // A losing claim is released at once: left standing, it would become the
    // holder by the holder rule if the winner released.
    this.mine.delete(task)
    this.persistMine()
    if (o.reason === 'outbid') await this.releaseOutbid(task, plan.epoch)
    this.init.metrics?.claimsLost()
    return answer('LOST', o.winner ?? '', settleMs)
  }

  /**
   * Releases this daemon's claim at `epoch`, outbid by a smaller one (a race,
   * or two sides of a healed partition): left standing, it would become the
   * holder by the holder rule when the winner releases, held by an agent
   * doing other work. A lost race leaves no hand-off notes.
   */
  private async releaseOutbid (task: string, epoch: number): Promise<void> {
    if (this.board.claimStatus(task, this.init.me, epoch) === 'released') return
    await this.init.log.append('release', { task, epoch, note: '', branch: '' })
  }

  /** The answer to a claim made with no_wait, once settled. */
  claimState (task: string): { holder: string, epoch: number } | undefined {
    const h = this.board.holder(task)
    return h == null ? undefined : { holder: h.holder, epoch: h.epoch }
  }

  private overlapPeers (task: string): string[] {
    const mine = this.board.holder(task)
    if (mine?.holder !== this.init.me) return []
    return [...new Set(overlapsFor(this.board, mine, this.now()).map(o => o.a.holder))]
  }

  async release (task: string, note: string, branch: string): Promise<TaskView> {
    const held = this.board.checkReleasable(task, this.init.me)
    await this.init.log.append('release', { task, epoch: held.epoch, note, branch })
    this.mine.delete(task)
    this.persistMine()
    return this.task(task)
  }

  /**
   * Marks a held task done: only once this epoch's work is on the shared
   * branch, or with `noChange` saying why none was needed (recorded as a
   * finding). The plan task needs no integration: its work is the tasks.
   */
  async done (task: string, commit: string, paths: string[], noChange = ''): Promise<TaskView> {
    const held = this.board.checkDoable(task, this.init.me)
    for (const p of paths) validateGlob(p)
    const landed = this.board.integratedAt(task, held.epoch)
    if (task !== PLAN_TASK_ID && landed === undefined && noChange.trim() === '') {
      throw new FailedPreconditionError(`task ${task}@${held.epoch} has no work on the shared branch yet: commit in your workspace and run agency integrate --task ${task} first; if the task needs no change, agency done ${task} --no-change "<why>"`)
    }
    if (noChange.length > 4000) throw new InvalidArgumentError('the no-change reason is longer than 4000 characters')
    if (landed === undefined && noChange.trim() !== '') {
      await this.init.log.append('finding', { kind: 'note', text: `${task} done without a change: ${noChange.trim()}`, paths, tags: [`task:${task}`, 'no-change'], refs: [], supersedes: '' })
    }
    await this.init.log.append('done', { task, epoch: held.epoch, commit: commit !== '' ? commit : landed ?? '', paths })
    this.mine.delete(task)
    this.persistMine()
    return this.task(task)
  }

  async addTask (t: NewTask): Promise<TaskView> {
    return (await this.addTasks([t]))[0]
  }

  /** Adds a plan: checked as one graph against the board, then appended dependencies first; all or nothing. */
  async addTasks (tasks: NewTask[]): Promise<TaskView[]> {
    const fresh = this.board.checkNewTasks(tasks)
    for (const t of fresh) await this.init.log.append('task', t)
    return tasks.map(t => this.task(t.id))
  }

  async setGoal (g: { text: string, files: string[], testCommand: string }): Promise<void> {
    if (g.text.trim() === '') throw new InvalidArgumentError('the goal needs text')
    if (g.testCommand.trim() === '') throw new InvalidArgumentError('the goal needs a test command, whose passing tests mean it is met: agency goal set "<goal>" --test "<command>"')
    await this.init.log.append('goal', g)
  }

  async requestReview (target: string, reviewers: string[], note: string): Promise<void> {
    if (target.trim() === '') throw new InvalidArgumentError('a review request needs a target (commit, branch or task)')
    await this.init.log.append('review_request', { target, reviewers, note })
  }

  async verdict (target: string, verdict: string, evidence: string): Promise<void> {
    const kinds: Record<string, VerdictKind> = { approve: VerdictKind.VERDICT_APPROVE, reject: VerdictKind.VERDICT_REJECT, retract: VerdictKind.VERDICT_RETRACT }
    const kind = Object.hasOwn(kinds, verdict) ? kinds[verdict] : undefined
    if (kind == null) throw new InvalidArgumentError(`unknown verdict "${verdict}": use approve, reject or retract`)
    if (target.trim() === '') throw new InvalidArgumentError('a verdict needs a target')
    await this.init.log.append('verdict', { target, verdict: kind, evidence })
  }

  task (id: string): TaskView {
    return this.board.task(id, this.now()) as TaskView
  }

  /** Claims this daemon holds per the board: the leases its heartbeat carries. */
  held (): HolderInfo[] {
    return this.board.heldBy(this.init.me)
  }
}
