// Verified integration in the agency simulation, as src/repo does it: the
// whole suite runs on the merged tree before the shared branch moves.
//
// With batching (src/repo/integrator.ts) agents queue their branches; an
// integrator merges up to `batchMax` of them, verifies the batch once, on a
// red batch bisects to the changes that break other tests (one verify per
// bisection step) and lands the rest in one push. Without batching every
// agent verifies on its own and pushes (src/repo/integrate.ts); a push that
// lost the race to the branch fetches, merges and verifies again, so the
// branch moves at most once per verify: here, one verify window at a time,
// the wait for it spent re-verifying (waste).

import type { RunRecorder } from '../run-recorder.js'
import type { Scheduler } from '../scheduler.js'

export interface IntegrationRequest {
  /** the change breaks other tests: a verify of a tree with it is red */
  breaks: boolean
  /** at the end of its verify: green (it landed) or red (it goes back to its author); `agentMs`: the author's own time it took (verifying and re-verifying itself) */
  then: (green: boolean, agentMs: number) => void
}

export interface IntegratorInit {
  scheduler: Scheduler
  recorder: RunRecorder
  verifyMs: number
  batching: boolean
  batchEveryMs: number
  batchMax: number
}

export class SimIntegrator {
  private readonly o: IntegratorInit
  private readonly queue: IntegrationRequest[] = []
  private running = false
  private lastBatchAt = -Infinity
  /** no batching: when the branch is next free for an uncontested verify window */
  private branchFreeAt = 0

  constructor (init: IntegratorInit) {
    this.o = init
  }

  request (r: IntegrationRequest): void {
    if (!this.o.batching) { this.alone(r); return }
    this.queue.push(r)
    if (!this.running) this.schedule()
  }

  private alone (r: IntegrationRequest): void {
    const { scheduler, recorder, verifyMs } = this.o
    const now = scheduler.now
    const start = Math.max(now, this.branchFreeAt)
    this.branchFreeAt = start + verifyMs
    recorder.spend('verifyWait', start - now)
    recorder.bump('verifyRuns', 1 + Math.floor((start - now) / verifyMs))
    scheduler.at(start + verifyMs, () => {
      if (r.breaks) recorder.bump('verifyCaught')
      r.then(!r.breaks, start - now + verifyMs)
    })
  }

  private schedule (): void {
    const { scheduler } = this.o
    this.running = true
    scheduler.at(Math.max(scheduler.now, this.lastBatchAt + this.o.batchEveryMs), () => { this.batch() })
  }

  private batch (): void {
    const { scheduler, recorder, verifyMs } = this.o
    this.lastBatchAt = scheduler.now
    const batch = this.queue.splice(0, this.o.batchMax)
    const red = batch.filter(r => r.breaks).length
    // one verify of the batch; each bad change costs a bisection down to it
    const runs = 1 + red * Math.ceil(Math.log2(Math.max(2, batch.length)))
    recorder.bump('batches')
    recorder.bump('verifyRuns', runs)
    if (red > 0) recorder.bump('verifyCaught', red)
    scheduler.after(runs * verifyMs, () => {
      for (const r of batch) r.then(!r.breaks, 0)
      this.running = false
      if (this.queue.length > 0) this.schedule()
    })
  }
}
