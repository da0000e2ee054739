// A scripted agent that follows agency's loop (prompts/agent.md) on its own
// replica's board: ready → claim → the claim protocol's answer after the
// settle window (HELD, or LOST and released) → search the findings for failed
// approaches → attempt → record the failure and try again, or pay what the
// hazards ask (merge-hazards.ts), run the suite in its workspace, integrate
// verified and fenced (agency-integrator.ts) and mark done. As in agentd,
// only the integration holds the agent up: it waits for its own verify (or
// its batch, with an integrator), as `agency integrate` does, then marks the
// task done and picks the next. A review does not gate anything: the author
// asks for one when its change is one others build on and goes on; a
// verdict that finds a defect comes to it later, and it fixes the defect
// before its next attempt. A peer's review request comes before a new task.
// With nothing ready, it helps a held task on the critical path
// (agency-helpers.ts). Each mechanism can be switched off
// (agency-mechanisms.ts).

import type { ClaimVerdict } from '../../../core/board/claim-protocol.js'
import { onItsWay } from '../../../core/board/carry-on.js'
import { claimOutcome } from '../../../core/board/settle.js'
import { isAgencyError } from '../../../core/errors.js'
import { Finding } from '../../../gen/agency/v1/log.js'
import type { Random } from '../../engine/random.js'
import type { Replica } from '../replica.js'
import type { Attempt, ProjectTask } from '../workload.js'
import type { HelperAgent, ReviewRequest, SwarmContext } from './agency-types.js'
import { integrateInBackground, type BackgroundHost } from './background-verify.js'
import { idleRepair, preMerge } from './merge-hazards.js'

const LOST_BACKOFF_MS = 60_000
const PICK_TRIES = 12
/** a helper handed a task asks for it this often until the release has reached its daemon */
const HANDOFF_RETRY_MS = 1_000
const HANDOFF_TRIES = 30

export class AgencyAgent implements HelperAgent {
  readonly index: number
  private readonly swarm: SwarmContext
  private readonly replica: Replica
  readonly rng: Random
  /** bumps on crash: callbacks scheduled by an earlier life do nothing */
  private life = 0
  /** bumps when an attempt is stopped: its end does nothing */
  private attemptToken = 0
  private frozen = false
  private readonly lostUntil = new Map<number, number>()
  private readonly ownTraps = new Set<string>()
  private readonly trapCache = new Map<number, { version: number; known: ReadonlySet<string> }>()
  /** the task it holds and is attempting */
  private working: { task: ProjectTask; epoch: number; claimedAt: number; start: number; endAt: number; attempt: Attempt } | undefined
  /** the claim waiting for its answer */
  private claiming: { task: ProjectTask; at: number } | undefined
  /** an idle agent waiting to be woken (a review to do) */
  private idleToken = 0
  /** fixes owed to its own changes (a defect a review found), done before the next attempt */
  private debtMs = 0
  /**
   * tasks whose integration request waits in the integrator's queue while this agent works on its next (settings.carryOn); the daemon's, so
   * kept across a crash
   */
  private readonly pipelined = new Set<number>()
  /** task -> the id of its carried-on integration_request entry, which the landing's integration answers */
  private readonly requests = new Map<number, string>()
  /** what the daemon's notices send it back to (a background verify that was red), before any new task */
  private readonly returns: Array<() => void> = []
  /** its daemon's side of settings.backgroundVerify */
  private readonly background: BackgroundHost
  /** down (crashed, not restarted yet) */
  private down = false
  /** carried-on requests that landed while it was down: its daemon writes their done when it starts again */
  private landedWhileDown: Array<() => void> = []
  idle = false

  constructor(index: number, swarm: SwarmContext, replica: Replica, rng: Random) {
    this.index = index
    this.swarm = swarm
    this.replica = replica
    this.rng = rng
    // A loss of a claim it holds shows when the agent next looks (finish, integrate).
    replica.listen({
      verdict: v => {
        this.settle(v)
      },
      notice: () => {}
    })
    this.background = {
      swarm,
      // the agent goes on: with its next task, or (a fix it paused an attempt for) with that attempt
      carry: t => {
        this.pipelined.add(t.index)
        this.swarm.recorder.bump('carriedOn')
        if (this.working === undefined)
          this.later(0, () => {
            this.pick()
          })
      },
      writeRequest: t => {
        this.writeRequest(t, this.swarm.scheduler.now)
      },
      refused: t => {
        this.refuseRequest(t)
      },
      first: (ms, fn) => {
        if (this.pauseAttempt(ms)) {
          this.later(ms, fn)
          return
        }
        this.returns.push(() => {
          this.later(ms, fn)
        })
        this.wake()
      },
      later: (ms, fn) => {
        this.later(ms, fn)
      },
      whenUp: fn => {
        if (this.down) this.landedWhileDown.push(fn)
        else fn()
      }
    }
  }

  get name(): string {
    return this.replica.name
  }

  get slow(): boolean {
    return this.swarm.project.hazards.slowAgent(this.index)
  }

  start(at: number): void {
    this.later(at - this.swarm.scheduler.now, () => {
      this.pick()
    })
  }

  /** Stops acting (tests use it to let the replicas settle). */
  freeze(): void {
    this.frozen = true
  }

  crash(now: number): void {
    this.life++
    this.claiming = undefined
    this.idle = false
    this.down = true
    if (this.working !== undefined) {
      this.swarm.recorder.worked(this.working.task.id, this.index, this.working.start, now)
      this.swarm.helpers.holderGone(this.working.task.index, this)
    }
    this.working = undefined
    // a background verify not yet handed to the branch dies with the process: the task is current again at restart
    for (const task of [...this.pipelined]) if (!this.requests.has(task)) this.pipelined.delete(task)
  }

  /** After the process restarts: resume a task the board says it still holds, else pick. */
  restart(): void {
    this.life++
    const now = this.swarm.scheduler.now
    this.replica.drain(now)
    this.down = false
    for (const land of this.landedWhileDown.splice(0)) land()
    // a task on its way (carry-on) is not the one to resume (core/board/carry-on)
    const board = this.replica.board
    const mine = board.heldBy(this.name).find(h => !onItsWay(board, this.name, h.task))
    if (mine !== undefined) this.work(this.swarm.project.task(mine.task), mine.epoch, now)
    else this.pick()
  }

  /** A peer asked for a review: an idle agent takes it now. */
  wake(): void {
    if (!this.idle) return
    this.idle = false
    this.idleToken++
    this.pick()
  }

  later(ms: number, fn: () => void): void {
    const life = this.life
    this.swarm.scheduler.after(ms, () => {
      if (life === this.life && !this.frozen) fn()
    })
  }

  pick(): void {
    const now = this.swarm.scheduler.now
    const board = this.replica.board
    this.idle = false
    this.replica.drain(now)
    // the author names a reviewer (agency experts); a request that waits on it comes first, as the prompt's loop has it
    const back = this.returns.shift()
    if (back !== undefined) {
      back()
      return
    }
    const review = this.swarm.takeReview(this.index)
    if (review !== undefined) {
      this.review(review)
      return
    }
    for (const task of this.candidates(now)) {
      const t = this.swarm.project.tasks[task]
      const view = board.task(t.id, now)
      if (view === undefined || (view.state !== 'open' && view.state !== 'expired')) continue
      if (!view.deps.every(d => board.doneRecord(d) !== undefined)) continue
      // handed to another agent by speed: agentd's claim --next leaves it to its receiver for a while
      if (view.handoff?.to !== undefined && view.handoff.to !== '' && this.replica.handedAway(t.id, now)) continue
      if (this.claim(t, now)) return
    }
    if (this.swarm.helpers.help(this, this.replica, now)) return
    if (
      idleRepair(this.swarm, this.index, () => {
        this.pick()
      })
    )
      return
    this.idle = true
    const token = ++this.idleToken
    this.later(this.swarm.pollMs * this.rng.between(0.5, 1.5), () => {
      if (token === this.idleToken) this.pick()
    })
  }

  private claim(t: ProjectTask, now: number): boolean {
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
  private *candidates(now: number): Generator<number> {
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
  private settle(v: ClaimVerdict): void {
    const c = this.claiming
    if (c === undefined || c.task.id !== v.task || this.frozen) return
    this.claiming = undefined
    const now = this.swarm.scheduler.now
    this.swarm.recorder.settled(now - c.at)
    if (v.outcome === 'HELD') {
      this.swarm.claimHeld(this.replica, c.task, now)
      this.work(c.task, v.epoch, now)
      return
    }
    this.swarm.recorder.bump('claimsLost')
    this.lostUntil.set(c.task.index, now + LOST_BACKOFF_MS)
    this.pick()
  }

  /** A slow holder released `t` to this agent (hand-off by speed): claim it once the release has arrived. */
  takeOver(t: ProjectTask, tries = 0): void {
    this.later(HANDOFF_RETRY_MS, () => {
      const now = this.swarm.scheduler.now
      this.replica.drain(now)
      const view = this.replica.board.task(t.id, now)
      if (view !== undefined && (view.state === 'open' || view.state === 'expired') && this.claim(t, now)) return
      if (view?.state === 'claimed' && tries < HANDOFF_TRIES) {
        this.takeOver(t, tries + 1)
        return
      }
      this.pick()
    })
  }

  /** The traps it knows of in `t`'s area: its own, and the failures peers recorded that its daemon holds (kept until either grows). */
  knownTraps(t: ProjectTask): ReadonlySet<string> {
    const version = this.replica.findingsFolded * 65_536 + this.ownTraps.size
    const cached = this.trapCache.get(t.area)
    if (cached !== undefined && cached.version === version) return cached.known
    const known = new Set(this.ownTraps)
    if (this.swarm.mechanisms.findings) {
      const area = this.swarm.project.areas[t.area].name
      for (const hit of this.replica.searchFindings({ kind: 'failure', tag: area })) {
        for (const tag of hit.finding.tags) if (tag.startsWith('approach:')) known.add(`${area}/${tag.slice(9)}`)
      }
    }
    this.trapCache.set(t.area, { version, known })
    return known
  }

  /**
   * Approaches not to take on `t`: the failures it knows of, and those its
   * assistants announced (their notices reach it) while that leaves one; a
   * holder never waits for its assistants.
   */
  private avoiding(t: ProjectTask): ReadonlySet<string> {
    const known = this.knownTraps(t)
    const helpers = this.swarm.helpers.helpersOf(t.index)
    if (helpers.length === 0) return known
    const area = this.swarm.project.areas[t.area].name
    const avoid = new Set([...known, ...helpers.map(h => `${area}/${h.approach}`)])
    return this.swarm.project.areas[t.area].approaches.some(a => !avoid.has(`${area}/${a}`)) ? avoid : known
  }

  private work(t: ProjectTask, epoch: number, claimedAt: number): void {
    const { scheduler, project, progress } = this.swarm
    const now = scheduler.now
    this.replica.drain(now)
    const avoid = this.avoiding(t)
    const slowdown = project.hazards.slowdown(this.index, t.index, progress.nextAttempt(t))
    const attempt = project.attempt(this.rng, t, avoid, slowdown)
    attempt.durationMs += this.debtMs
    this.debtMs = 0
    this.working = { task: t, epoch, claimedAt, start: now, endAt: now + attempt.durationMs, attempt }
    this.swarm.helpers.holding(t.index, this, claimedAt, now, attempt.approach)
    this.scheduleFinish()
  }

  private scheduleFinish(): void {
    const w = this.working
    if (w === undefined) return
    const token = ++this.attemptToken
    this.later(w.endAt - this.swarm.scheduler.now, () => {
      if (token === this.attemptToken) this.finish(w.task, w.epoch, w.claimedAt, w.attempt, w.start)
    })
  }

  /**
   * Work that comes before the attempt under way (a notice that a carried
   * change was red: the prompt sends the agent back to it first): the attempt
   * pauses for `ms`, which is not counted as attempt time. False when it is
   * not attempting anything.
   */
  private pauseAttempt(ms: number): boolean {
    const w = this.working
    if (w === undefined) return false
    w.start += ms
    w.endAt += ms
    this.scheduleFinish()
    return true
  }

  /** The holder stops its attempt at `t` and releases the task to a faster agent (hand-off by speed). The time it spent is `kind`. */
  yieldTask(t: ProjectTask, kind: 'helping' | 'lost', to = ''): boolean {
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
    this.replica.write('release', { task: t.id, epoch: mine.epoch, note: 'handed to a faster agent', branch: '', to }, now, t.index)
    this.replica.forget(t.id)
    this.swarm.recorder.bump('handoffs')
    this.lostUntil.set(t.index, now + LOST_BACKOFF_MS)
    this.later(0, () => {
      this.pick()
    })
    return true
  }

  /**
   * An assistant's integration finished `t` (claim_lost: done by an assistant): the holder stops; what it spent since its attempt began is
   * redundancy.
   */
  taskDoneByAssistant(t: ProjectTask): void {
    const w = this.working
    if (w === undefined || w.task.index !== t.index) return // in its own pipeline: its land is fenced
    this.attemptToken++
    this.working = undefined
    this.swarm.recorder.spend('helping', this.swarm.scheduler.now - w.start)
    this.swarm.recorder.bump('holdersStoppedByAssist')
    this.replica.forget(t.id)
    this.later(0, () => {
      this.pick()
    })
  }

  /**
   * As an assistant whose attempt at `t` passed: what the hazards ask before
   * a merge, then its assist branch goes the way a holder's change does:
   * with an integrator announced, the suite on its own merge and `agency
   * request-integration` (the integrator's batch lands it, one request per
   * task per batch, the first in log order); without one, `agency integrate`
   * (its own verify and the race to the branch). If it lands first, the
   * merged integration counts as landed by it at the holder's epoch and its
   * daemon writes the task's done; the holder's request is then fenced.
   */
  integrateAssist(t: ProjectTask, attempt: Attempt, start: number, then: (landed: boolean) => void): void {
    const swarm = this.swarm
    const pre = preMerge(swarm, t, this.index, start, attempt.durationMs, (a, b) => swarm.agreed(a, b))
    const attemptEnd = swarm.scheduler.now
    this.later(pre.ms, () => {
      if (pre.repair) swarm.progress.repairAround(t, swarm.scheduler.now)
      if (pre.ms > 0) swarm.recorder.worked(t.id, this.index, attemptEnd, swarm.scheduler.now, true)
      this.integrateChange(
        t,
        verified => {
          this.landAssist(t, then, verified)
        },
        true
      )
    })
  }

  private landAssist(t: ProjectTask, then: (landed: boolean) => void, verified: boolean): void {
    const { scheduler, recorder, progress } = this.swarm
    const now = scheduler.now
    this.replica.drain(now)
    const board = this.replica.board
    const holder = board.holder(t.id)
    // the remote's task fence: the first integration of the task at the epoch wins
    if (progress.passed(t.id) || holder === undefined) {
      recorder.bump('fencedMerges')
      then(false)
      this.pick()
      return
    }
    progress.merge(t, this.index, now, { verified })
    const commit = `sim-${t.index}-${this.index}`
    this.replica.write(
      'integration',
      { task: t.id, epoch: holder.epoch, commit, result: 'merged', paths: t.files, request: '' },
      now,
      t.index
    )
    this.replica.write('done', { task: t.id, epoch: holder.epoch, commit, paths: t.files }, now, t.index)
    then(true)
    this.swarm.helpers.taskDone(t.index, this)
    this.askReview(t)
    this.pick()
  }

  private finish(t: ProjectTask, epoch: number, claimedAt: number, attempt: Attempt, start: number): void {
    const { scheduler, recorder } = this.swarm
    const now = scheduler.now
    this.replica.drain(now)
    if (attempt.result === 'pass') {
      this.swarm.helpers.holderPassed(t.index)
      this.passed(t, epoch, attempt, start, start)
      return
    }
    this.working = undefined
    recorder.worked(t.id, this.index, start, now)
    if (attempt.result === 'trap') {
      recorder.trapHit(attempt.trap, start, attempt.durationMs)
      this.recordTrap(t, attempt, now)
    }
    if (claimOutcome(this.replica.board, t.id, this.name, epoch).outcome === 'HELD') this.work(t, epoch, claimedAt)
    else {
      this.swarm.helpers.holderGone(t.index, this)
      this.pick()
    }
  }

  recordTrap(t: ProjectTask, attempt: Attempt, now: number): void {
    this.ownTraps.add(attempt.trap)
    const area = this.swarm.project.areas[t.area].name
    this.replica.writeFinding(
      Finding.fromPartial({
        kind: 'failure',
        text: `${attempt.approach} does not work in ${area}: the hidden tests of ${t.id} fail with it`,
        paths: t.files,
        tags: [area, `approach:${attempt.approach}`, t.id]
      }),
      now
    )
    this.swarm.recorder.trapRecorded(attempt.trap, now)
  }

  /**
   * A passing attempt (started at `attemptStart`; this agent's own work on it
   * from `workStart`): what the hazards ask before a merge, then, as the
   * prompt's loop has it, it integrates: it waits for its integration, marks
   * the task done, asks for a review if others build on the change (and does
   * not wait for it), and picks the next.
   */
  private passed(t: ProjectTask, epoch: number, attempt: Attempt, attemptStart: number, workStart: number): void {
    const swarm = this.swarm
    // from here the agent is in its change's pipeline, no longer attempting: an assistant's landing fences its merge instead of stopping it
    this.working = undefined
    const pre = preMerge(swarm, t, this.index, attemptStart, attempt.durationMs, (a, b) => swarm.agreed(a, b))
    const next = (): void => {
      if (pre.repair) swarm.progress.repairAround(t, swarm.scheduler.now)
      swarm.recorder.worked(t.id, this.index, workStart, swarm.scheduler.now)
      if (
        swarm.mechanisms.verifiedIntegration &&
        swarm.settings.backgroundVerify > 0 &&
        (swarm.settings.backgroundVerify >= 2 || !swarm.integrator.queued)
      )
        integrateInBackground(this.background, t, () => {
          this.land(t, epoch, true)
        })
      else
        this.integrateChange(t, verified => {
          this.land(t, epoch, verified)
        })
    }
    if (pre.ms > 0) this.later(pre.ms, next)
    else next()
  }

  /** Work the agent owes (fixing its own change after a review): it does it before its next attempt. */
  private owe(ms: number, then: () => void): void {
    this.debtMs += ms
    this.later(ms, then)
  }

  /**
   * The prompt: ask for a review when the change defines something others
   * build on (here: the task has dependents). The author does not wait; a
   * verdict that finds the defect comes to it later, and the fix lands before
   * its next attempt (a dependent that built on the defect before then pays
   * for it as before).
   */
  private askReview(t: ProjectTask): void {
    const swarm = this.swarm
    if (!swarm.mechanisms.reviews || swarm.agentCount < 2 || t.dependentIndices.length === 0) return
    if (swarm.settings.reviewWhenIdle > 0 && !swarm.peerIdle(this.index)) return
    swarm.requestReview({
      task: t,
      author: this.index,
      round: 0,
      then: caught => {
        if (!caught) return
        const fix = swarm.project.hazards.options.reviewFixFraction * t.effortMs
        swarm.recorder.spend('reviewFix', fix)
        this.owe(fix, () => {
          swarm.progress.fixDefect(t.index)
        })
      }
    })
  }

  /** Does a peer's review: the reviewer's time, then the verdict. */
  private review(r: ReviewRequest): void {
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

  /**
   * Verified integration. With an integrator (batching): the agent runs the
   * suite on its own merge first (the prompt's "run the goal's test command"),
   * fixes what it breaks, requests integration and waits for its batch.
   * Without: `agency integrate`, its own verify and the race to the branch.
   * Either way it waits, as the real command does; a red verify sends the
   * change back to it to fix and integrate again. `land(verified)` when it
   * is green (or at once, unverified, when the mechanism is off).
   */
  private integrateChange(t: ProjectTask, land: (verified: boolean) => void, assist = false, fixed = false): void {
    const swarm = this.swarm
    if (!swarm.mechanisms.verifiedIntegration) {
      land(false)
      return
    }
    if (swarm.integrator.queued && !fixed) {
      const { verifyMs, reviewFixFraction } = swarm.project.hazards.options
      swarm.recorder.bump('preVerifies')
      const breaks = swarm.project.hazards.breaks(t.index)
      if (breaks) {
        swarm.recorder.bump('verifyCaught')
        swarm.recorder.spend('breakFix', reviewFixFraction * t.effortMs)
      }
      swarm.recorder.spend('verify', verifyMs)
      this.later(verifyMs + (breaks ? reviewFixFraction * t.effortMs : 0), () => {
        this.integrateChange(t, land, assist, true)
      })
      return
    }
    const breaks = !fixed && swarm.project.hazards.breaks(t.index)
    const life = this.life
    const asked = swarm.scheduler.now
    const queued = swarm.integrator.queued
    if (assist) swarm.recorder.bump(queued ? 'assistsRequested' : 'assistsIntegrated')
    // Carry-on (core/board/carry-on, as agentd): a holder goes on with its next task while its request waits
    // for its batch, and its daemon writes the done when it lands, after a crash too (at the next start). A
    // queued request was verified by its author first, so its batch lands it (`breaks` is false here; agentd's
    // holder told of a failure goes back to the task first, which a queued request never needs in this model).
    const carryOn = queued && !assist && !breaks && swarm.settings.carryOn > 0
    swarm.integrator.request({
      task: t.index,
      breaks,
      then: green => {
        if (this.frozen) return
        if (carryOn && this.down) {
          this.landedWhileDown.push(() => {
            land(true)
          })
          return
        }
        if (life !== this.life && !carryOn) return
        // with an integrator the wait for the batch; alone, its own verify (the race is the integrator's verifyWait)
        if (queued && !carryOn) swarm.recorder.spend('integrationWait', swarm.scheduler.now - asked)
        else if (!queued) swarm.recorder.spend('verify', swarm.project.hazards.options.verifyMs)
        if (green) {
          land(true)
          return
        }
        const fix = swarm.project.hazards.options.reviewFixFraction * t.effortMs
        swarm.recorder.spend('breakFix', fix)
        this.later(fix, () => {
          this.integrateChange(t, land, assist, true)
        })
      }
    })
    if (carryOn) {
      swarm.recorder.bump('carriedOn')
      this.writeRequest(t, asked)
      this.pipelined.add(t.index)
      this.later(0, () => {
        this.pick()
      })
    }
  }

  /** Its carried-on integration_request for `t` on the log as in agentd, so the board's carry-on rule sees the task on its way. */
  private writeRequest(t: ProjectTask, at: number): void {
    const held = this.replica.board.holder(t.id)
    if (held?.holder !== this.name) return
    const request = this.replica.write(
      'integration_request',
      { task: t.id, epoch: held.epoch, ref: `refs/agency/${this.name}/${t.id}`, commit: `sim-${t.index}-${this.index}` },
      at,
      t.index
    )
    if (request.board !== undefined) this.requests.set(t.index, request.board.id)
  }

  /**
   * A carried change did not land (a red verify): the daemon answers its request as failed, so the task is this agent's current task again.
   */
  private refuseRequest(t: ProjectTask): void {
    this.pipelined.delete(t.index)
    const request = this.requests.get(t.index)
    if (request === undefined) return
    this.requests.delete(t.index)
    const held = this.replica.board.holder(t.id)
    this.replica.write(
      'integration',
      { task: t.id, epoch: held?.epoch ?? 0, commit: '', result: 'failed', paths: [], request },
      this.swarm.scheduler.now,
      t.index
    )
  }

  /** Fenced integration: the merge goes in only while this agent still holds the task's epoch; then done, and the next task. */
  private land(t: ProjectTask, epoch: number, verified: boolean): void {
    const { scheduler, recorder, progress } = this.swarm
    const now = scheduler.now
    this.replica.drain(now)
    const board = this.replica.board
    // a carried-on request lands while the agent works on its next task: its daemon writes the done, the agent goes on
    const next = this.pipelined.delete(t.index)
      ? () => {}
      : () => {
          this.pick()
        }
    const request = this.requests.get(t.index) ?? ''
    this.requests.delete(t.index)
    if (progress.passed(t.id) || claimOutcome(board, t.id, this.name, epoch).outcome !== 'HELD') {
      // fenced: the claim was lost, or an assistant's integration landed the task first
      this.swarm.helpers.holderGone(t.index, this)
      recorder.bump('fencedMerges')
      this.replica.forget(t.id)
      next()
      return
    }
    progress.merge(t, this.index, now, { verified })
    this.swarm.helpers.taskDone(t.index, this)
    this.askReview(t)
    const held = board.checkDoable(t.id, this.name)
    // the integrator's answer to a carried-on request (written here: the sim's integrator is a model, not a replica)
    if (request !== '')
      this.replica.write(
        'integration',
        { task: t.id, epoch: held.epoch, commit: `sim-${t.index}-${this.index}`, result: 'merged', paths: t.files, request },
        now,
        t.index
      )
    this.replica.write('done', { task: t.id, epoch: held.epoch, commit: `sim-${t.index}-${this.index}`, paths: t.files }, now, t.index)
    this.replica.forget(t.id)
    next()
  }
}
