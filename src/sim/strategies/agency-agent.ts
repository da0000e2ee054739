// A scripted agent that follows agency's loop on its own replica's board:
// ready → claim → the claim protocol's answer after the settle window (HELD,
// or LOST and released) → search the findings for failed approaches →
// attempt → record the failure and try again, or pay what the hazards ask
// (merge-hazards.ts), have a peer review the change, integrate it verified
// (agency-integrator.ts; fenced: only while still holding) and mark done.
// A peer's review request comes before a new task. With nothing ready, it
// helps a held task on the critical path (agency-helpers.ts). Each of these
// mechanisms can be switched off (agency-mechanisms.ts).

import type { ClaimVerdict } from '../../core/board/claim-protocol.js'
import { claimOutcome } from '../../core/board/settle.js'
import { isAgencyError } from '../../core/errors.js'
import { Finding } from '../../gen/agency/v1/log.js'
import type { Random } from '../random.js'
import type { Replica } from '../replica.js'
import type { Attempt, ProjectTask } from '../workload.js'
import type { AgencySwarm, ReviewRequest } from './agency.js'
import { idleRepair, preMerge } from './merge-hazards.js'

const LOST_BACKOFF_MS = 60_000
const PICK_TRIES = 12
/** a helper handed a task asks for it this often until the release has reached its daemon */
const HANDOFF_RETRY_MS = 1_000
const HANDOFF_TRIES = 30

/** A passing attempt at a task, waiting to be integrated. */
export interface Result { task: ProjectTask, attempt: Attempt, start: number }

export class AgencyAgent {
  readonly index: number
  private readonly swarm: AgencySwarm
  private readonly replica: Replica
  readonly rng: Random
  /** bumps on crash: callbacks scheduled by an earlier life do nothing */
  private life = 0
  /** bumps when an attempt is stopped: its end does nothing */
  private attemptToken = 0
  private frozen = false
  private readonly lostUntil = new Map<number, number>()
  private readonly ownTraps = new Set<string>()
  private working: { task: ProjectTask, start: number, helper?: boolean } | undefined
  /** the claim waiting for its answer */
  private claiming: { task: ProjectTask, at: number } | undefined
  /** a result to integrate once the claim just made is HELD (a helper taking over) */
  private carried: Result | undefined
  /** an idle agent waiting to be woken (a review to do) */
  private idleToken = 0
  /** fixes owed to its own changes in the pipeline, done before the next attempt */
  private debtMs = 0
  idle = false

  constructor (index: number, swarm: AgencySwarm, replica: Replica, rng: Random) {
    this.index = index
    this.swarm = swarm
    this.replica = replica
    this.rng = rng
    // A loss of a claim it holds shows when the agent next looks (finish, integrate).
    replica.listen({ verdict: v => { this.settle(v) }, notice: () => {} })
  }

  get name (): string {
    return this.replica.name
  }

  get slow (): boolean {
    return this.swarm.project.hazards.slowAgent(this.index)
  }

  start (at: number): void {
    this.later(at - this.swarm.scheduler.now, () => { this.pick() })
  }

  /** Stops acting (tests use it to let the replicas settle). */
  freeze (): void {
    this.frozen = true
  }

  crash (now: number): void {
    this.life++
    this.claiming = undefined
    this.carried = undefined
    this.idle = false
    if (this.working !== undefined) {
      this.swarm.recorder.worked(this.working.task.id, this.index, this.working.start, now)
      this.swarm.helpers.holderGone(this.working.task.index, this)
    }
    this.working = undefined
  }

  /** After the process restarts: resume a task the board says it still holds, else pick. */
  restart (): void {
    this.life++
    const now = this.swarm.scheduler.now
    this.replica.drain(now)
    const mine = this.replica.board.heldBy(this.name)[0]
    if (mine !== undefined) this.work(this.swarm.project.task(mine.task), mine.epoch)
    else this.pick()
  }

  /** A peer asked for a review: an idle agent takes it now. */
  wake (): void {
    if (!this.idle) return
    this.idle = false
    this.idleToken++
    this.pick()
  }

  later (ms: number, fn: () => void): void {
    const life = this.life
    this.swarm.scheduler.after(ms, () => { if (life === this.life && !this.frozen) fn() })
  }

  pick (): void {
    const now = this.swarm.scheduler.now
    const board = this.replica.board
    this.idle = false
    const review = this.swarm.takeReview(this.index)
    if (review !== undefined) { this.review(review); return }
    this.replica.drain(now)
    for (const task of this.candidates(now)) {
      const t = this.swarm.project.tasks[task]
      const view = board.task(t.id, now)
      if (view === undefined || (view.state !== 'open' && view.state !== 'expired')) continue
      if (!view.deps.every(d => board.doneRecord(d) !== undefined)) continue
      if (this.claim(t, now)) return
    }
    if (this.swarm.helpers.help(this, this.replica, now)) return
    if (idleRepair(this.swarm, this.index, () => { this.pick() })) return
    this.idle = true
    const token = ++this.idleToken
    this.later(this.swarm.pollMs * this.rng.between(0.5, 1.5), () => { if (token === this.idleToken) this.pick() })
  }

  private claim (t: ProjectTask, now: number): boolean {
    this.claiming = { task: t, at: now }
    let ticket
    try {
      ticket = this.replica.claim(t.id, now)
    } catch (err) {
      this.claiming = undefined
      if (!isAgencyError(err)) throw err
      return false
    }
    if (ticket.takeover?.expired === true) this.swarm.recorder.bump('takeovers')
    return true
  }

  /** Tasks whose holder's lease expired (only when crashes can happen: the scan is O(held)), then a few random open tasks. */
  private * candidates (now: number): Generator<number> {
    const ready = this.replica.ready
    if (this.swarm.expiryPossible) {
      for (const task of [...ready.held.values()]) {
        if ((this.lostUntil.get(task) ?? 0) > now) continue
        if (this.replica.board.task(this.swarm.project.tasks[task].id, now)?.state === 'expired') yield task
      }
    }
    const tried = new Set<number>()
    for (let i = 0; i < PICK_TRIES && tried.size < ready.open.size; i++) {
      const task = ready.open.pick(this.rng) as number
      if (tried.has(task)) continue
      tried.add(task)
      if ((this.lostUntil.get(task) ?? 0) > now) continue
      yield task
    }
  }

  /** The answer to the claim: work on it, or (the protocol released it) back off and pick again. */
  private settle (v: ClaimVerdict): void {
    const c = this.claiming
    if (c === undefined || c.task.id !== v.task || this.frozen) return
    this.claiming = undefined
    const carried = this.carried
    this.carried = undefined
    const now = this.swarm.scheduler.now
    this.swarm.recorder.settled(now - c.at)
    if (v.outcome === 'HELD') {
      this.swarm.claimHeld(this.replica, c.task, now)
      if (carried !== undefined) {
        // a helper's pass, handed the task: integrate it as the holder now
        this.working = { task: c.task, start: carried.start, helper: true }
        this.swarm.helpers.holding(c.task.index, this, carried.start, carried.attempt.approach, true)
        this.passed(c.task, v.epoch, carried.attempt, carried.start)
        return
      }
      this.work(c.task, v.epoch)
      return
    }
    if (carried !== undefined) this.swarm.recorder.spend('helping', carried.attempt.durationMs)
    this.swarm.recorder.bump('claimsLost')
    this.lostUntil.set(c.task.index, now + LOST_BACKOFF_MS)
    this.pick()
  }

  /** A holder handed this agent `t` (and perhaps its own pass to integrate): claim it once the release has arrived. */
  takeOver (t: ProjectTask, carried: Result | undefined, tries = 0): void {
    this.later(HANDOFF_RETRY_MS, () => {
      const now = this.swarm.scheduler.now
      this.replica.drain(now)
      const view = this.replica.board.task(t.id, now)
      if (view !== undefined && (view.state === 'open' || view.state === 'expired')) {
        this.carried = carried
        if (this.claim(t, now)) return
        this.carried = undefined
      }
      if (view?.state === 'claimed' && tries < HANDOFF_TRIES) { this.takeOver(t, carried, tries + 1); return }
      if (carried !== undefined) this.swarm.recorder.spend('helping', carried.attempt.durationMs)
      this.pick()
    })
  }

  knownTraps (t: ProjectTask): Set<string> {
    const known = new Set(this.ownTraps)
    if (!this.swarm.mechanisms.findings) return known
    const area = this.swarm.project.areas[t.area].name
    for (const hit of this.replica.searchFindings({ kind: 'failure', tag: area })) {
      for (const tag of hit.finding.tags) if (tag.startsWith('approach:')) known.add(`${area}/${tag.slice(9)}`)
    }
    return known
  }

  /** Approaches not to take on `t`: the failures it knows of, and those helpers announced they are trying; undefined when that leaves none. */
  private avoiding (t: ProjectTask): Set<string> | undefined {
    const known = this.knownTraps(t)
    const helpers = this.swarm.helpers.helpersOf(t.index)
    if (helpers.length === 0) return known
    const area = this.swarm.project.areas[t.area].name
    const avoid = new Set([...known, ...helpers.map(h => `${area}/${h.approach}`)])
    return this.swarm.project.areas[t.area].approaches.some(a => !avoid.has(`${area}/${a}`)) ? avoid : undefined
  }

  /** Every approach left is a helper's: the holder waits for them (a helper's pass takes the task; a failure frees an approach). */
  private waitForHelpers (t: ProjectTask, epoch: number): void {
    const now = this.swarm.scheduler.now
    this.working = { task: t, start: now }
    this.swarm.helpers.holding(t.index, this, now, '', false)
    const token = ++this.attemptToken
    this.later(this.swarm.pollMs, () => {
      if (token !== this.attemptToken) return
      this.replica.drain(this.swarm.scheduler.now)
      this.working = undefined
      this.swarm.recorder.spend('helping', this.swarm.scheduler.now - now)
      if (this.swarm.helpers.resultWaiting(t.index)) {
        this.working = { task: t, start: this.swarm.scheduler.now }
        if (this.yieldTask(t, 'helping')) return
        this.working = undefined
      }
      if (claimOutcome(this.replica.board, t.id, this.name, epoch).outcome === 'HELD') this.work(t, epoch)
      else { this.swarm.helpers.holderGone(t.index, this); this.pick() }
    })
  }

  private work (t: ProjectTask, epoch: number): void {
    const { scheduler, project, progress } = this.swarm
    const now = scheduler.now
    this.replica.drain(now)
    const avoid = this.avoiding(t)
    if (avoid === undefined) { this.waitForHelpers(t, epoch); return }
    const slowdown = project.hazards.slowdown(this.index, t.index, progress.nextAttempt(t))
    const attempt = project.attempt(this.rng, t, avoid, slowdown)
    attempt.durationMs += this.debtMs
    this.debtMs = 0
    this.working = { task: t, start: now }
    this.swarm.helpers.holding(t.index, this, now, attempt.approach, false)
    const token = ++this.attemptToken
    this.later(attempt.durationMs, () => { if (token === this.attemptToken) this.finish(t, epoch, attempt, now) })
  }

  /**
   * The holder stops its attempt at `t` and releases the task to a faster
   * agent (hand-off) or to a helper whose attempt passed first. The time it
   * spent is `kind`.
   */
  yieldTask (t: ProjectTask, kind: 'helping' | 'lost'): boolean {
    const w = this.working
    if (w === undefined || w.task.index !== t.index) return false
    const now = this.swarm.scheduler.now
    const board = this.replica.board
    this.replica.drain(now)
    const mine = board.holder(t.id)
    if (mine === undefined || mine.holder !== this.name) return false
    this.attemptToken++
    this.working = undefined
    this.swarm.recorder.spend(kind, now - w.start)
    this.swarm.helpers.holderGone(t.index, this)
    this.replica.write('release', { task: t.id, epoch: mine.epoch, note: 'handed to a faster agent', branch: '' }, now, t.index)
    this.replica.forget(t.id)
    this.swarm.recorder.bump('handoffs')
    this.lostUntil.set(t.index, now + LOST_BACKOFF_MS)
    this.swarm.helpers.released(t.index)
    this.later(0, () => { this.pick() })
    return true
  }

  private finish (t: ProjectTask, epoch: number, attempt: Attempt, start: number): void {
    const { scheduler, recorder, project } = this.swarm
    const now = scheduler.now
    this.replica.drain(now)
    const stillHeld = (): boolean => claimOutcome(this.replica.board, t.id, this.name, epoch).outcome === 'HELD'
    if (attempt.result === 'pass') {
      this.swarm.helpers.holderPassed(t.index)
      this.passed(t, epoch, attempt, start)
      return
    }
    this.working = undefined
    recorder.worked(t.id, this.index, start, now)
    if (attempt.result === 'trap') {
      recorder.trapHit(attempt.trap, start, attempt.durationMs)
      this.recordTrap(t, attempt, now)
    }
    // a helper passed while this attempt failed: hand it the task
    if (this.swarm.helpers.resultWaiting(t.index) && stillHeld()) {
      this.working = { task: t, start: now }
      if (this.yieldTask(t, 'helping')) return
      this.working = undefined
    }
    if (stillHeld()) this.work(t, epoch)
    else { this.swarm.helpers.holderGone(t.index, this); this.pick() }
    void project
  }

  recordTrap (t: ProjectTask, attempt: Attempt, now: number): void {
    this.ownTraps.add(attempt.trap)
    const area = this.swarm.project.areas[t.area].name
    this.replica.writeFinding(Finding.fromPartial({
      kind: 'failure',
      text: `${attempt.approach} does not work in ${area}: the hidden tests of ${t.id} fail with it`,
      paths: t.files,
      tags: [area, `approach:${attempt.approach}`, t.id]
    }), now)
    this.swarm.recorder.trapRecorded(attempt.trap, now)
  }

  /**
   * A passing attempt: what the hazards ask before a merge (the agent's own
   * work), then the change goes down the pipeline, review then verified
   * integration, while the agent picks its next task; the daemon writes done
   * when it lands. Without batching the agent verifies and races to the
   * branch itself: that time it owes (does before its next attempt).
   */
  private passed (t: ProjectTask, epoch: number, attempt: Attempt, start: number): void {
    const swarm = this.swarm
    const pre = preMerge(swarm, t, this.index, start, attempt.durationMs, (a, b) => swarm.agreed(a, b))
    const next = (): void => {
      if (pre.repair) swarm.progress.repairAround(t, swarm.scheduler.now)
      swarm.recorder.worked(t.id, this.index, start, swarm.scheduler.now, this.working?.helper === true)
      this.working = undefined
      this.reviewed(t, epoch, 0)
      this.pick()
    }
    if (pre.ms > 0) this.later(pre.ms, next)
    else next()
  }

  /** Work the agent owes (fixing its own change after a review or a red verify): it does it before its next attempt. */
  private owe (ms: number, then: () => void): void {
    this.debtMs += ms
    this.later(ms, then)
  }

  /** Asks a peer for a review (when there is a peer and reviews are on); a caught defect is fixed first. */
  private reviewed (t: ProjectTask, epoch: number, round: number): void {
    const swarm = this.swarm
    if (!swarm.mechanisms.reviews || swarm.agents.length < 2) { this.verify(t, epoch, false); return }
    swarm.requestReview({
      task: t,
      author: this.index,
      round,
      then: caught => {
        if (!caught) { this.verify(t, epoch, !swarm.project.hazards.defect(t.index)); return }
        const fix = swarm.project.hazards.options.reviewFixFraction * t.effortMs
        swarm.recorder.spend('reviewFix', fix)
        this.owe(fix, () => { this.verify(t, epoch, true) })
      }
    })
  }

  /** Does a peer's review: the reviewer's time, then the verdict. */
  private review (r: ReviewRequest): void {
    const { hazards } = this.swarm.project
    const ms = hazards.options.reviewMs
    this.swarm.recorder.spend('review', ms)
    this.swarm.recorder.bump('reviews')
    this.later(ms, () => {
      const caught = hazards.defect(r.task.index) && hazards.reviewCatches(r.task.index, r.round)
      if (caught) this.swarm.recorder.bump('reviewCaught')
      this.swarm.deliverVerdict(r, caught)
      this.pick()
    })
  }

  /** Verified integration: the suite runs on the merged tree; a change that breaks other tests is fixed and queued again. */
  private verify (t: ProjectTask, epoch: number, defectCaught: boolean, fixed = false): void {
    const swarm = this.swarm
    if (!swarm.mechanisms.verifiedIntegration) { this.land(t, epoch, { verified: false, defectCaught }); return }
    if (swarm.mechanisms.batching && !fixed) {
      // before queueing, the agent runs the whole suite on its own merge (its time), so that a batch is rarely red
      const { verifyMs, reviewFixFraction } = swarm.project.hazards.options
      swarm.recorder.bump('preVerifies')
      const breaks = swarm.project.hazards.breaks(t.index)
      if (breaks) {
        swarm.recorder.bump('verifyCaught')
        swarm.recorder.spend('breakFix', reviewFixFraction * t.effortMs)
      }
      this.owe(verifyMs + (breaks ? reviewFixFraction * t.effortMs : 0), () => { this.verify(t, epoch, defectCaught, true) })
      return
    }
    const breaks = !fixed && swarm.project.hazards.breaks(t.index)
    const life = this.life
    swarm.integrator.request({
      breaks,
      then: (green, agentMs) => {
        if (life !== this.life || this.frozen) return
        this.debtMs += agentMs
        if (green) { this.land(t, epoch, { verified: true, defectCaught }); return }
        const fix = swarm.project.hazards.options.reviewFixFraction * t.effortMs
        swarm.recorder.spend('breakFix', fix)
        this.owe(fix, () => { this.verify(t, epoch, defectCaught, true) })
      }
    })
  }

  /** Fenced integration: the merge goes in only while this agent still holds the task's epoch. */
  private land (t: ProjectTask, epoch: number, opts: { verified: boolean, defectCaught: boolean }): void {
    const { scheduler, recorder, progress } = this.swarm
    const now = scheduler.now
    this.replica.drain(now)
    this.swarm.helpers.holderGone(t.index, this)
    const board = this.replica.board
    if (claimOutcome(board, t.id, this.name, epoch).outcome !== 'HELD') {
      recorder.bump('fencedMerges')
      return
    }
    progress.merge(t, this.index, now, opts)
    this.swarm.helpers.taskDone(t.index)
    const held = board.checkDoable(t.id, this.name)
    this.replica.write('done', { task: t.id, epoch: held.epoch, commit: `sim-${t.index}-${this.index}`, paths: t.files }, now, t.index)
    this.replica.forget(t.id)
  }
}
