// The board inside agentd: the sans-IO claim protocol (core/board/
// claim-protocol) run on real timers. Every accepted log entry is folded in;
// the protocol's entries are appended, its answers handed to the claims
// waiting for them, its notices turned into events; the claims this daemon
// holds are persisted, so a restart learns what it lost. Overlaps between
// live claims are told to both holders.
import { performance } from 'node:perf_hooks'
import {
  boardCheckpointFits,
  decodeBoardCheckpoint,
  ClaimProtocol,
  carriedWithoutDone,
  overlapsFor,
  PLAN_TASK_ID,
  type AnyBoardEntry,
  type PendingTask,
  type ReadyChoice,
  type Board,
  type ClaimNotice,
  type ClaimOverlap,
  type ClaimVerdict,
  type HolderInfo,
  type MyClaim,
  type NewTask,
  type ProtocolOutput,
  type SettleWindow,
  type TaskView
} from '../core/board/index.js'
import { validateGlob } from '../core/board/glob-pattern.js'
import type { HeartbeatPolicy } from '../core/presence/heartbeat-interval.js'
import { decodeBody, isKnownKind, KNOWN_KINDS } from '../core/log/kinds.js'
import type { StoredEntry } from '../core/log/ingest-result.js'
import { FailedPreconditionError, InvalidArgumentError, NotFoundError, UnavailableError } from '../core/errors.js'
import { VerdictKind } from '../gen/agency/v1/log.js'
import type { LogService } from './log-service.js'
import { BOARD_CHECKPOINT_FILE, readCheckpoint, removeCheckpoint } from '../store/checkpoint-file.js'
import { BoardCheckpointer } from './board-checkpointer.js'
import type { EventBus } from './event-bus.js'
import type { StateStore } from '../store/index.js'
import type { Logger } from '../logger.js'
import { GOAL_NEEDS_TEST, doneWithoutWork } from '../core/agent-words.js'
import { processStalls, type StallWatch } from './stall-watch.js'

export interface BoardServiceInit {
  me: string
  /** the operator keys the board obeys (core/operator) */
  operators?: readonly string[]
  log: LogService
  events: EventBus
  state: StateStore
  logger: Logger
  /** the heartbeat policy presence runs: leases scale from the interval each heartbeat announces */
  heartbeats: HeartbeatPolicy
  /** how many other daemons this one knows of, for the start-up grace of the leases */
  knownPeers: () => number
  /** a direct message to a peer, for overlap notices */
  notify: (peer: string, text: string) => Promise<void>
  settle?: { minMs?: number; maxMs?: number; defaultMs?: number; fixedMs?: number }
  metrics?: { claimsLost: () => void; claimConflicts: () => void; takeovers: () => void }
  /**
   * where the board's checkpoint is kept, the last log cursor on disk, and ms since the last sync batch (none: the log is folded at every
   * start)
   */
  checkpoint?: { dataDir: string; writtenCursor: () => number; sinceBatchMs: () => number }
  /** this process's stalls (default: the process-wide watch) */
  stalls?: StallWatch
}

/**
 * A stall of this daemon's own this long or longer makes its board catch up before it answers a claim (and at least a heartbeat interval).
 */
export const STALL_MIN_MS = 1_000

export interface ClaimAnswer {
  /** NONE_READY: claim --next found nothing to claim */
  outcome: 'HELD' | 'LOST' | 'PENDING' | 'NONE_READY'
  task: string
  epoch: number
  winner: string
  handoff: string
  branch: string
  overlaps: string[]
  settleMs: number
}

/** What claim --next answers: a claim's answer, how many claims it made, and the tasks peers' claims were settling on. */
export interface NextClaimAnswer extends ClaimAnswer {
  attempts: number
  pending: PendingTask[]
}

/** Claims one claim --next call makes at most (the first choice, then the next ones after a LOST). */
export const NEXT_CLAIM_ATTEMPTS = 3

const MY_CLAIMS_KEY = 'board/my-claims'

interface Waiter {
  resolve: (v: ClaimVerdict) => void
  reject: (err: Error) => void
}

export class BoardService {
  readonly protocol: ClaimProtocol
  private readonly init: BoardServiceInit
  /** claims waiting for their answer: "task@epoch" -> callers */
  private readonly waiters = new Map<string, Waiter[]>()
  private timer?: NodeJS.Timeout
  private wakeAt?: number
  private stopped = false
  /** overlap pairs already notified: "myTask|otherTask|otherHolder" */
  private readonly notified = new Set<string>()
  private readonly heldListeners = new Set<() => void>()
  /** writes the board's checkpoint while running and at the stop (none without a data dir) */
  private readonly checkpointer?: BoardCheckpointer
  private restoredFrom = 0
  /** dones being written for tasks whose integration request landed (carry-on): task -> the write */
  private readonly carrying = new Map<string, Promise<void>>()
  private readonly stalls: StallWatch
  private unwatchStalls?: () => void
  private unwatchSync?: () => void

  constructor(init: BoardServiceInit) {
    this.init = init
    this.stalls = init.stalls ?? processStalls
    const { fixedMs, ...window } = init.settle ?? {}
    this.protocol = new ClaimProtocol({
      me: init.me,
      startedAt: this.now(),
      heartbeats: init.heartbeats,
      knownPeers: init.knownPeers,
      settle: Object.fromEntries(Object.entries(window).filter(([, v]) => v !== undefined)),
      fixedSettleMs: fixedMs,
      operators: init.operators
    })
    const c = init.checkpoint
    if (c !== undefined) {
      this.checkpointer = new BoardCheckpointer({
        dataDir: c.dataDir,
        board: () => this.board,
        state: init.log.state,
        writtenCursor: c.writtenCursor,
        sinceBatchMs: c.sinceBatchMs,
        kinds: BOARD_KINDS,
        busy: () => this.waiters.size > 0,
        logger: init.logger
      })
    }
  }

  get board(): Board {
    return this.protocol.board
  }

  get settle(): SettleWindow {
    return this.protocol.settle
  }

  /** Folds the restored log in and reloads the claims this daemon held before a restart. */
  async beforeStart(): Promise<void> {
    const { from, covered } = await this.restoreCheckpoint()
    const now = this.now()
    let folded = 0
    for (const e of this.init.log.state.iterateAfter(from, BOARD_KINDS)) {
      const entry = boardEntry(e)
      if (entry !== undefined) {
        this.protocol.apply(entry, now)
        folded++
      }
    }
    this.checkpointer?.started(from, covered, folded)
    this.init.log.onAccepted(e => {
      this.onEntry(e)
    })
    this.unwatchStalls = this.stalls.subscribe((ms, at) => {
      this.onStall(ms, at)
    })
    this.unwatchSync = this.init.log.onSyncRound(() => {
      this.execute(this.protocol.rejoined(this.now())).catch(() => {})
    })
    const saved = await this.init.state.get<unknown[]>(MY_CLAIMS_KEY)
    void this.execute(this.protocol.restore(savedClaims(saved), this.now()), { later: true })
    this.writeCarriedDones()
  }

  /**
   * Takes in the board's checkpoint when it is one of this log (up to its
   * cursor: board-checkpoint.ts) and returns the cursor it covers; 0, and
   * the file removed, when there is none or it does not fit: then the whole
   * log is folded. `covered`: the board entries it covers.
   */
  private async restoreCheckpoint(): Promise<{ from: number; covered: number }> {
    const none = { from: 0, covered: 0 }
    const c = this.init.checkpoint
    if (c === undefined) return none
    const saved = await readCheckpoint(c.dataDir, BOARD_CHECKPOINT_FILE)
    if (saved === undefined) return none
    try {
      const ckpt = decodeBoardCheckpoint(saved)
      const state = this.init.log.state
      const misfit = boardCheckpointFits(
        ckpt,
        { cursor: state.cursor, idAt: at => state.atCursor(at)?.id, countsUpTo: upTo => state.countsByKindUpTo(upTo) },
        BOARD_KINDS
      )
      if (misfit !== undefined) throw new FailedPreconditionError(`the board checkpoint is not of this log: ${misfit}`)
      this.protocol.board.takeFoldState(ckpt.state, () => boardEntriesUpTo(state, ckpt.cursor))
      this.restoredFrom = ckpt.cursor
      this.init.logger.info({ cursor: ckpt.cursor, entries: this.board.size }, 'board restored from its checkpoint')
      return { from: ckpt.cursor, covered: Object.values(ckpt.kinds).reduce((a, n) => a + n, 0) }
    } catch (err) {
      this.init.logger.warn({ err }, 'the board checkpoint does not fit the log: folding the whole log')
      await removeCheckpoint(c.dataDir, BOARD_CHECKPOINT_FILE).catch(() => {})
      return none
    }
  }

  /** The log cursor up to which the last start took the board from its checkpoint (0: it folded the whole log). */
  get restoredFromCheckpoint(): number {
    return this.restoredFrom
  }

  /**
   * Writes the board's checkpoint, when every entry it has folded is on disk
   * (the log's last cursor is written) and it covers more than the one on
   * disk: at the stop, after the log's last writes (while running, the
   * checkpointer writes it when enough came in). Failures are logged, never
   * fatal: without it a start folds the log.
   */
  async checkpoint(): Promise<void> {
    await this.checkpointer?.write()
  }

  /** At the daemon's stop, after the log's last writes: the next start takes the board from it instead of folding the log. */
  async afterStop(): Promise<void> {
    await this.checkpoint()
  }

  /** Stops the settle timer; claims still waiting are answered with an error. */
  stop(): void {
    this.stopped = true
    this.unwatchStalls?.()
    this.unwatchSync?.()
    this.checkpointer?.stop()
    clearTimeout(this.timer)
    const err = new UnavailableError('agentd is stopping: claim again once it is back')
    for (const list of this.waiters.values()) for (const w of list) w.reject(err)
    this.waiters.clear()
  }

  /**
   * This process stood still for `ms` (a SIGSTOP, a frozen VM, a stalled
   * loop): longer than a heartbeat interval, and the board's view is stale
   * (core/board/claim-protocol `stalled`). After a stall of a lease or more
   * it catches up at once: an exchange with every connected peer, the first
   * to finish lets claims settle again.
   */
  private onStall(ms: number, at: number): void {
    if (this.stopped || ms < Math.max(STALL_MIN_MS, this.init.heartbeats.baseMs)) return
    this.execute(this.protocol.stalled(ms, at)).catch(() => {})
    if (!this.protocol.isRejoining()) return
    this.init.logger.info({ ms: Math.round(ms) }, 'this daemon stood still: its claims wait until it has caught up with a peer')
    this.init.log.syncConnected()
  }

  /** A stall still going on is taken in before anything is judged on what was seen before it. */
  private noticeStall(): void {
    this.stalls.poll(this.now())
  }

  private onEntry(e: StoredEntry): void {
    this.noticeStall()
    const entry = boardEntry(e)
    this.checkpointer?.accepted(e.cursor, entry !== undefined)
    if (entry === undefined) return
    // Entries the protocol appends in answer go out after this entry has
    // reached every listener.
    void this.execute(this.protocol.apply(entry, this.now()), { later: true })
    if (entry.kind === 'claim' && entry.author !== this.init.me) this.checkOverlaps()
    if (entry.kind === 'integration' || (entry.kind === 'integration_request' && entry.author === this.init.me)) this.writeCarriedDones()
  }

  /**
   * Writes the done of every task this daemon holds whose integration
   * request at the held epoch landed (core/board/carry-on): its agent went on
   * with its next task meanwhile. A function of the board, so at start it
   * writes what a stop or a crash left unwritten; a done being written is not
   * written twice.
   */
  private writeCarriedDones(): void {
    if (this.stopped) return
    for (const l of carriedWithoutDone(this.board, this.init.me)) {
      if (this.carrying.has(l.task)) continue
      const writing = new Promise<void>(resolve => {
        setImmediate(resolve)
      })
        .then(async () => {
          // Taken back meanwhile (a done by the agent, a release): nothing to write.
          if (this.stopped || !carriedWithoutDone(this.board, this.init.me).some(c => c.task === l.task && c.epoch === l.epoch)) return
          await this.init.log.append('done', { task: l.task, epoch: l.epoch, commit: l.commit, paths: l.paths })
          await this.execute(this.protocol.forget(l.task))
          this.init.logger.info({ task: l.task, epoch: l.epoch }, 'integration request landed: done')
        })
        .catch(err => {
          this.init.logger.warn({ err, task: l.task }, 'cannot write the done of a task whose integration request landed')
        })
        .finally(() => {
          this.carrying.delete(l.task)
        })
      this.carrying.set(l.task, writing)
    }
  }

  /** Resolves once every done being written for a landed request is on the log (or failed). */
  async carried(): Promise<void> {
    await Promise.all([...this.carrying.values()])
  }

  /**
   * The tasks this daemon holds that are not on their way to the shared branch (carry-on, or carried here while its daemon verifies): the
   * ones its agent works on.
   */
  working(): HolderInfo[] {
    return this.held().filter(h => !this.protocol.onItsWay(h.task))
  }

  /** A heartbeat from `peer`, announcing its next one in `intervalMs`: its leases are live. */
  heard(peer: string, intervalMs: number): void {
    this.protocol.heard(peer, this.now(), intervalMs)
  }

  /** A round trip to a peer, timed on this daemon's clock, for the settle window. */
  observeRoundTrip(ms: number): void {
    this.protocol.observeRoundTrip(ms, this.now())
  }

  settleMs(): number {
    return this.protocol.windowMs(this.now())
  }

  now(): number {
    return performance.now()
  }

  /**
   * Does what the protocol asks: notices become events, entries are
   * appended (after the current listeners with `later`), the claims are
   * persisted, answers reach their callers, and the timer is re-armed.
   */
  private execute(out: ProtocolOutput, opts: { later?: boolean } = {}): Promise<void> {
    for (const n of out.notices) this.tell(n)
    const appended =
      out.append.length === 0
        ? Promise.resolve()
        : opts.later === true
          ? new Promise<void>(resolve => {
              setImmediate(resolve)
            }).then(async () => {
              await this.appendAll(out)
            })
          : this.appendAll(out)
    const done = appended.then(() => {
      if (out.mineChanged) this.persistMine()
      for (const a of out.answers) this.answer(a)
    })
    if (opts.later === true)
      done.catch(err => {
        this.init.logger.warn({ err }, 'cannot write what the claim protocol asked for')
      })
    this.arm()
    return done
  }

  /**
   * The protocol's claims and releases: on disk and published before their answers go out, their accepted records written behind
   * (appendPlaced).
   */
  private async appendAll(out: ProtocolOutput): Promise<void> {
    for (const a of out.append) await this.init.log.appendPlaced(a.kind, a.body)
  }

  /** One timer for the end of the earliest settle window. */
  private arm(): void {
    const next = this.protocol.nextWake(this.now())
    if (this.stopped || next === this.wakeAt) return
    clearTimeout(this.timer)
    this.wakeAt = next
    if (next === undefined) return
    // The answer waits for the I/O that is already in (setImmediate runs after
    // the poll phase): after a stall, the timer phase comes first, and a
    // competing claim that arrived during the stall must be folded in before
    // the window is judged.
    this.timer = setTimeout(
      () => {
        setImmediate(() => {
          this.wakeAt = undefined
          if (this.stopped) return
          this.noticeStall()
          this.execute(this.protocol.tick(this.now())).catch(err => {
            this.init.logger.warn({ err }, 'cannot answer a claim')
          })
        })
      },
      Math.max(0, Math.ceil(next - this.now()))
    )
  }

  private answer(v: ClaimVerdict): void {
    const key = `${v.task}@${v.epoch}`
    const list = this.waiters.get(key)
    if (list === undefined) return
    this.waiters.delete(key)
    for (const w of list) w.resolve(v)
  }

  private verdictOf(task: string, epoch: number): Promise<ClaimVerdict> {
    return new Promise((resolve, reject) => {
      const key = `${task}@${epoch}`
      const list = this.waiters.get(key) ?? []
      list.push({ resolve, reject })
      this.waiters.set(key, list)
    })
  }

  /** A claim this daemon held is lost: the agent hears of it. */
  private tell(n: ClaimNotice): void {
    this.init.metrics?.claimsLost()
    // A done by someone who did not win the epoch is an assistant's (core/board/assist-choice).
    const assisted = n.reason === 'done' && n.winner != null && this.board.winnerAt(n.task, n.epoch) !== n.winner
    const text =
      n.reason === 'done' && n.winner != null
        ? `task ${n.task} was done by ${n.winner}${assisted ? ' (an assistant)' : ''}: your claim on ${n.task}@${n.epoch} has ended`
        : `your claim on ${n.task}@${n.epoch} is lost (${n.reason})${n.winner != null ? `: ${n.winner} holds it now` : ''}`
    this.init.events.emit({
      type: n.type,
      task: n.task,
      peerId: n.winner ?? '',
      text,
      detail: { epoch: n.epoch, reason: n.reason, winner: n.winner ?? null }
    })
    this.init.logger.info({ task: n.task, epoch: n.epoch, reason: n.reason, winner: n.winner }, 'claim lost')
  }

  private persistMine(): void {
    const value = this.protocol.mine().map(c => (c.done === true ? [c.task, c.epoch, c.settled, true] : [c.task, c.epoch, c.settled]))
    this.init.state.put(MY_CLAIMS_KEY, value, { sync: true }).catch(err => {
      this.init.logger.warn({ err }, 'cannot save claims')
    })
    for (const l of this.heldListeners) l()
  }

  /** Calls back when the claims this daemon holds change (presence announces them at once); returns the unsubscribe function. */
  onHeldChanged(listener: () => void): () => void {
    this.heldListeners.add(listener)
    return () => {
      this.heldListeners.delete(listener)
    }
  }

  /** Overlaps between my live claims and others': an event and a direct message, once per pair. */
  private checkOverlaps(): void {
    const now = this.now()
    for (const { task } of this.protocol.mine()) {
      const mine = this.board.holder(task)
      if (mine?.holder !== this.init.me) continue
      for (const o of overlapsFor(this.board, mine, now)) this.reportOverlap(o)
    }
  }

  private reportOverlap(o: ClaimOverlap): void {
    const other = o.a
    const mine = o.b
    const key = `${mine.task}|${other.task}|${other.holder}`
    if (this.notified.has(key)) return
    this.notified.add(key)
    this.init.metrics?.claimConflicts()
    const paths = o.globs.map(([x, y]) => (x === y ? x : `${x} ~ ${y}`))
    this.init.events.emit({
      type: 'overlap',
      task: mine.task,
      peerId: other.holder,
      text: `your task ${mine.task} overlaps ${other.task} held by ${other.holder} on ${paths.join(', ')}`,
      detail: { myTask: mine.task, otherTask: other.task, other: other.holder, paths }
    })
    const text = `[agency] scope overlap: my task ${mine.task} (${mine.scope.join(', ')}) overlaps your task ${other.task} (${other.scope.join(', ')}) on ${paths.join(', ')}. Let's agree who changes what.`
    this.init.notify(other.holder, text).catch(err => {
      this.init.logger.debug({ err: (err as Error).message }, 'overlap notice not sent')
    })
  }

  // ---- commands ----

  /**
   * Claims a task: HELD or LOST once the settle window has passed (PENDING
   * at once with `noWait`). Bad input and a task held by a live peer throw.
   */
  async claim(task: string, scope: string[], noWait = false): Promise<ClaimAnswer> {
    this.noticeStall()
    const ticket = this.protocol.claim(task, scope, this.now(), { wait: !noWait })
    const verdict = this.verdictOf(ticket.task, ticket.epoch)
    // A stop while the claim is being written rejects the verdict before it is awaited: handled here, thrown below.
    verdict.catch(() => {})
    const immediate = ticket.output.answers.some(a => a.task === ticket.task && a.epoch === ticket.epoch)
    if (ticket.takeover?.expired === true) this.init.metrics?.takeovers()
    try {
      await this.execute(ticket.output)
    } catch (err) {
      void this.execute(this.protocol.abandon(ticket.task, ticket.epoch))
      this.answerError(ticket.task, ticket.epoch, err as Error)
      await verdict.catch(() => {})
      throw err
    }
    if (noWait && !immediate) {
      verdict.catch(() => {})
      return {
        outcome: 'PENDING',
        task,
        epoch: ticket.epoch,
        winner: '',
        handoff: ticket.takeover?.note ?? '',
        branch: ticket.takeover?.branch ?? '',
        overlaps: this.overlapPeers(task),
        settleMs: 0
      }
    }
    const v = await verdict
    if (v.outcome === 'HELD') this.checkOverlaps()
    else this.init.metrics?.claimsLost()
    return {
      outcome: v.outcome,
      task,
      epoch: v.epoch,
      winner: v.winner,
      handoff: v.handoff,
      branch: v.branch,
      overlaps: this.overlapPeers(task),
      settleMs: v.settleMs
    }
  }

  /**
   * claim --next: the task this daemon is settling on or holds, if any (a
   * retried call claims nothing new); else the ready task this daemon prefers
   * (core/board/claim-choice), skipping those a peer's claim is settling on,
   * and after a LOST the next choice, up to NEXT_CLAIM_ATTEMPTS claims.
   * NONE_READY when there is nothing to claim.
   */
  async claimNext(scope: string[]): Promise<NextClaimAnswer> {
    const current = this.protocol.current()
    if (current !== undefined) return { ...(await this.claim(current.task, scope)), attempts: 0, pending: this.readyChoice().pending }
    const tried = new Set<string>()
    let last: ClaimAnswer | undefined
    let attempts = 0
    // Claims written, and choices tried (a choice taken between the choice and the claim writes none).
    while (attempts < NEXT_CLAIM_ATTEMPTS && tried.size < 4 * NEXT_CLAIM_ATTEMPTS) {
      const task = this.protocol.nextChoices(this.now(), tried)[0]
      if (task === undefined) break
      tried.add(task.id)
      let a: ClaimAnswer
      try {
        a = await this.claim(task.id, scope)
      } catch (err) {
        // Taken (or finished) between the choice and the claim: the next one.
        if (err instanceof FailedPreconditionError || err instanceof NotFoundError) continue
        throw err
      }
      attempts++
      if (a.outcome === 'HELD') return { ...a, attempts, pending: this.readyChoice().pending }
      last = a
    }
    const pending = this.readyChoice().pending
    if (last !== undefined) return { ...last, attempts, pending }
    return { outcome: 'NONE_READY', task: '', epoch: 0, winner: '', handoff: '', branch: '', overlaps: [], settleMs: 0, attempts, pending }
  }

  /** The ready tasks without those a peer's claim is settling on, and those (pending). */
  readyChoice(): ReadyChoice {
    return this.protocol.readyChoice(this.now())
  }

  private answerError(task: string, epoch: number, err: Error): void {
    const key = `${task}@${epoch}`
    const list = this.waiters.get(key) ?? []
    this.waiters.delete(key)
    for (const w of list) w.reject(err)
  }

  /** The answer to a claim made with no_wait, once settled. */
  claimState(task: string): { holder: string; epoch: number } | undefined {
    const h = this.board.holder(task)
    return h == null ? undefined : { holder: h.holder, epoch: h.epoch }
  }

  private overlapPeers(task: string): string[] {
    const mine = this.board.holder(task)
    if (mine?.holder !== this.init.me) return []
    return [...new Set(overlapsFor(this.board, mine, this.now()).map(o => o.a.holder))]
  }

  /**
   * An integration of `task` at `epoch` was refused by the shared remote's
   * fence at `remote`: later claims go above it, and a claim of ours the
   * fence has closed (at or below its epoch) is released, so claiming again
   * takes the task at an epoch that can land.
   */
  async fenced(task: string, epoch: number, remote: { epoch: number; agent: string }): Promise<void> {
    if (!this.protocol.fencedAt(task, epoch, remote)) return
    await this.release(task, `superseded at the shared remote: ${remote.agent}'s work for ${task}@${remote.epoch} landed`, '')
  }

  /** Releases a held task with hand-off notes; `to`: the agent it is handed to by speed (docs/handoff.md), '' for anyone. */
  async release(task: string, note: string, branch: string, to = ''): Promise<TaskView> {
    const held = this.board.checkReleasable(task, this.init.me)
    await this.init.log.append('release', { task, epoch: held.epoch, note, branch, to })
    await this.execute(this.protocol.forget(task))
    return this.task(task)
  }

  /**
   * Marks a held task done: only once this epoch's work is on the shared
   * branch, or with `noChange` saying why none was needed (recorded as a
   * finding). The plan task needs no integration: its work is the tasks.
   */
  async done(task: string, commit: string, paths: string[], noChange = ''): Promise<TaskView> {
    // Its integration request landed: the daemon writes (or wrote) the done; the agent's done changes nothing.
    await this.carrying.get(task)
    const written = this.board.doneRecord(task)
    if (written?.by === this.init.me && this.board.requestLanded(task, written.epoch, this.init.me)) return this.task(task)
    const held = this.board.checkDoable(task, this.init.me)
    for (const p of paths) validateGlob(p)
    const landed = this.board.integratedAt(task, held.epoch)
    if (task !== PLAN_TASK_ID && landed === undefined && noChange.trim() === '') {
      throw new FailedPreconditionError(doneWithoutWork(task, held.epoch))
    }
    if (noChange.length > 4000) throw new InvalidArgumentError('the no-change reason is longer than 4000 characters')
    if (landed === undefined && noChange.trim() !== '') {
      await this.init.log.append('finding', {
        kind: 'note',
        text: `${task} done without a change: ${noChange.trim()}`,
        paths,
        tags: [`task:${task}`, 'no-change'],
        refs: [],
        supersedes: ''
      })
    }
    await this.init.log.append('done', { task, epoch: held.epoch, commit: commit !== '' ? commit : (landed ?? ''), paths })
    await this.execute(this.protocol.forget(task))
    return this.task(task)
  }

  async addTask(t: NewTask): Promise<TaskView> {
    return (await this.addTasks([t]))[0]
  }

  /** Adds a plan: checked as one graph against the board, then appended dependencies first; all or nothing. */
  async addTasks(tasks: NewTask[]): Promise<TaskView[]> {
    const fresh = this.board.checkNewTasks(tasks)
    for (const t of fresh) await this.init.log.append('task', t)
    return tasks.map(t => this.task(t.id))
  }

  async setGoal(g: { text: string; files: string[]; testCommand: string }): Promise<void> {
    if (g.text.trim() === '') throw new InvalidArgumentError('the goal needs text')
    if (g.testCommand.trim() === '') throw new InvalidArgumentError(GOAL_NEEDS_TEST)
    await this.init.log.append('goal', g)
  }

  async requestReview(target: string, reviewers: string[], note: string): Promise<void> {
    if (target.trim() === '') throw new InvalidArgumentError('a review request needs a target (commit, branch or task)')
    await this.init.log.append('review_request', { target, reviewers, note })
  }

  async verdict(target: string, verdict: string, evidence: string): Promise<void> {
    const kinds: Record<string, VerdictKind> = {
      approve: VerdictKind.VERDICT_APPROVE,
      reject: VerdictKind.VERDICT_REJECT,
      retract: VerdictKind.VERDICT_RETRACT
    }
    const kind = Object.hasOwn(kinds, verdict) ? kinds[verdict] : undefined
    if (kind == null) throw new InvalidArgumentError(`unknown verdict "${verdict}": use approve, reject or retract`)
    if (target.trim() === '') throw new InvalidArgumentError('a verdict needs a target')
    await this.init.log.append('verdict', { target, verdict: kind, evidence })
  }

  task(id: string): TaskView {
    return this.board.task(id, this.now()) as TaskView
  }

  /** Claims this daemon holds per the board: the leases its heartbeat carries. */
  held(): HolderInfo[] {
    return this.board.heldBy(this.init.me)
  }
}

/** The kinds read and decoded for the board's fold at start: all but findings, which are most of a big log and which it ignores. */
const BOARD_KINDS: ReadonlySet<string> = new Set(KNOWN_KINDS.filter(k => k !== 'finding'))

/** The board's entries of the log up to `cursor`, as the board reads them. */
function* boardEntriesUpTo(state: LogService['state'], cursor: number): Generator<AnyBoardEntry> {
  for (const e of state.iterateAfter(0, BOARD_KINDS)) {
    if (e.cursor > cursor) return
    const entry = boardEntry(e)
    if (entry !== undefined) yield entry
  }
}

/** A stored entry as the board reads it; undefined for kinds it does not know or a body that does not decode. */
function boardEntry(e: StoredEntry): AnyBoardEntry | undefined {
  const { entry } = e
  // findings fold to nothing on the board (as at start, BOARD_KINDS): not decoded
  if (!isKnownKind(entry.kind) || entry.kind === 'finding') return undefined
  let body: unknown
  try {
    body = decodeBody(entry.kind, entry.body)
  } catch {
    return undefined
  }
  return { id: e.id, author: entry.author, seq: entry.seq, lamport: entry.lamport, time: entry.time, kind: entry.kind, body }
}

/**
 * The claims persisted by this or an earlier version: [task, epoch, settled,
 * done?], or [task, epoch] from before settling was recorded, which counts as
 * still settling (a window after the restart costs less than an early HELD).
 */
function savedClaims(saved: unknown[] | undefined): MyClaim[] {
  const out: MyClaim[] = []
  for (const item of saved ?? []) {
    if (!Array.isArray(item) || typeof item[0] !== 'string' || typeof item[1] !== 'number') continue
    out.push(
      item[3] === true
        ? { task: item[0], epoch: item[1], settled: item[2] === true, done: true }
        : { task: item[0], epoch: item[1], settled: item[2] === true }
    )
  }
  return out
}
