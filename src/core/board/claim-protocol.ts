// The claim protocol of one daemon, sans-IO. Entries, heartbeats, round-trip
// samples and the time go in; entries to append, answers, notices and the
// time of the next wake-up come out. agentd runs it on real timers
// (daemon/board-service), the simulator in virtual time (sim/engine/claim-runner):
// the same object in both, so what the simulator shows is what agentd does.
//
// - claim: check, write a claim entry, wait the settle window from the moment
//   the entry is in the log, then answer HELD or LOST (naming the winner). A
//   losing claim is released at once: left standing, it would become the
//   holder by the holder rule when the winner released.
// - watch: a claim this daemon holds that the board no longer gives it (a
//   smaller claim at its epoch after a partition heals, a takeover at a
//   higher epoch, someone else's done) is a notice for the agent; an outbid
//   claim is released. A claim in its settle window is left to its answer. A
//   task this daemon finished stays watched: its done counts only while its
//   claim is the holder rule's at that epoch, and a healed partition can
//   bring a smaller one.
// - leases: the board's liveness is the LeaseTable, fed with heartbeats on
//   this node's monotonic clock, with its start-up grace.
// - the settle window: k times the p99 of observed round trips, or fixed.
// - a stall of this daemon's own (its process stopped, its loop stalled past
//   a heartbeat): what it saw before is stale. No lease ran out on a silence
//   it could not hear, no window it slept through counts, and after a stall
//   of a lease or longer no claim is answered before it has caught up with a
//   peer (an exchange of what either lacks: `rejoined`) or no peer it knew
//   is live any more.

import { Claim, Release } from '../../gen/agency/v1/log.js'
import { Board, claimFromPlan, type Takeover } from './board.js'
import { LeaseTable } from './lease-table.js'
import { RecentPeerClaims, handedAway, nextChoices, readyChoice, type ReadyChoice } from './claim-choice.js'
import type { TaskView } from './board.js'
import { SettleWindow, claimOutcome, type ClaimOutcome, type SettleWindowInit } from './settle.js'
import type { HeartbeatPolicy } from '../presence/heartbeat-interval.js'
import { agentsAtWork, onItsWayHere } from './carry-on.js'
import { validateGlob } from './glob-pattern.js'
import { validateTaskId } from './task-id.js'
import type { AnyBoardEntry, Liveness } from './types.js'

export type LostReason = Extract<ClaimOutcome, { outcome: 'LOST' }>['reason']

/** A claim this daemon holds or is settling: what it persists across restarts. */
export interface MyClaim {
  task: string
  epoch: number
  /** answered (or found) HELD after its settle window */
  settled: boolean
  /** finished: watched until its done stops counting */
  done?: boolean
}

/** The answer to a claim. */
export interface ClaimVerdict {
  outcome: 'HELD' | 'LOST'
  task: string
  epoch: number
  /** the holder: this daemon on HELD; on LOST whoever holds (or finished) the task, '' when nobody does */
  winner: string
  reason?: LostReason
  /** how long the claim waited */
  settleMs: number
  /** the previous holder's hand-off notes and branch, on a takeover */
  handoff: string
  branch: string
}

/** What the daemon tells its agent about a claim it held. */
export interface ClaimNotice {
  type: 'claim_lost' | 'claim_superseded'
  task: string
  epoch: number
  reason: LostReason
  winner?: string
}

export type AppendRequest = { kind: 'claim'; body: Claim } | { kind: 'release'; body: Release }

/** What one input to the protocol asks its runner to do. */
export interface ProtocolOutput {
  /** entries to append, in order */
  append: AppendRequest[]
  /** answers to claims: to everyone waiting for that task and epoch */
  answers: ClaimVerdict[]
  /** for the agent */
  notices: ClaimNotice[]
  /** the claims this daemon holds or settles changed: persist `mine()` and announce the leases */
  mineChanged: boolean
}

/** What a claim call starts: the claim (task and epoch) to wait for, and what to do now. */
export interface ClaimTicket {
  task: string
  epoch: number
  /** the claim takes over a task whose holder's lease expired */
  takeover?: Takeover
  output: ProtocolOutput
}

export interface ClaimProtocolInit {
  /** this daemon's peer id */
  me: string
  /** monotonic time this daemon started */
  startedAt: number
  /** the heartbeat policy the leases scale from */
  heartbeats?: HeartbeatPolicy
  /** the lease at the base interval, when no policy is given */
  leaseMs?: number
  /** how many other daemons this one knows of, for the start-up grace (e.g. authors in its log - 1) */
  knownPeers?: () => number
  settle?: SettleWindowInit
  /** a fixed settle window instead of one derived from latency */
  fixedSettleMs?: number
  /**
   * The board's liveness, given the leases. Default: the leases themselves;
   * the simulator wraps them to deliver modelled heartbeats on demand.
   */
  liveness?: (leases: LeaseTable) => Liveness
  /** the operator keys the board obeys (BoardInit.operators) */
  operators?: readonly string[]
}

/** Finished tasks watched at most: the oldest are let go first. */
const WATCHED_DONE = 256

/** Entries after which this daemon's claims are checked again. */
const WATCHED_KINDS: ReadonlySet<string> = new Set(['claim', 'release', 'done', 'integration', 'integration_request'])

interface MyClaimState {
  epoch: number
  settled: boolean
  done: boolean
  /** when the settle window ends; undefined until the claim entry is in the log */
  deadline?: number
  /** how long the window is */
  windowMs?: number
  /** someone waits for the answer; otherwise a loss is a notice */
  awaited: boolean
  /** a settled claim that looks lost: when the loss is told, unless the board gives the claim back first */
  lossAt?: number
  handoff: string
  branch: string
}

export class ClaimProtocol {
  readonly me: string
  readonly board: Board
  readonly leases: LeaseTable
  readonly settle: SettleWindow
  /** when peers' claims arrived here: what `ready` shows as pending, and `claim --next` skips */
  readonly recent = new RecentPeerClaims()
  private readonly fixedSettleMs: number | undefined
  private readonly mineByTask = new Map<string, MyClaimState>()
  /** task -> the highest epoch the shared remote's fence was seen at (claims of ours go above it) */
  private readonly fenceEpochs = new Map<string, number>()
  /**
   * task -> the epoch this daemon carries it on its way at, before its request is on the log (carry-on.ts onItsWayHere); never persisted
   */
  private readonly carriedHere = new Map<string, number>()
  /** since a stall of this daemon's own, until it has caught up with a peer: no claim is answered, no loss told */
  private rejoining = false

  constructor(init: ClaimProtocolInit) {
    this.me = init.me
    this.leases = new LeaseTable({
      self: init.me,
      startedAt: init.startedAt,
      policy: init.heartbeats,
      leaseMs: init.leaseMs,
      knownPeers: init.knownPeers
    })
    this.board = new Board({ liveness: init.liveness?.(this.leases) ?? this.leases, operators: init.operators })
    this.settle = new SettleWindow(init.settle)
    this.fixedSettleMs = init.fixedSettleMs
  }

  // ---- inputs ----

  /**
   * Folds an entry of the log in (local or remote, in any order). Own claim
   * entries start their settle window; claims, releases and dones are
   * checked against this daemon's claims.
   */
  apply(entry: AnyBoardEntry, now: number): ProtocolOutput {
    const out = emptyOutput()
    if (!this.board.apply(entry)) return out
    if (entry.kind === 'claim' && entry.author === this.me) this.startWindow(entry.body as Claim, now)
    else if (entry.kind === 'claim') {
      const c = entry.body as Claim
      this.recent.record(c.task, entry.author, c.epoch, now)
    } else if (entry.kind === 'release') {
      // A hand-off by speed: claim --next leaves the task to its receiver for a while (claim-choice readyChoice).
      const r = entry.body as Partial<Release>
      if (typeof r.to === 'string' && r.to !== '' && typeof r.task === 'string') this.recent.recordHandoff(r.task, r.to, now)
    }
    // An integration or its request can make a done count (an assistant's, landed-work.ts): watched too.
    if (WATCHED_KINDS.has(entry.kind)) this.watch(now, out)
    return out
  }

  /** A heartbeat from `peer`, received at `now`, announcing its next one in `intervalMs`. */
  heard(peer: string, now: number, intervalMs?: number): void {
    this.leases.heartbeat(peer, now, intervalMs)
  }

  /**
   * A round trip to a peer, timed on this node's monotonic clock, for the
   * settle window; `now` is when it was taken (a sample without one ages by
   * count only).
   */
  observeRoundTrip(ms: number, now?: number): void {
    this.settle.addSample(ms, now)
  }

  /**
   * This daemon stood still for `ms` up to `now` (its process was stopped,
   * its event loop stalled): it heard nothing meanwhile, and its peers may
   * have dropped its connections and written what it has not seen, while
   * what it wrote just before may not have reached them. So: no peer's lease
   * runs out on the silence of the stall (the leases move on by it); every
   * claim in its settle window, and every loss waiting to be told, waits a
   * whole window again; and after a stall of a lease or longer, until
   * `rejoined` (or until no peer it knew is live) no claim is answered and
   * no loss told.
   */
  stalled(ms: number, now: number): ProtocolOutput {
    const out = emptyOutput()
    if (!(ms > 0) || !Number.isFinite(ms)) return out
    this.leases.stalled(ms, now)
    // Shorter than a lease, what the peers sent waits in this daemon's connections, and no peer has
    // given up on it: a window again is enough. A lease or longer, and they may have taken its tasks
    // over and dropped its connections.
    if (ms >= this.leases.leaseMs) this.rejoining = true
    this.rewindow(now)
    return out
  }

  /**
   * After a stall, this daemon has exchanged with a peer what either lacked
   * (a sync round finished): claims are answered again, each a whole window
   * from now.
   */
  rejoined(now: number): ProtocolOutput {
    const out = emptyOutput()
    if (!this.rejoining) return out
    this.rejoining = false
    this.rewindow(now)
    this.watch(now, out)
    return out
  }

  /** Whether this daemon is catching up after a stall of its own: its claims wait. */
  isRejoining(): boolean {
    return this.rejoining
  }

  /** Every claim settling, and every loss to be told, waits a whole window from `now` at least. */
  private rewindow(now: number): void {
    const until = now + this.windowMs(now)
    for (const mine of this.mineByTask.values()) {
      if (!mine.settled && mine.deadline !== undefined && mine.deadline < until) {
        mine.windowMs = (mine.windowMs ?? 0) + until - mine.deadline
        mine.deadline = until
      }
      if (mine.settled && mine.lossAt !== undefined && mine.lossAt < until) mine.lossAt = until
    }
  }

  /**
   * Whether this daemon still waits to catch up after a stall at `now`: it
   * does while some peer it has heard from is live (their leases moved on by
   * the stall); with none left there is nobody to catch up with.
   */
  private waitsToRejoin(now: number): boolean {
    if (!this.rejoining) return false
    if (this.leases.liveUntil(now) !== undefined) return true
    this.rejoining = false
    this.rewindow(now)
    return false
  }

  /**
   * After a restart: the claims this daemon had, as persisted. Claims that
   * were still settling wait a whole window from now (nobody waits for them:
   * a loss is a notice); the others are checked against the board.
   */
  restore(saved: readonly MyClaim[], now: number): ProtocolOutput {
    const out = emptyOutput()
    for (const c of saved) {
      const state: MyClaimState = { epoch: c.epoch, settled: c.settled, done: c.done === true, awaited: false, handoff: '', branch: '' }
      this.mineByTask.set(c.task, state)
      if (!c.settled) this.openWindow(state, now)
    }
    this.watch(now, out)
    return out
  }

  /**
   * The agent claims `task`. Throws (and changes nothing) for a bad task id
   * or glob, an unknown task, a done task or one held by a live peer.
   * Otherwise the ticket names the claim to wait for: its answer comes from
   * `tick` once the settle window has passed, or is in the ticket's output.
   * `wait: false` (answer PENDING) makes a loss a notice instead.
   *
   * A retry while the claim is settling (a CLI or MCP call repeated after a
   * timeout) writes nothing and waits for the same answer, at the end of the
   * same window: nothing is HELD before its window has passed. A claim this
   * daemon holds but never saw settle (its record was lost) waits a window.
   */
  claim(task: string, scope: readonly string[], now: number, opts: { wait?: boolean } = {}): ClaimTicket {
    const wait = opts.wait ?? true
    const out = emptyOutput()
    const settling = this.mineByTask.get(task)
    if (settling !== undefined && !settling.settled) {
      validateTaskId(task)
      for (const g of scope) validateGlob(g)
      if (wait) settling.awaited = true
      return { task, epoch: settling.epoch, output: out }
    }
    const plan = this.board.checkClaimable(task, this.me, now, scope)
    if (plan.alreadyHeld) {
      const known = this.mineByTask.get(task)
      if (known?.settled === true && known.epoch === plan.epoch) {
        out.answers.push({
          outcome: 'HELD',
          task,
          epoch: plan.epoch,
          winner: this.me,
          settleMs: 0,
          handoff: known.handoff,
          branch: known.branch
        })
        return { task, epoch: plan.epoch, output: out }
      }
      const state: MyClaimState = { epoch: plan.epoch, settled: false, done: false, awaited: wait, handoff: '', branch: '' }
      this.mineByTask.set(task, state)
      this.openWindow(state, now)
      out.mineChanged = true
      return { task, epoch: plan.epoch, output: out }
    }
    // Above the remote's fence: a claim at or below it could never land its work.
    const fenced = this.fenceEpochs.get(task)
    if (fenced !== undefined && plan.epoch <= fenced) plan.epoch = fenced + 1
    this.mineByTask.set(task, {
      epoch: plan.epoch,
      settled: false,
      done: false,
      awaited: wait,
      handoff: plan.takeover?.note ?? '',
      branch: plan.takeover?.branch ?? ''
    })
    out.append.push({ kind: 'claim', body: claimFromPlan(plan) })
    out.mineChanged = true
    const ticket: ClaimTicket = { task, epoch: plan.epoch, output: out }
    if (plan.takeover !== undefined) ticket.takeover = plan.takeover
    return ticket
  }

  /**
   * An integration of `task` under our claim at `epoch` was refused: the
   * shared remote's fence says the task landed at `remote.epoch`. Usually the
   * board knows that claim already; not when its author is faulty (its claims
   * past the fork count for nothing, yet its work landed). Every later claim
   * of ours for the task is made above `remote.epoch`, or it would reuse an
   * epoch the remote has closed and never land. Returns whether the fence
   * closed the claim we hold at `epoch`, which the caller then releases.
   */
  fencedAt(task: string, epoch: number, remote: { epoch: number }): boolean {
    if (!Number.isSafeInteger(remote.epoch) || remote.epoch < 1) return false
    if (remote.epoch > (this.fenceEpochs.get(task) ?? 0)) this.fenceEpochs.set(task, remote.epoch)
    const held = this.board.holder(task)
    return held?.holder === this.me && held.epoch === epoch && remote.epoch >= epoch
  }

  /** The claim entry could not be written: forget the claim. */
  abandon(task: string, epoch: number): ProtocolOutput {
    const out = emptyOutput()
    if (this.mineByTask.get(task)?.epoch === epoch) {
      this.mineByTask.delete(task)
      out.mineChanged = true
    }
    return out
  }

  /**
   * The agent released or finished `task`. A released claim is no longer
   * watched; a finished one is, until its done stops counting.
   */
  forget(task: string): ProtocolOutput {
    const out = emptyOutput()
    this.carriedHere.delete(task)
    const mine = this.mineByTask.get(task)
    // A claim still settling is answered at the end of its window (LOST, released).
    if (mine === undefined || !mine.settled || mine.done) return out
    out.mineChanged = true
    const done = this.board.doneRecord(task)
    if (done?.by !== this.me || done.epoch !== mine.epoch) {
      this.mineByTask.delete(task)
      return out
    }
    mine.done = true
    const finished = [...this.mineByTask].filter(([, m]) => m.done)
    for (const [t] of finished.slice(0, Math.max(0, finished.length - WATCHED_DONE))) this.mineByTask.delete(t)
    return out
  }

  /** The time is `now`: answers every claim whose settle window has passed, tells every loss that has lasted one. */
  tick(now: number): ProtocolOutput {
    const out = emptyOutput()
    if (this.waitsToRejoin(now)) return out
    for (const [task, mine] of [...this.mineByTask]) {
      if (mine.settled || mine.deadline === undefined || mine.deadline > now) continue
      this.answer(task, mine, out)
    }
    this.watch(now, out)
    return out
  }

  // ---- queries ----

  /** When `tick` must run next: the end of the earliest settle window (of a claim or a loss); undefined when none runs. */
  nextWake(now?: number): number | undefined {
    let next: number | undefined
    for (const mine of this.mineByTask.values()) {
      const at = mine.settled ? mine.lossAt : mine.deadline
      if (at !== undefined && (next === undefined || at < next)) next = at
    }
    // Catching up after a stall: answered once rejoined, or once the last peer's lease has run out.
    if (next !== undefined && this.rejoining && now !== undefined) {
      const lapse = this.leases.liveUntil(now)
      if (lapse !== undefined && lapse + 1 > next) next = lapse + 1
    }
    return next
  }

  /** The claims this daemon holds or settles, to persist. */
  mine(): MyClaim[] {
    return [...this.mineByTask].map(([task, m]) =>
      m.done ? { task, epoch: m.epoch, settled: m.settled, done: true } : { task, epoch: m.epoch, settled: m.settled }
    )
  }

  /** Whether `task`'s claim at `epoch` is in its settle window. */
  isSettling(task: string, epoch?: number): boolean {
    const mine = this.mineByTask.get(task)
    return mine !== undefined && !mine.settled && (epoch === undefined || mine.epoch === epoch)
  }

  /** The ready tasks, without those a peer's claim is settling on (judged by this daemon's window), and those. */
  readyChoice(now: number): ReadyChoice {
    return readyChoice(this.board, this.me, now, this.recent, this.windowMs(now))
  }

  /** Whether `task` waits for another agent a hand-off by speed handed it to: claim --next leaves it out (readyChoice). */
  handedAway(task: string, now: number): boolean {
    const t = this.board.task(task, now)
    return t !== undefined && handedAway(this.board, t, this.me, now, this.recent)
  }

  /**
   * What `claim --next` would claim, best first, leaving out the tasks in
   * `skip`: this daemon's match among the agents that may be choosing now
   * (see `seekers`, and claim-choice's matchSeekers) first. A task this
   * daemon handed back (it released it: its agent could not finish it) comes
   * after every other, so a peer gets it first.
   */
  nextChoices(now: number, skip?: ReadonlySet<string>): TaskView[] {
    const order = nextChoices(this.readyChoice(now), this.me, skip, this.seekers(now))
    const gaveUp = (t: TaskView): boolean => t.handoff?.from === this.me
    return [...order.filter(t => !gaveUp(t)), ...order.filter(gaveUp)]
  }

  /**
   * The agents that may be choosing a task now, as this daemon sees them:
   * itself and every live peer (heard from, lease not lapsed) that holds no
   * task on this board but those on their way (carry-on.ts). A peer whose claim is settling holds its task by the
   * holder rule, so it is out, and its task is pending: the pair leaves the
   * matching without changing the other pairs.
   */
  seekers(now: number): string[] {
    const busy = agentsAtWork(this.board)
    return [this.me, ...this.leases.livePeers(now).filter(p => p !== this.me && !busy.has(p))]
  }

  /**
   * The task this daemon's claim is settling on, or the first it holds and
   * has not finished and is not on its way to the shared branch (an
   * integration request of it waits or landed, or this daemon carries it
   * while it verifies, carry-on.ts): what
   * `claim --next` answers first.
   */
  current(): { task: string; settling: boolean } | undefined {
    let held: string | undefined
    for (const [task, m] of this.mineByTask) {
      if (!m.settled) return { task, settling: true }
      if (!m.done && held === undefined && this.board.holder(task)?.holder === this.me && !this.onItsWay(task)) held = task
    }
    return held === undefined ? undefined : { task: held, settling: false }
  }

  /** Whether `task`, held by this daemon, is on its way to the shared branch: by the board, or carried here (carry-on.ts). */
  onItsWay(task: string): boolean {
    return onItsWayHere(this.board, this.me, task, this.carriedHere)
  }

  /**
   * This daemon carries `task`, held at `epoch`, on its way before its
   * integration request is on the log (it verifies the change first): the
   * task is not its current task. For this daemon only; a stop forgets it.
   */
  carryHere(task: string, epoch: number): void {
    this.carriedHere.set(task, epoch)
  }

  /** Ends carryHere: the request is on the log (the board's rule goes on), or the verify failed (the task is current again). */
  stopCarrying(task: string): void {
    this.carriedHere.delete(task)
  }

  /** The settle window a claim made at `now` would wait (from the round trips that count then). */
  windowMs(now?: number): number {
    return this.fixedSettleMs ?? this.settle.windowMs(now)
  }

  // ---- the rules ----

  private startWindow(claim: Claim, now: number): void {
    const mine = this.mineByTask.get(claim.task)
    if (mine === undefined || mine.epoch !== claim.epoch || mine.settled || mine.deadline !== undefined) return
    this.openWindow(mine, now)
  }

  private openWindow(mine: MyClaimState, now: number): void {
    mine.windowMs = this.windowMs(now)
    mine.deadline = now + mine.windowMs
  }

  /** The end of a claim's settle window: HELD, or LOST and released. */
  private answer(task: string, mine: MyClaimState, out: ProtocolOutput): void {
    const o = claimOutcome(this.board, task, this.me, mine.epoch)
    const base = { task, epoch: mine.epoch, settleMs: mine.windowMs ?? 0, handoff: mine.handoff, branch: mine.branch }
    out.mineChanged = true
    if (o.outcome === 'HELD') {
      mine.settled = true
      out.answers.push({ ...base, outcome: 'HELD', winner: this.me })
      return
    }
    this.mineByTask.delete(task)
    if (o.reason === 'outbid') this.releaseOutbid(task, mine.epoch, out)
    out.answers.push({ ...base, outcome: 'LOST', winner: o.winner ?? '', reason: o.reason })
    if (!mine.awaited && o.reason !== 'released') out.notices.push(notice(task, mine.epoch, o))
  }

  /**
   * Tells the agent when a claim it held is no longer its own. A loss settles
   * too: it is told once it has lasted a settle window, so that a view still
   * converging (a peer's claim arrived, its release not yet) tells nothing
   * that the next entry takes back. A claim in its settle window is left to
   * its answer.
   */
  private watch(now: number, out: ProtocolOutput): void {
    if (this.rejoining) return
    for (const [task, mine] of [...this.mineByTask]) {
      if (!mine.settled) continue
      const lost = this.lossOf(task, mine)
      if (lost === undefined) {
        mine.lossAt = undefined
        continue
      }
      if (lost === 'gone') {
        this.mineByTask.delete(task)
        out.mineChanged = true
        continue
      }
      mine.lossAt ??= now + this.windowMs(now)
      if (now < mine.lossAt) continue
      this.mineByTask.delete(task)
      out.mineChanged = true
      out.notices.push(notice(task, mine.epoch, lost))
      if (lost.reason === 'outbid' && !mine.done) this.releaseOutbid(task, mine.epoch, out)
    }
  }

  /**
   * How a settled claim stands: undefined while it is still this daemon's,
   * 'gone' when its own release or done ended it, else how it was lost. A
   * finished task's claim is lost only when its done stops counting: another
   * claim is the holder rule's at its epoch.
   */
  private lossOf(task: string, mine: MyClaimState): Extract<ClaimOutcome, { outcome: 'LOST' }> | 'gone' | undefined {
    if (mine.done) {
      const winner = this.board.winnerAt(task, mine.epoch)
      if (winner === this.me) return undefined
      return winner === undefined
        ? { outcome: 'LOST', task, epoch: mine.epoch, reason: 'outbid' }
        : { outcome: 'LOST', task, epoch: mine.epoch, winner, reason: 'outbid' }
    }
    const o = claimOutcome(this.board, task, this.me, mine.epoch)
    if (o.outcome === 'HELD') return undefined
    if (o.reason === 'released' || (o.reason === 'done' && o.winner === this.me)) return 'gone'
    return o
  }

  /**
   * Releases this daemon's claim at `epoch`, outbid by a smaller one (a race,
   * or two sides of a healed partition): left standing, it would become the
   * holder by the holder rule when the winner releases, held by an agent
   * doing other work. A lost race leaves no hand-off notes.
   */
  private releaseOutbid(task: string, epoch: number, out: ProtocolOutput): void {
    if (this.board.claimStatus(task, this.me, epoch) !== 'active') return
    out.append.push({ kind: 'release', body: Release.fromPartial({ task, epoch }) })
  }
}

function emptyOutput(): ProtocolOutput {
  return { append: [], answers: [], notices: [], mineChanged: false }
}

function notice(task: string, epoch: number, o: Extract<ClaimOutcome, { outcome: 'LOST' }>): ClaimNotice {
  const n: ClaimNotice = { type: o.reason === 'superseded' ? 'claim_superseded' : 'claim_lost', task, epoch, reason: o.reason }
  if (o.winner !== undefined) n.winner = o.winner
  return n
}

export function createClaimProtocol(init: ClaimProtocolInit): ClaimProtocol {
  return new ClaimProtocol(init)
}
