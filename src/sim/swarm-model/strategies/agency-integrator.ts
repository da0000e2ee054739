// Verified integration in the agency simulation, as src/repo does it: the
// whole suite runs on the merged tree before the shared branch moves.
//
// As the prompt has it, agents first integrate on their own (`agency
// integrate`, src/repo/integrate.ts): each verifies and pushes; a push that
// lost the race to the branch fetches, merges and verifies again, so the
// branch moves at most once per verify: here, one verify window at a time,
// the wait for it spent re-verifying (waste). When integrations pile up
// (`pileUp` of them waiting for the branch at once), an agent becomes the
// integrator (`agency integrator`, src/repo/integrator.ts) and from then on
// agents request integration (`agency request-integration`) and wait for
// their batch: holders and assistants alike (a merged integration answering
// an assistant's request counts as landed by it). The integrator takes up to
// `batchMax` requests, one per task (the first in log order; a later one for
// the same task waits for the next batch, where the fence refuses it once
// the task landed), merges and verifies the
// batch once, on a red batch bisects to the changes that break other tests
// (one verify per bisection step) and lands the rest in one push; it starts
// the next batch at once, or polls every `batchEveryMs` when none waits.
// Without batching (the ablation) nobody becomes the integrator.
//
// Modelling shortcut: the integrator's verify runs count as machine time,
// not as the time of the agent that runs the integrator.

import type { RunRecorder } from '../../../experiment/run-recorder.js'
import type { Scheduler } from '../../engine/scheduler.js'

export interface IntegrationRequest {
  /** the task the change is for: a batch takes one request per task */
  task: number
  /** the change breaks other tests: a verify of a tree with it is red */
  breaks: boolean
  /** at the end of its verify: green (it landed) or red (it goes back to its author, who waited for it) */
  then: (green: boolean) => void
  /** run by the author's daemon in the background (backgroundVerify): the wait for the branch is machine time, not its author's */
  machine?: boolean
}

export interface IntegratorInit {
  scheduler: Scheduler
  recorder: RunRecorder
  verifyMs: number
  batching: boolean
  batchEveryMs: number
  batchMax: number
  /** direct integrations waiting for the branch at once that make an agent become the integrator */
  pileUp: number
}

export class SimIntegrator {
  private readonly o: IntegratorInit
  private readonly queue: IntegrationRequest[] = []
  private running = false
  private lastBatchAt = -Infinity
  /** direct integration: when the branch is next free for an uncontested verify window */
  private branchFreeAt = 0
  /** direct integrations waiting for the branch now */
  private waitingDirect = 0
  /** an agent runs `agency integrator`: requests go to it */
  integratorLive = false

  constructor(init: IntegratorInit) {
    this.o = init
  }

  request(r: IntegrationRequest): void {
    if (!this.integratorLive) {
      this.alone(r)
      return
    }
    this.queue.push(r)
    if (!this.running) this.schedule()
  }

  private alone(r: IntegrationRequest): void {
    const { scheduler, recorder, verifyMs } = this.o
    const now = scheduler.now
    const start = Math.max(now, this.branchFreeAt)
    this.branchFreeAt = start + verifyMs
    if (start > now) {
      this.waitingDirect++
      scheduler.at(start, () => {
        this.waitingDirect--
      })
      if (this.o.batching && this.waitingDirect >= this.o.pileUp && !this.integratorLive) {
        this.integratorLive = true
        recorder.bump('integratorStartedAtMin', Math.round(now / 60_000))
      }
    }
    if (r.machine !== true) recorder.spend('verifyWait', start - now)
    recorder.bump('verifyRuns', 1 + Math.floor((start - now) / verifyMs))
    scheduler.at(start + verifyMs, () => {
      if (r.breaks) recorder.bump('verifyCaught')
      r.then(!r.breaks)
    })
  }

  private schedule(): void {
    const { scheduler } = this.o
    this.running = true
    scheduler.at(Math.max(scheduler.now, this.lastBatchAt + this.o.batchEveryMs), () => {
      this.batch()
    })
  }

  /** Requests wait for the integrator rather than racing to the branch. */
  get queued(): boolean {
    return this.integratorLive
  }

  /** Up to batchMax requests in queue order, one per task; the others stay queued. */
  private take(): IntegrationRequest[] {
    const batch: IntegrationRequest[] = []
    const tasks = new Set<number>()
    const rest: IntegrationRequest[] = []
    for (const r of this.queue) {
      if (batch.length < this.o.batchMax && !tasks.has(r.task)) {
        batch.push(r)
        tasks.add(r.task)
      } else rest.push(r)
    }
    this.queue.length = 0
    this.queue.push(...rest)
    return batch
  }

  private batch(): void {
    const { scheduler, recorder, verifyMs } = this.o
    this.lastBatchAt = scheduler.now
    const batch = this.take()
    const red = batch.filter(r => r.breaks).length
    // one verify of the batch; each bad change costs a bisection down to it
    const runs = 1 + red * Math.ceil(Math.log2(Math.max(2, batch.length)))
    recorder.bump('batches')
    recorder.bump('verifyRuns', runs)
    if (red > 0) recorder.bump('verifyCaught', red)
    scheduler.after(runs * verifyMs, () => {
      for (const r of batch) r.then(!r.breaks)
      this.running = false
      this.lastBatchAt = -Infinity // the loop starts the next batch at once; it polls only when none waits
      if (this.queue.length > 0) this.schedule()
    })
  }
}
