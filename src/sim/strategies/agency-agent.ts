// A scripted agent that follows agency's loop on its own replica's board:
// ready → claim → the claim protocol's answer after the settle window (HELD,
// or LOST and released) → search the findings for failed approaches →
// attempt → record the failure and try again, or merge (fenced: only while
// still holding) and mark done.

import type { ClaimVerdict } from '../../core/board/claim-protocol.js'
import { claimOutcome } from '../../core/board/settle.js'
import { isAgencyError } from '../../core/errors.js'
import { Finding } from '../../gen/agency/v1/log.js'
import type { Random } from '../random.js'
import type { Replica } from '../replica.js'
import type { Attempt, ProjectTask } from '../workload.js'
import type { AgencySwarm } from './agency.js'

const LOST_BACKOFF_MS = 60_000
const PICK_TRIES = 12

export class AgencyAgent {
  readonly index: number
  private readonly swarm: AgencySwarm
  private readonly replica: Replica
  private readonly rng: Random
  /** bumps on crash: callbacks scheduled by an earlier life do nothing */
  private life = 0
  private frozen = false
  private readonly lostUntil = new Map<number, number>()
  private readonly ownTraps = new Set<string>()
  private working: { task: ProjectTask, start: number } | undefined
  /** the claim waiting for its answer */
  private claiming: { task: ProjectTask, at: number } | undefined

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
    if (this.working !== undefined) this.swarm.recorder.worked(this.working.task.id, this.index, this.working.start, now)
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

  private later (ms: number, fn: () => void): void {
    const life = this.life
    this.swarm.scheduler.after(ms, () => { if (life === this.life && !this.frozen) fn() })
  }

  private pick (): void {
    const now = this.swarm.scheduler.now
    const board = this.replica.board
    this.replica.drain(now)
    for (const task of this.candidates(now)) {
      const t = this.swarm.project.tasks[task]
      const view = board.task(t.id, now)
      if (view === undefined || (view.state !== 'open' && view.state !== 'expired')) continue
      if (!view.deps.every(d => board.doneRecord(d) !== undefined)) continue
      this.claiming = { task: t, at: now }
      let ticket
      try {
        ticket = this.replica.claim(t.id, now)
      } catch (err) {
        this.claiming = undefined
        if (!isAgencyError(err)) throw err
        continue
      }
      if (ticket.takeover?.expired === true) this.swarm.recorder.bump('takeovers')
      return
    }
    this.later(this.swarm.pollMs * this.rng.between(0.5, 1.5), () => { this.pick() })
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
    const now = this.swarm.scheduler.now
    this.swarm.recorder.settled(now - c.at)
    if (v.outcome === 'HELD') {
      this.swarm.claimHeld(this.replica, c.task, now)
      this.work(c.task, v.epoch)
      return
    }
    this.swarm.recorder.bump('claimsLost')
    this.lostUntil.set(c.task.index, now + LOST_BACKOFF_MS)
    this.pick()
  }

  private knownTraps (t: ProjectTask): Set<string> {
    const area = this.swarm.project.areas[t.area].name
    const known = new Set(this.ownTraps)
    for (const hit of this.replica.searchFindings({ kind: 'failure', tag: area })) {
      for (const tag of hit.finding.tags) if (tag.startsWith('approach:')) known.add(`${area}/${tag.slice(9)}`)
    }
    return known
  }

  private work (t: ProjectTask, epoch: number): void {
    const now = this.swarm.scheduler.now
    this.replica.drain(now)
    const attempt = this.swarm.project.attempt(this.rng, t, this.knownTraps(t))
    this.working = { task: t, start: now }
    this.later(attempt.durationMs, () => { this.finish(t, epoch, attempt, now) })
  }

  private finish (t: ProjectTask, epoch: number, attempt: Attempt, start: number): void {
    const { scheduler, recorder, progress, project } = this.swarm
    const now = scheduler.now
    this.replica.drain(now)
    const stillHeld = (): boolean => claimOutcome(this.replica.board, t.id, this.name, epoch).outcome === 'HELD'
    if (attempt.result === 'pass') {
      // Another agent merged into these files meanwhile: rebase first.
      if (progress.needsRebase(t, this.index, start)) {
        recorder.bump('rebases')
        this.later(attempt.durationMs * project.options.rebaseFraction, () => { this.integrate(t, epoch, start) })
        return
      }
      this.integrate(t, epoch, start)
      return
    }
    this.working = undefined
    recorder.worked(t.id, this.index, start, now)
    if (attempt.result === 'trap') {
      recorder.trapHit(attempt.trap, start)
      this.ownTraps.add(attempt.trap)
      const area = project.areas[t.area].name
      this.replica.writeFinding(Finding.fromPartial({
        kind: 'failure',
        text: `${attempt.approach} does not work in ${area}: the hidden tests of ${t.id} fail with it`,
        paths: t.files,
        tags: [area, `approach:${attempt.approach}`, t.id]
      }), now)
      recorder.trapRecorded(attempt.trap, now)
    }
    if (stillHeld()) this.work(t, epoch)
    else this.pick()
  }

  /** Fenced integration: the merge goes in only while this agent still holds the task's epoch. */
  private integrate (t: ProjectTask, epoch: number, start: number): void {
    const { scheduler, recorder, progress } = this.swarm
    const now = scheduler.now
    this.replica.drain(now)
    this.working = undefined
    recorder.worked(t.id, this.index, start, now)
    const board = this.replica.board
    if (claimOutcome(board, t.id, this.name, epoch).outcome !== 'HELD') {
      recorder.bump('fencedMerges')
      this.pick()
      return
    }
    progress.merge(t, this.index, now)
    const held = board.checkDoable(t.id, this.name)
    this.replica.write('done', { task: t.id, epoch: held.epoch, commit: `sim-${t.index}-${this.index}`, paths: t.files }, now, t.index)
    this.replica.forget(t.id)
    this.pick()
  }
}
