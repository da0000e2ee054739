// The board: goal, tasks, claims, reviews and expertise, folded from decoded
// log entries. Every view is a function of the SET of applied entries (kept
// sorted in (lamport, author) order, or reduced with maxima and membership),
// so two boards that applied the same entries in any order, any number of
// times, answer every query the same. Liveness is this node's own input
// (heartbeats on its monotonic clock) and is passed in, with the time, by the
// caller; nothing here reads a clock.

import {
  ApprovalRequest,
  Claim,
  Done,
  Goal,
  Integration,
  IntegrationRequest,
  OperatorEnvelope,
  Release,
  ReviewRequest,
  TaskSpec,
  TestRun,
  Verdict,
  type OperatorAction
} from '../../gen/agency/v1/log.js'
import { FailedPreconditionError, InvalidArgumentError, NotFoundError } from '../errors.js'
import { ClaimLedger, type ClaimRecord, type HandoffInfo } from './claim-ledger.js'
import { rankExperts, type Contribution, type ExpertView } from './expertise.js'
import { isValidGlob } from './glob-pattern.js'
import { GoalHistory, type GoalView } from './goal-history.js'
import { LandedWork, type Landing } from './landed-work.js'
import { onItsWay } from './carry-on.js'
import { compareText, insertOrdered, type Ordered } from './order.js'
import { FaultyAuthors } from './faulty-authors.js'
import { ReviewBook, type ReviewView } from './review-book.js'
import { PLAN_TASK_ID, planDefinition } from './plan-task.js'
import { validateScope } from './scope-limits.js'
import { TaskCatalog, type TaskDefinition } from './task-catalog.js'
import { checkNewTasks, type NewTask } from './task-graph.js'
import { validateTaskId } from './task-id.js'
import { OperatorBook } from '../operator/operator-book.js'
import { ApprovalBook, type ApprovalView } from '../operator/approval-book.js'
import { OperatorAuthority, type ActionVerdict, type OperatorSource } from '../operator/operator-authority.js'
import {
  budgetView,
  membershipView,
  operatorAudit,
  operatorMessages,
  pauseView,
  taskActions,
  withOperatorActions,
  type MembershipView,
  type OperatorActionView,
  type OperatorBudgetView,
  type OperatorMessageView,
  type PauseView
} from '../operator/operator-views.js'
import { EVERYONE_LIVE, type AnyBoardEntry, type BoardEntryHeader, type Liveness, type TaskState } from './types.js'

export interface BoardInit {
  /** who is alive on this node; default: everyone */
  liveness?: Liveness
  /** the operator keys this daemon was started with (core/operator parseOperatorKeys); none: those the first goal carries, if any */
  operators?: readonly string[]
}

/** Who steers the swarm (core/operator/operator-authority.ts). */
export interface OperatorsView {
  keys: string[]
  source: OperatorSource
}

export interface TaskView extends TaskDefinition {
  state: TaskState
  /** current holder by the holder rule (kept on done tasks too) */
  holder?: string
  /** the holder's epoch, else the highest epoch claimed (0: never claimed) */
  epoch: number
  /** the epoch a new claim must use */
  nextEpoch: number
  holderLive: boolean
  /** the holder's claim scope */
  claimScope: string[]
  doneBy?: string
  commit?: string
  /** the latest hand-off notes and branch */
  handoff?: HandoffInfo
}

export interface HolderInfo {
  task: string
  holder: string
  epoch: number
  /** the holder's claim scope, or the task's scope hints when the claim named none */
  scope: string[]
}

export interface AgentProgress {
  agent: string
  live: boolean
  /** tasks it holds and are not done, sorted by task id */
  held: HolderInfo[]
}

/** The previous holder a new claim takes over from. */
export interface Takeover {
  previousHolder: string
  previousEpoch: number
  /** true when the previous holder's lease expired; false when it released */
  expired: boolean
  /** hand-off notes and branch (may come from an earlier holder: see `handoffFrom`) */
  note: string
  branch: string
  handoffFrom?: string
}

/** What a claim must say, from checkClaimable. */
export interface ClaimPlan {
  task: string
  epoch: number
  /** `me` already holds the task at `epoch`: answer HELD without a new entry */
  alreadyHeld: boolean
  /** normalised claim scope: the requested globs, or the task's scope hints */
  scope: string[]
  takeover?: Takeover
}

export interface HeldEpoch {
  task: string
  epoch: number
}

interface IntegrationRecord extends Ordered {
  time: number
  integration: Integration
}
interface TestRunRecord extends Ordered {
  time: number
  run: TestRun
}
export interface TestRunView extends TestRun {
  author: string
  time: number
  entryId: string
}
export interface IntegrationView extends Integration {
  author: string
  time: number
  entryId: string
}

export class Board {
  /** who is alive on this node, as given */
  private readonly presence: Liveness
  /** the same, less the members the operators removed: their leases end at once (their tasks are taken over, as a dead agent's) */
  private readonly liveness: Liveness = { isLive: (peer, now) => !this.faults.isRemoved(peer) && this.presence.isLive(peer, now) }
  // Not readonly: a fork found in an author's feed folds the board again (markFaulty).
  private applied = new Set<string>()
  private goals = new GoalHistory()
  private catalog = new TaskCatalog()
  private ledger = new ClaimLedger(this.landedBy.bind(this))
  /** who landed each task's work at each epoch: an assistant's done counts by it (claim-ledger, landed-work) */
  private landed = new LandedWork()
  private reviewBook = new ReviewBook()
  private integrations: IntegrationRecord[] = []
  private runs: TestRunRecord[] = []
  private readonly faults = new FaultyAuthors()
  private operatorBook = new OperatorBook()
  private approvalBook = new ApprovalBook()
  private readonly configuredOperators: readonly string[]
  /** grows when a goal or operator entry is folded: the key of `judged` */
  private operatorChanges = 0
  private judged?: { at: number; authority: OperatorAuthority; tasks: Map<string, OperatorAction[]> }
  private changes = 0
  /** folding everything again after the operators' removals changed: no second refold from inside it */
  private refolding = false
  /** after takeFoldState: the entries the checkpoint covers, from the log (the fold's state leaves them out) */
  private earlier?: () => Iterable<AnyBoardEntry>

  constructor(init: BoardInit = {}) {
    this.presence = init.liveness ?? EVERYONE_LIVE
    this.configuredOperators = [...(init.operators ?? [])]
  }

  /**
   * Folds one entry in. Returns true when the entry was new and changed the
   * board; false for a duplicate id, an unknown kind or a malformed body
   * (which is ignored the same way on every peer).
   */
  apply(entry: AnyBoardEntry): boolean {
    if (!validHeader(entry) || this.applied.has(entry.id) || !this.faults.counts(entry) || this.faults.holdsBack(entry)) return false
    const h: BoardEntryHeader = { id: entry.id, author: entry.author, seq: entry.seq, lamport: entry.lamport, time: entry.time }
    // fromPartial copies the body and fills missing fields with proto3 defaults,
    // so a hand-built or partial body cannot leave holes in the views.
    const body = entry.body as object
    let folded: boolean
    switch (entry.kind) {
      case 'goal':
        this.goals.add(h, Goal.fromPartial(body))
        this.operatorChanges++
        folded = true
        break
      case 'operator':
        this.operatorBook.add(h, OperatorEnvelope.fromPartial(body))
        this.operatorChanges++
        folded = true
        break
      // the budget itself is folded by core/spend; here only who wrote one of their own, for the operators' judgement
      case 'budget':
        this.operatorBook.addPlain(h, entry.kind)
        this.operatorChanges++
        folded = true
        break
      case 'approval_request':
        folded = this.approvalBook.add(h, ApprovalRequest.fromPartial(body))
        break
      case 'task':
        folded = this.catalog.add(h, TaskSpec.fromPartial(body))
        break
      case 'claim':
        folded = this.ledger.addClaim(h, Claim.fromPartial(body))
        break
      case 'release':
        folded = this.ledger.addRelease(h, Release.fromPartial(body))
        break
      case 'done':
        folded = this.ledger.addDone(h, Done.fromPartial(body))
        break
      case 'review_request':
        folded = this.reviewBook.addRequest(h, ReviewRequest.fromPartial(body))
        break
      case 'verdict':
        folded = this.reviewBook.addVerdict(h, Verdict.fromPartial(body))
        break
      case 'integration':
        folded = this.addIntegration(h, Integration.fromPartial(body))
        break
      case 'integration_request':
        this.touch(this.landed.addRequest(h, IntegrationRequest.fromPartial(body)))
        folded = true
        break
      case 'test_run':
        insertOrdered(this.runs, {
          id: h.id,
          author: h.author,
          seq: h.seq,
          lamport: h.lamport,
          time: h.time,
          run: TestRun.fromPartial(body)
        })
        folded = true
        break
      default:
        folded = false
    }
    if (folded) {
      this.applied.add(entry.id)
      this.changes++
      this.faults.remember(entry)
    }
    if (
      folded &&
      (entry.kind === 'operator' || entry.kind === 'goal') &&
      (this.operatorBook.carriesRemovals() || this.faults.hasRemovals())
    )
      this.applyRemovals()
    return folded
  }

  /**
   * The operators' removals as the fold now judges them: a removed member's
   * entries after the seq its removal names count for nothing (faulty-authors.ts),
   * so when the removals change everything is folded again under them.
   */
  private applyRemovals(): void {
    if (this.refolding) return
    const next = new Map(membershipView(this.authority()).removed.map(r => [r.peer, r.afterSeq + 1]))
    if (!this.faults.removalsDiffer(next)) return
    if (this.earlier !== undefined) {
      const earlier = this.earlier
      this.earlier = undefined
      this.faults.rememberEarlier([...earlier()])
    }
    this.refold(this.faults.setRemovals(next) ?? [])
  }

  /** Folds `again` from scratch, then the removals it implies (which may fold once more). */
  private refold(again: readonly AnyBoardEntry[]): void {
    this.refolding = true
    try {
      this.clearFold()
      for (const e of again) this.apply(e)
    } finally {
      this.refolding = false
    }
    this.changes++
    this.applyRemovals()
  }

  private addIntegration(h: BoardEntryHeader, i: Integration): boolean {
    // a literal, not a spread of order(h): V8 gave each spread record a hidden class of its own
    insertOrdered(this.integrations, { id: h.id, author: h.author, seq: h.seq, lamport: h.lamport, time: h.time, integration: i })
    this.touch(this.landed.addIntegration(h, i))
    return true
  }

  /** What counts as landed for `task` changed: its claims are derived again. */
  private touch(task: string | undefined): void {
    if (task !== undefined) this.ledger.touch(task)
  }

  /**
   * Whether `author` landed `task`'s work at `epoch`: a merged integration of
   * its own, or one answering its integration request (landed-work.ts).
   */
  landedBy(task: string, epoch: number, author: string): boolean {
    return this.landed.has(task, epoch, author)
  }

  /** Whether an integration request of `author` for `task` at `epoch` waits for an integration to answer it (carry-on.ts). */
  requestPending(task: string, epoch: number, author: string): boolean {
    return this.landed.pending(task, epoch, author)
  }

  /** Whether an integration answering a request of `author` landed `task`'s work at `epoch` (carry-on.ts). */
  requestLanded(task: string, epoch: number, author: string): boolean {
    return this.landed.hasByRequest(task, epoch, author)
  }

  /** Every landing of `author`'s work (landed-work.ts), with the commit and paths of the integration that landed it. */
  landingsBy(author: string): Landing[] {
    return this.landed.by(author)
  }

  /**
   * `author` forked its feed: from `fromSeq` (its fork point, or the lowest
   * fork seq known) on, its entries count for nothing (see faulty-authors.ts),
   * and what they changed is folded away. Returns true when the board changed.
   */
  markFaulty(author: string, fromSeq: number): boolean {
    // after a checkpoint, the entries it covers are read back to be folded again
    if (this.earlier !== undefined && this.faults.moves(author, fromSeq)) {
      const earlier = this.earlier
      this.earlier = undefined
      this.faults.rememberEarlier([...earlier()])
    }
    const again = this.faults.mark(author, fromSeq)
    if (again === undefined) return false
    this.refold(again)
    return true
  }

  /**
   * The fold's state as plain data (every part's fields; shared records stay
   * shared), for a checkpoint (board-checkpoint.ts). Liveness is not in it:
   * it is this node's input, not the log's.
   */
  foldState(): BoardFoldState {
    const { landed: _bound, ...ledger } = this.ledger as unknown as Record<string, unknown>
    return {
      applied: this.applied,
      goals: { ...this.goals },
      catalog: { ...this.catalog },
      ledger,
      landed: { ...this.landed },
      reviewBook: { ...this.reviewBook },
      integrations: this.integrations,
      runs: this.runs,
      operatorBook: { ...this.operatorBook },
      approvalBook: { ...this.approvalBook },
      // the folded entries are the log's: takeFoldState is told where to read them back
      faults: { ...this.faults, folded: [], heldBack: new Map() },
      changes: this.changes
    }
  }

  /**
   * Takes in a fold's state from foldState (read back from a checkpoint), on
   * a board that folded nothing yet; `earlier` gives the entries it covers
   * (read back from the log only when a fault found later folds the board
   * again). Throws InvalidArgumentError and changes nothing when it does not
   * have the parts' shapes (another version's, or not a board's); the caller
   * then folds the log instead.
   */
  takeFoldState(state: unknown, earlier: () => Iterable<AnyBoardEntry>): void {
    if (this.applied.size > 0 || this.changes > 0) throw new FailedPreconditionError('a fold state is taken in only by an empty board')
    const s = checkFoldState(state)
    const part = <T extends object>(proto: T, fields: Record<string, unknown>, like: T): T => {
      const keys = Object.keys(like).sort()
      const have = Object.keys(fields).sort()
      if (keys.join() !== have.join())
        throw new InvalidArgumentError(`not a board's fold state: ${(like as object).constructor.name} has fields ${have.join(', ')}`)
      // each field as a fresh part has it: a Map stays a Map, a list a list (a field a fresh part leaves unset may be anything)
      for (const k of keys) {
        const want = (like as Record<string, unknown>)[k]
        if (want === undefined || typeof want === 'function') continue
        const got = fields[k]
        if (
          typeof got !== typeof want ||
          (typeof want === 'object' && (got === null || (got as object).constructor !== (want as object).constructor))
        ) {
          throw new InvalidArgumentError(`not a board's fold state: ${(like as object).constructor.name}.${k}`)
        }
      }
      return Object.assign(Object.create(proto) as T, fields)
    }
    const goals = part(GoalHistory.prototype, s.goals, new GoalHistory())
    const catalog = part(TaskCatalog.prototype, s.catalog, new TaskCatalog())
    const fresh = new ClaimLedger(this.landedBy.bind(this))
    const ledger = part(ClaimLedger.prototype, { ...s.ledger, landed: (fresh as unknown as { landed: unknown }).landed }, fresh)
    const landed = part(LandedWork.prototype, s.landed, new LandedWork())
    const reviewBook = part(ReviewBook.prototype, s.reviewBook, new ReviewBook())
    const faults = part(FaultyAuthors.prototype, s.faults, new FaultyAuthors())
    const operatorBook = part(OperatorBook.prototype, s.operatorBook, new OperatorBook())
    const approvalBook = part(ApprovalBook.prototype, s.approvalBook, new ApprovalBook())
    this.applied = s.applied
    this.goals = goals
    this.catalog = catalog
    this.ledger = ledger
    this.landed = landed
    this.reviewBook = reviewBook
    this.integrations = s.integrations as IntegrationRecord[]
    this.runs = s.runs as TestRunRecord[]
    this.operatorBook = operatorBook
    this.approvalBook = approvalBook
    this.judged = undefined
    ;(this as unknown as { faults: FaultyAuthors }).faults = faults
    this.changes = s.changes
    this.earlier = earlier
    // the views once, over some tasks: a state that has the shapes but not the contents of a board's is refused here, not by a later query
    try {
      const ids = this.taskIds()
      const some = ids.length <= 64 ? ids : [...ids.slice(0, 32), ...ids.slice(-32)]
      for (const id of some) {
        this.task(id, 0)
        this.holder(id)
        this.takeover(id, 0)
      }
      const views = [
        this.goalHistory(),
        this.reviews(),
        this.testRuns(),
        this.integrationResults(),
        this.faultyAuthors(),
        this.doneDurations()
      ]
      if (views.some(v => !Array.isArray(v))) throw new Error('a view is not a list')
    } catch (err) {
      this.earlier = undefined
      this.clearFold()
      ;(this as unknown as { faults: FaultyAuthors }).faults = new FaultyAuthors()
      this.changes = 0
      throw new InvalidArgumentError(`not a board's fold state: ${(err as Error).message}`)
    }
  }

  /** Forgets every folded entry (not the faults). */
  private clearFold(): void {
    this.applied = new Set()
    this.goals = new GoalHistory()
    this.catalog = new TaskCatalog()
    this.ledger = new ClaimLedger(this.landedBy.bind(this))
    this.landed = new LandedWork()
    this.reviewBook = new ReviewBook()
    this.integrations = []
    this.runs = []
    this.operatorBook = new OperatorBook()
    this.approvalBook = new ApprovalBook()
    this.judged = undefined
  }

  /** Authors found faulty, with the first seq of theirs that does not count. */
  faultyAuthors(): Array<{ author: string; fromSeq: number }> {
    return this.faults.all()
  }

  /** Whether an entry id has been folded in. */
  has(id: string): boolean {
    return this.applied.has(id)
  }

  /** Grows whenever the board changes: a key for caches of views. */
  get version(): number {
    return this.changes
  }

  /** Number of entries folded in. */
  get size(): number {
    return this.applied.size
  }

  // ---- goal ----

  goal(): GoalView | undefined {
    return this.goalHistory().at(-1)
  }

  /**
   * Every goal change, oldest first: the operators' in their order while
   * operators govern the swarm, else the members' in (lamport, author) order.
   */
  goalHistory(): GoalView[] {
    const a = this.authority()
    return a.governs ? a.goalHistory() : this.goals.history()
  }

  // ---- operators (core/operator) ----

  /** The operator's judgement of the folded entries, made again only after a goal or operator entry. */
  private judge(): NonNullable<Board['judged']> {
    if (this.judged?.at !== this.operatorChanges) {
      const plainGoals = this.goals.history().map(g => ({ author: g.setBy, lamport: g.lamport, entryId: g.entryId }))
      const authority = new OperatorAuthority({
        configured: this.configuredOperators,
        plainGoals,
        plainOthers: this.operatorBook.plainEntries(),
        carried: this.operatorBook.all()
      })
      this.judged = { at: this.operatorChanges, authority, tasks: taskActions(authority) }
    }
    return this.judged
  }

  private authority(): OperatorAuthority {
    return this.judge().authority
  }

  /** Who steers the swarm: no keys means no operator (anyone may set the goal). */
  operators(): OperatorsView {
    const a = this.authority()
    return { keys: [...a.keys], source: a.source }
  }

  /** Whether an operator paused the swarm: no new harness runs or turns. */
  paused(): PauseView {
    return pauseView(this.authority())
  }

  /** While operators govern, the budget is theirs alone: whether they govern, and their latest budget (core/spend folds it in). */
  operatorBudget(): { governs: boolean; latest?: OperatorBudgetView } {
    const a = this.authority()
    const latest = budgetView(a)
    return latest === undefined ? { governs: a.governs } : { governs: a.governs, latest }
  }

  /** Who may be a member, by the operators' actions: their allow-list and the members they removed. */
  membership(): MembershipView {
    return membershipView(this.authority())
  }

  /** Whether the operators removed `peer` (as this board has folded so far). */
  isRemoved(peer: string): boolean {
    return this.faults.isRemoved(peer)
  }

  /** The operators' messages to `agent` and to everyone (all of them without an agent), in the operators' order. */
  operatorMessages(agent?: string): OperatorMessageView[] {
    return operatorMessages(this.authority(), agent)
  }

  /** Every carried operator action with its verdict (the audit). */
  operatorActions(): OperatorActionView[] {
    return operatorAudit(this.authority(), this.operatorBook.all())
  }

  /** What became of the operator action an entry carries. */
  operatorVerdict(entryId: string): ActionVerdict | undefined {
    return this.authority().verdict(entryId)
  }

  /** Agents' permission requests and what became of them (pending ones wait for an operator), by the asker's time. */
  approvalRequests(): ApprovalView[] {
    return this.approvalBook.all(this.authority())
  }

  /**
   * Members whose entries tried operator actions they could not make (forged, malformed, not an operator's, or a goal of their own while
   * operators govern).
   */
  operatorRefusals(): Array<{ author: string; count: number }> {
    return this.authority().refusals()
  }

  // ---- tasks ----

  task(id: string, now: number): TaskView | undefined {
    const def = this.definition(id)
    if (def === undefined) return undefined
    const c = this.ledger.state(id)
    const holderLive = c.holder !== undefined && this.liveness.isLive(c.holder.author, now)
    const state: TaskState = c.done !== undefined ? 'done' : c.holder === undefined ? 'open' : holderLive ? 'claimed' : 'expired'
    const view: TaskView = {
      ...def,
      deps: [...def.deps],
      scope: [...def.scope],
      state,
      epoch: c.holder?.epoch ?? c.highestEpoch,
      nextEpoch: c.nextEpoch,
      holderLive,
      claimScope: c.holder === undefined ? [] : [...c.holder.scope]
    }
    if (c.holder !== undefined) view.holder = c.holder.author
    if (c.done !== undefined) {
      view.doneBy = c.done.author
      view.commit = c.done.commit
    }
    if (c.handoff !== undefined) view.handoff = { ...c.handoff }
    return view
  }

  /** Known tasks sorted by id, optionally only those in `state`. */
  tasks(now: number, state?: TaskState): TaskView[] {
    const out: TaskView[] = []
    for (const id of this.taskIds()) {
      const t = this.task(id, now) as TaskView
      if (state === undefined || t.state === state) out.push(t)
    }
    return out
  }

  /** Open or expired tasks whose dependencies are all done; priority desc, then id. */
  ready(now: number): TaskView[] {
    return this.tasks(now)
      .filter(
        t =>
          (t.state === 'open' || t.state === 'expired') &&
          t.cancelled === undefined &&
          t.deps.every(d => this.ledger.state(d).done !== undefined)
      )
      .sort((a, b) => b.priority - a.priority || compareText(a.id, b.id))
  }

  /** 1 + the highest epoch seen for the task in any claim, release or done. */
  nextEpoch(task: string): number {
    return this.ledger.state(task).nextEpoch
  }

  /** Holder of a known, not-done task by the holder rule (liveness aside). */
  holder(task: string): HolderInfo | undefined {
    const def = this.definition(task)
    const c = this.ledger.state(task)
    if (def === undefined || c.holder === undefined || c.done !== undefined) return undefined
    return holderInfo(c.holder, def)
  }

  /** Holder of every known, not-done, held task, by task id. */
  holders(): Map<string, HolderInfo> {
    const out = new Map<string, HolderInfo>()
    for (const id of this.taskIds()) {
      const h = this.holder(id)
      if (h !== undefined) out.set(id, h)
    }
    return out
  }

  /** The smallest unreleased claim's author at `epoch`. */
  winnerAt(task: string, epoch: number): string | undefined {
    return this.ledger.winnerAt(task, epoch)?.author
  }

  /** Whether `author` has a claim on `task` at `epoch` on this board, and whether it is released. */
  claimStatus(task: string, author: string, epoch: number): 'active' | 'released' | 'none' {
    if (!this.ledger.hasClaim(task, author, epoch)) return 'none'
    return this.ledger.isReleased(task, author, epoch) ? 'released' : 'active'
  }

  /** The task's done record when it is done: who, at which epoch, which commit. */
  doneRecord(task: string): { by: string; epoch: number; commit: string } | undefined {
    const d = this.ledger.state(task).done
    return d === undefined ? undefined : { by: d.author, epoch: d.epoch, commit: d.commit }
  }

  /**
   * The author's wall-clock time on the claim that holds the task now
   * (undefined when nobody holds it or it is done): how long it has been held,
   * for choosing a task to assist (assist-choice.ts); never for a claim.
   */
  claimTime(task: string): number | undefined {
    const c = this.ledger.state(task)
    return c.done !== undefined ? undefined : c.holder?.time
  }

  /**
   * How long each done task took, ms: its done entry's time minus the time
   * of the claim it was done under (both the holder's own clock, unless an
   * assistant finished it). Sorted ascending; for the assist threshold.
   */
  doneDurations(): number[] {
    const out: number[] = []
    for (const task of this.ledger.taskIds()) {
      const d = this.ledger.state(task).done
      const claim = d === undefined ? undefined : this.ledger.winnerAt(task, d.epoch)
      if (d !== undefined && claim !== undefined) out.push(Math.max(0, d.time - claim.time))
    }
    return out.sort((a, b) => a - b)
  }

  /**
   * Claim-to-done times of the tasks each agent finished as their holder, ms
   * (its done's time minus its own claim's): how fast an agent is, as the
   * board sees it, for hand-off by speed (handoff-choice.ts). Tasks finished
   * by an assistant are left out: its claim time is the holder's.
   */
  doneTimesByAgent(): Map<string, number[]> {
    const out = new Map<string, number[]>()
    for (const task of this.ledger.taskIds()) {
      const d = this.ledger.state(task).done
      const claim = d === undefined ? undefined : this.ledger.winnerAt(task, d.epoch)
      if (d === undefined || claim === undefined || claim.author !== d.author) continue
      const list = out.get(d.author) ?? []
      list.push(Math.max(0, d.time - claim.time))
      out.set(d.author, list)
    }
    return out
  }

  /**
   * The agent a hand-off by speed reserves `task` for (docs/handoff.md): the
   * one its holder's release named, while nobody has claimed the task since,
   * the agent is live here and holds no task but those on their way. Undefined otherwise: then the
   * task is claimable by anyone, as any released task.
   */
  handedTo(task: string, now: number): string | undefined {
    const c = this.ledger.state(task)
    const h = c.handoff
    if (h === undefined || h.to === '' || c.done !== undefined || c.holder !== undefined || h.epoch !== c.highestEpoch) return undefined
    // a task on its way to the shared branch leaves its holder free (carry-on.ts)
    if (!this.liveness.isLive(h.to, now) || this.heldBy(h.to).some(x => !onItsWay(this, h.to, x.task))) return undefined
    return h.to
  }

  /** The latest hand-off notes known for the task. */
  handoff(task: string): HandoffInfo | undefined {
    const h = this.ledger.state(task).handoff
    return h === undefined ? undefined : { ...h }
  }

  /**
   * Who a new claim would take over from: the holder whose lease expired, or
   * the last holder that released with notes. Undefined when there is no one.
   */
  takeover(task: string, now: number): Takeover | undefined {
    const c = this.ledger.state(task)
    if (c.done !== undefined) return undefined
    const h = c.handoff
    if (c.holder !== undefined) {
      if (this.liveness.isLive(c.holder.author, now)) return undefined
      const t: Takeover = {
        previousHolder: c.holder.author,
        previousEpoch: c.holder.epoch,
        expired: true,
        note: h?.note ?? '',
        branch: h?.branch ?? ''
      }
      if (h !== undefined) t.handoffFrom = h.from
      return t
    }
    if (h === undefined) return undefined
    return { previousHolder: h.from, previousEpoch: h.epoch, expired: false, note: h.note, branch: h.branch, handoffFrom: h.from }
  }

  /**
   * A task's definition: from the catalog, or the `plan` task derived from
   * the goal while it is visible (a goal and no task yet, or it is held or done).
   */
  private definition(id: string): TaskDefinition | undefined {
    if (id !== PLAN_TASK_ID) {
      const actions = this.judge().tasks.get(id)
      return actions === undefined ? this.catalog.get(id) : withOperatorActions(this.catalog.get(id), actions)
    }
    const goal = this.goal()
    if (goal === undefined) return undefined
    // Held or done, it stays (its holder is planning, or planned); released, it goes once tasks exist.
    const plan = this.ledger.state(PLAN_TASK_ID)
    const inPlay = plan.holder !== undefined || plan.done !== undefined
    const operatorTasks = [...this.judge().tasks.values()].some(list => list.some(x => x.kind === 'task'))
    return inPlay || (this.catalog.ids().length === 0 && !operatorTasks) ? planDefinition(goal) : undefined
  }

  /** Known task ids, sorted; `plan` among them while it is visible. */
  private taskIds(): readonly string[] {
    const catalog = this.catalog.ids()
    const byOperator = [...this.judge().tasks.keys()].filter(id => !this.catalog.has(id) && this.definition(id) !== undefined)
    const ids = byOperator.length === 0 ? catalog : [...catalog, ...byOperator].sort(compareText)
    if (this.definition(PLAN_TASK_ID) === undefined) return ids
    return [...ids, PLAN_TASK_ID].sort(compareText)
  }

  /**
   * The tasks to append for a plan, dependencies first; throws
   * InvalidArgumentError (and changes nothing) for an unknown dependency, a
   * cycle or a task that exists with another definition.
   */
  checkNewTasks(tasks: readonly NewTask[]): NewTask[] {
    return checkNewTasks(tasks, id => this.catalog.get(id))
  }

  /** The merge commit that landed `task` at `epoch` on the shared branch, if one did. */
  integratedAt(task: string, epoch: number): string | undefined {
    for (let i = this.integrations.length - 1; i >= 0; i--) {
      const r = this.integrations[i].integration
      if (r.task === task && r.epoch === epoch && r.result === 'merged') return r.commit
    }
    return undefined
  }

  /**
   * The stop rule: every task done, and the latest test run on the shared
   * branch ran tests and failed none (skipped tests do not block). A suite
   * that is green before the work is done does not count: the tasks are not.
   */
  goalMet(now: number): boolean {
    if (this.goal() === undefined) return false
    const tasks = this.tasks(now).filter(t => t.cancelled === undefined)
    if (tasks.length === 0 || tasks.some(t => t.state !== 'done')) return false
    const last = this.runs.at(-1)?.run
    return last !== undefined && last.passed > 0 && last.failed === 0
  }

  // ---- progress ----

  /** Tasks `agent` holds (not done), sorted by id. */
  heldBy(agent: string): HolderInfo[] {
    return [...this.holders().values()].filter(h => h.holder === agent)
  }

  /** Per agent holding anything: its held tasks and whether it is live here. */
  progress(now: number): AgentProgress[] {
    const byAgent = new Map<string, HolderInfo[]>()
    for (const h of this.holders().values()) {
      const list = byAgent.get(h.holder) ?? []
      list.push(h)
      byAgent.set(h.holder, list)
    }
    return [...byAgent.keys()].sort(compareText).map(agent => ({
      agent,
      live: this.liveness.isLive(agent, now),
      held: byAgent.get(agent) as HolderInfo[]
    }))
  }

  /** Claims whose holder is live and whose task is not done, sorted by task. */
  liveClaims(now: number): HolderInfo[] {
    return [...this.holders().values()].filter(h => this.liveness.isLive(h.holder, now))
  }

  // ---- reviews ----

  review(target: string): ReviewView | undefined {
    return this.reviewBook.get(target)
  }

  reviews(): ReviewView[] {
    return this.reviewBook.all()
  }

  approvals(target: string): number {
    return this.reviewBook.approvals(target)
  }

  // ---- expertise and test runs ----

  /** Peers ranked by done tasks and merged integrations touching `path`. Throws InvalidArgumentError for a malformed path. */
  experts(path: string, limit?: number): ExpertView[] {
    return rankExperts(path, this.contributions(), limit)
  }

  /** Test runs in (lamport, author) order. */
  testRuns(): TestRunView[] {
    return this.runs.map(r => ({ ...r.run, author: r.author, time: r.time, entryId: r.id }))
  }

  /** Integration results (merged, conflict, failed) in (lamport, author) order. */
  integrationResults(): IntegrationView[] {
    return this.integrations.map(r => ({ ...r.integration, author: r.author, time: r.time, entryId: r.id }))
  }

  // ---- checks before writing an entry (they throw and change nothing) ----

  /**
   * What `me` must write to claim `task`. Throws InvalidArgumentError for a
   * bad task id or glob, NotFoundError for an unknown task,
   * FailedPreconditionError when the task is done or held by a live peer.
   */
  checkClaimable(task: string, me: string, now: number, scope: readonly string[] = []): ClaimPlan {
    validateTaskId(task)
    const globs = validateScope(scope)
    const def = this.definition(task)
    if (def === undefined) throw new NotFoundError(`no task ${JSON.stringify(task)}`)
    const c = this.ledger.state(task)
    if (c.done !== undefined)
      throw new FailedPreconditionError(`task ${task} is done (by ${c.done.author}, commit ${c.done.commit || 'none'})`)
    if (def.cancelled !== undefined)
      throw new FailedPreconditionError(
        `task ${task} was cancelled by the operator${def.cancelled.reason !== '' ? `: ${def.cancelled.reason}` : ''}`
      )
    // a peer's scope hints may be malformed; a claim only carries valid globs
    const planScope = globs.length > 0 ? globs : def.scope.filter(g => isValidGlob(g))
    if (c.holder?.author === me) return { task, epoch: c.holder.epoch, alreadyHeld: true, scope: [...c.holder.scope] }
    if (c.holder !== undefined && this.liveness.isLive(c.holder.author, now)) {
      throw new FailedPreconditionError(`task ${task} is held by ${c.holder.author} at epoch ${c.holder.epoch}, whose lease is live`)
    }
    const plan: ClaimPlan = { task, epoch: c.nextEpoch, alreadyHeld: false, scope: planScope }
    const takeover = this.takeover(task, now)
    if (takeover !== undefined) plan.takeover = takeover
    return plan
  }

  /** The epoch `me` releases. NotFoundError for an unknown task; FailedPreconditionError unless `me` holds it. */
  checkReleasable(task: string, me: string): HeldEpoch {
    return this.checkHeld(task, me, 'release')
  }

  /** The epoch `me` marks done. NotFoundError for an unknown task; FailedPreconditionError unless `me` holds it. */
  checkDoable(task: string, me: string): HeldEpoch {
    return this.checkHeld(task, me, 'mark done')
  }

  private checkHeld(task: string, me: string, action: string): HeldEpoch {
    validateTaskId(task)
    if (this.definition(task) === undefined) throw new NotFoundError(`no task ${JSON.stringify(task)}`)
    const c = this.ledger.state(task)
    if (c.done !== undefined) throw new FailedPreconditionError(`cannot ${action} task ${task}: it is done`)
    if (c.holder?.author !== me) {
      const who = c.holder === undefined ? 'nobody holds it' : `it is held by ${c.holder.author} at epoch ${c.holder.epoch}`
      throw new FailedPreconditionError(`cannot ${action} task ${task}: you do not hold it (${who})`)
    }
    return { task, epoch: c.holder.epoch }
  }

  private *contributions(): Generator<Contribution> {
    for (const task of this.ledger.taskIds()) {
      const d = this.ledger.state(task).done
      if (d === undefined) continue
      const paths =
        d.paths.length > 0
          ? d.paths
          : (this.ledger.winnerAt(task, d.epoch)?.scope ?? []).length > 0
            ? (this.ledger.winnerAt(task, d.epoch) as ClaimRecord).scope
            : (this.catalog.get(task)?.scope ?? [])
      yield { peer: d.author, kind: 'task', paths }
    }
    for (const r of this.integrations) {
      const i = r.integration
      if (i.result !== '' && i.result !== 'merged') continue
      const paths = i.paths.length > 0 ? i.paths : (this.catalog.get(i.task)?.scope ?? [])
      yield { peer: r.author, kind: 'integration', paths }
    }
  }
}

/** What Board.foldState gives: each part's fields, as plain data. */
export interface BoardFoldState {
  applied: Set<string>
  goals: Record<string, unknown>
  catalog: Record<string, unknown>
  ledger: Record<string, unknown>
  landed: Record<string, unknown>
  reviewBook: Record<string, unknown>
  integrations: unknown[]
  runs: unknown[]
  operatorBook: Record<string, unknown>
  approvalBook: Record<string, unknown>
  faults: Record<string, unknown>
  changes: number
}

function checkFoldState(state: unknown): BoardFoldState {
  const bad = (what: string): never => {
    throw new InvalidArgumentError(`not a board's fold state: ${what}`)
  }
  if (typeof state !== 'object' || state === null) bad('not an object')
  const s = state as Record<string, unknown>
  if (!(s.applied instanceof Set) || [...s.applied].some(id => typeof id !== 'string')) bad('applied')
  for (const k of ['goals', 'catalog', 'ledger', 'landed', 'reviewBook', 'operatorBook', 'approvalBook', 'faults']) {
    if (typeof s[k] !== 'object' || s[k] === null || Array.isArray(s[k])) bad(k)
  }
  if (!Array.isArray(s.integrations) || !Array.isArray(s.runs)) bad('lists')
  // the folded entries are left out (read back from the log: takeFoldState's `earlier`)
  if (
    !Array.isArray((s.faults as Record<string, unknown>).folded) ||
    ((s.faults as Record<string, unknown>).folded as unknown[]).length > 0
  )
    bad('folded entries')
  if (!Number.isSafeInteger(s.changes)) bad('changes')
  return s as unknown as BoardFoldState
}

export function createBoard(init?: BoardInit): Board {
  return new Board(init)
}

/** The Claim body for a plan from checkClaimable. */
export function claimFromPlan(plan: ClaimPlan): Claim {
  return Claim.fromPartial({
    task: plan.task,
    scope: plan.scope,
    epoch: plan.epoch,
    takeoverOf: plan.takeover?.previousHolder ?? '',
    branch: plan.takeover?.branch ?? '',
    handoff: plan.takeover?.note ?? ''
  })
}

function holderInfo(c: ClaimRecord, def: TaskDefinition): HolderInfo {
  return { task: c.task, holder: c.author, epoch: c.epoch, scope: c.scope.length > 0 ? [...c.scope] : [...def.scope] }
}

function validHeader(e: AnyBoardEntry): boolean {
  return (
    typeof e === 'object' &&
    e !== null &&
    typeof e.id === 'string' &&
    e.id !== '' &&
    typeof e.author === 'string' &&
    e.author !== '' &&
    typeof e.kind === 'string' &&
    typeof e.body === 'object' &&
    e.body !== null &&
    Number.isFinite(e.lamport) &&
    Number.isFinite(e.seq) &&
    Number.isFinite(e.time)
  )
}
