// Baseline (c), a central manager that assigns tasks: one coordinator that
// every agent asks for work and reports to. Assignment is exact and the
// manager passes on every failed approach it has been told about, but every
// request is a round trip to it, and it handles one request at a time with a
// service time, so it is a queue that grows with the swarm. With a model
// behind it (a lead agent reading the state and answering), seconds per
// request is the honest order of magnitude; a plain job queue would be ms.
// Against the hazards it has its assignment only: one task per agent, merges
// that run the task's own test, no review, a stalled agent is waited for.

import { MANAGER_REQUEST_BYTES, MANAGER_RESPONSE_BYTES, MANAGER_TRAP_BYTES } from '../cost-model.js'
import { IndexedSet } from '../../engine/indexed-set.js'
import { ProjectProgress } from '../project-progress.js'
import { createRandom, type Random } from '../../engine/random.js'
import { RunRecorder, type RunResult } from '../../../experiment/run-recorder.js'
import { Scheduler } from '../../engine/scheduler.js'
import type { ProjectTask } from '../workload.js'
import { runAttempt, type AttemptContext } from './attempt-runner.js'
import { idleRepair } from './merge-hazards.js'
import { RUN_DEFAULTS, validateRun, type SwarmRunInit } from './common.js'

export interface CentralManagerInit extends SwarmRunInit {
  /** time the manager spends on one request */
  serviceMs?: number
  /** one-way latency to the manager, uniform in [min, max) */
  minLatencyMs?: number
  maxLatencyMs?: number
}

export const MANAGER_DEFAULTS = { serviceMs: 2_000, minLatencyMs: 5, maxLatencyMs: 50 } as const

export function runCentralManager(init: CentralManagerInit): RunResult {
  validateRun(init)
  const wallStart = performance.now()
  const o = { ...MANAGER_DEFAULTS, ...init }
  const { project, agents } = init
  const scheduler = new Scheduler()
  const recorder = new RunRecorder({
    strategy: 'manager',
    label: init.label ?? `central manager (${o.serviceMs / 1000} s/request)`,
    agents,
    tasks: project.tasks.length
  })
  const progress = new ProjectProgress(project, recorder)
  const ctx: AttemptContext = { scheduler, project, progress, recorder }
  const rng = createRandom(init.seed)

  // ---- the manager: what it has been told, and its queue ----
  const reportedDone = new Uint8Array(project.tasks.length)
  const assigned = new Uint8Array(project.tasks.length)
  const assignable = new IndexedSet<number>()
  for (const t of project.tasks) if (t.deps.length === 0) assignable.add(t.index)
  const traps = new Map<string, string[]>()
  const waiting: Array<(t: ProjectTask) => void> = []
  const mrng = rng.fork()
  let busyUntil = 0
  let busyMs = 0

  /** Queues a request; `handle` runs when the manager gets to it. */
  const request = (r: Random, handle: () => void): void => {
    recorder.count('manager requests', 1, MANAGER_REQUEST_BYTES)
    scheduler.after(r.between(o.minLatencyMs, o.maxLatencyMs), () => {
      const start = Math.max(scheduler.now, busyUntil)
      busyUntil = start + o.serviceMs
      busyMs += o.serviceMs
      scheduler.at(busyUntil, handle)
    })
  }
  const respond = (r: Random, trapsSent: number, then: () => void): void => {
    recorder.count('manager responses', 1, MANAGER_RESPONSE_BYTES + trapsSent * MANAGER_TRAP_BYTES)
    scheduler.after(r.between(o.minLatencyMs, o.maxLatencyMs), then)
  }
  const take = (): ProjectTask | undefined => {
    const i = assignable.pick(mrng)
    if (i === undefined) return undefined
    assignable.delete(i)
    assigned[i] = 1
    return project.tasks[i]
  }
  const trapsFor = (t: ProjectTask): string[] => traps.get(project.areas[t.area].name) ?? []
  const markDone = (t: ProjectTask): void => {
    reportedDone[t.index] = 1
    for (const d of project.dependents(t.id)) {
      const dt = project.task(d)
      if (assigned[dt.index] === 0 && dt.deps.every(x => reportedDone[project.task(x).index] === 1)) assignable.add(dt.index)
    }
    // a task for each waiting agent, as long as there are tasks: each push is one more request's worth of the manager's time
    while (waiting.length > 0 && assignable.size > 0) {
      const give = waiting.shift() as (t: ProjectTask) => void
      const t = take() as ProjectTask
      const start = Math.max(scheduler.now, busyUntil)
      busyUntil = start + o.serviceMs
      busyMs += o.serviceMs
      scheduler.at(busyUntil, () => {
        give(t)
      })
    }
  }

  const agent = (i: number, r: Random): void => {
    const ownTraps = new Set<string>()
    let told = new Set<string>()

    /** Ask for work, reporting the task just finished (if any) in the same request. */
    const next = (finished?: ProjectTask): void => {
      const askedAt = scheduler.now
      request(r, () => {
        if (finished !== undefined) markDone(finished)
        const t = take()
        if (t !== undefined) {
          const passOn = trapsFor(t)
          respond(r, passOn.length, () => {
            recorder.settled(scheduler.now - askedAt)
            told = new Set(passOn)
            work(t)
          })
          return
        }
        if (
          idleRepair(ctx, i, () => {
            next()
          })
        )
          return
        waiting.push(t2 => {
          const passOn = trapsFor(t2)
          respond(r, passOn.length, () => {
            told = new Set(passOn)
            work(t2)
          })
        })
      })
    }

    const work = (t: ProjectTask): void => {
      runAttempt(ctx, i, r, t, new Set([...ownTraps, ...told]), a => {
        if (a.result === 'trap') {
          ownTraps.add(a.trap)
          recorder.trapRecorded(a.trap, scheduler.now)
          // tell the manager (fire and forget) and keep going
          request(r, () => {
            const area = a.trap.slice(0, a.trap.indexOf('/'))
            const list = traps.get(area) ?? []
            if (!list.includes(a.trap)) list.push(a.trap)
            traps.set(area, list)
          })
          work(t)
          return
        }
        if (a.result === 'flaky') {
          work(t)
          return
        }
        progress.merge(t, i, scheduler.now)
        next(t)
      })
    }

    scheduler.at(1_000 + r.between(0, init.startSpreadMs ?? RUN_DEFAULTS.startSpreadMs), () => {
      next()
    })
  }
  for (let i = 0; i < agents; i++) agent(i, rng.fork())
  scheduler.run({ until: init.maxVirtualMs ?? RUN_DEFAULTS.maxVirtualMs, stop: () => progress.complete })
  recorder.bump('managerBusySeconds', busyMs / 1000)
  return recorder.result(scheduler.now, (performance.now() - wallStart) / 1000, scheduler.eventsRun)
}
