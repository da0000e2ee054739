// Baseline (b), git lock-file claims: a claim is a lock file committed and
// pushed to one central repository; others see it only when they pull. The
// repository accepts a push only from a clone that is up to date (a rejected
// pusher pulls and, if the task is still free, pushes again) and updates the
// branch one push at a time. Agents pull every `pullEveryMs` and, after a random
// exponential back-off, before retrying a rejected push; notes
// about failed approaches are committed and pushed the same way. Exclusion is
// exact (the lock file conflicts); the costs are stale views and contention.
// Against the hazards it has only the lock: merges run the task's own test,
// no review, no interface talk, a stalled holder keeps its lock.

import {
  GIT_COMMIT_PACK_BYTES,
  GIT_HTTP_OVERHEAD_BYTES,
  GIT_PULL_REQUEST_BYTES,
  GIT_PUSH_COMMAND_BYTES,
  GIT_PUSH_REPORT_BYTES
} from '../cost-model.js'
import { IndexedSet } from '../../engine/indexed-set.js'
import { ProjectProgress } from '../project-progress.js'
import { createRandom, type Random } from '../../engine/random.js'
import { RunRecorder, type RunResult } from '../../../experiment/run-recorder.js'
import { Scheduler } from '../../engine/scheduler.js'
import type { Project, ProjectTask } from '../workload.js'
import { runAttempt, type AttemptContext } from './attempt-runner.js'
import { idleRepair } from './merge-hazards.js'
import { RUN_DEFAULTS, validateRun, type SwarmRunInit } from './common.js'

export interface GitLocksInit extends SwarmRunInit {
  /** every agent pulls this often */
  pullEveryMs?: number
  /** one-way latency to the repository host, uniform in [min, max) */
  minLatencyMs?: number
  maxLatencyMs?: number
  /** the host updates the branch for one push at a time, each taking this long */
  pushServiceMs?: number
  /** after the k-th rejected push in a row, wait uniform [0, min(cap, first * 2^k)) before pulling again */
  backoffFirstMs?: number
  backoffCapMs?: number
}

export const GIT_DEFAULTS = {
  pullEveryMs: 30_000,
  minLatencyMs: 50,
  maxLatencyMs: 250,
  pushServiceMs: 200,
  backoffFirstMs: 1_000,
  backoffCapMs: 60_000
} as const

type Commit = { kind: 'lock' | 'done'; task: number } | { kind: 'note'; trap: string }

/** The central repository: a list of commits; a clone that has seen `base` commits knows exactly those. */
class CentralRepo {
  readonly commits: Commit[] = []
  readonly lockVer: Int32Array
  readonly doneVer: Int32Array
  readonly trapVer = new Map<string, number>()
  /** deps done and not locked at head */
  readonly openAtHead = new IndexedSet<number>()
  /** locks in commit order, to find tasks a stale clone still sees as free */
  readonly locks: Array<{ task: number; ver: number }> = []
  private readonly project: Project

  constructor(project: Project) {
    this.project = project
    this.lockVer = new Int32Array(project.tasks.length).fill(-1)
    this.doneVer = new Int32Array(project.tasks.length).fill(-1)
    for (const t of project.tasks) if (t.deps.length === 0) this.openAtHead.add(t.index)
  }

  get head(): number {
    return this.commits.length
  }

  commit(c: Commit): void {
    const ver = this.commits.length
    this.commits.push(c)
    if (c.kind === 'lock') {
      this.lockVer[c.task] = ver
      this.locks.push({ task: c.task, ver })
      this.openAtHead.delete(c.task)
    } else if (c.kind === 'done') {
      this.doneVer[c.task] = ver
      for (const d of this.project.dependents(this.project.tasks[c.task].id)) {
        const t = this.project.task(d)
        if (this.lockVer[t.index] < 0 && t.deps.every(x => this.doneVer[this.project.task(x).index] >= 0)) this.openAtHead.add(t.index)
      }
    } else if (c.kind === 'note' && !this.trapVer.has(c.trap)) {
      this.trapVer.set(c.trap, ver)
    }
  }

  private doneIn(task: number, base: number): boolean {
    const v = this.doneVer[task]
    return v >= 0 && v < base
  }

  lockedIn(task: number, base: number): boolean {
    const v = this.lockVer[task]
    return v >= 0 && v < base
  }

  readyIn(task: ProjectTask, base: number): boolean {
    return task.deps.every(d => this.doneIn(this.project.task(d).index, base))
  }

  /** Tasks a clone at `base` sees as ready and unlocked. */
  freeIn(base: number): number[] {
    const out: number[] = []
    for (const t of this.openAtHead.values()) if (this.readyIn(this.project.tasks[t], base)) out.push(t)
    let lo = 0
    let hi = this.locks.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.locks[mid].ver < base) lo = mid + 1
      else hi = mid
    }
    for (let i = lo; i < this.locks.length; i++) {
      const t = this.locks[i].task
      if (!this.doneIn(t, base) && this.readyIn(this.project.tasks[t], base)) out.push(t)
    }
    return out
  }

  trapsIn(base: number, area: string): string[] {
    const out: string[] = []
    for (const [trap, ver] of this.trapVer) if (ver < base && trap.startsWith(`${area}/`)) out.push(trap)
    return out
  }

  /** Commits a pull from `base` downloads. */
  newSince(base: number): number {
    return this.head - base
  }
}

export function runGitLocks(init: GitLocksInit): RunResult {
  validateRun(init)
  const wallStart = performance.now()
  const o = { ...GIT_DEFAULTS, ...init }
  const { project, agents } = init
  const scheduler = new Scheduler()
  const recorder = new RunRecorder({ strategy: 'git', label: init.label ?? 'git lock files', agents, tasks: project.tasks.length })
  const progress = new ProjectProgress(project, recorder)
  const ctx: AttemptContext = { scheduler, project, progress, recorder }
  const repo = new CentralRepo(project)
  const rng = createRandom(init.seed)
  let serverFreeAt = 0

  const oneWay = (r: Random): number => r.between(o.minLatencyMs, o.maxLatencyMs)

  /** A pull: the clone learns everything up to the head at the moment the host answers. */
  const pull = (r: Random, base: number, then: (base: number) => void): void => {
    scheduler.after(oneWay(r), () => {
      const head = repo.head
      recorder.count('git pull', 2, 2 * GIT_HTTP_OVERHEAD_BYTES + GIT_PULL_REQUEST_BYTES + repo.newSince(base) * GIT_COMMIT_PACK_BYTES)
      scheduler.after(oneWay(r), () => {
        then(head)
      })
    })
  }

  /**
   * A push of one commit made on `base`. A stale push is refused as soon as
   * it arrives; an up-to-date one waits its turn (the host updates the branch
   * one push at a time) and is refused if a push ahead of it moved the branch.
   */
  const push = (r: Random, base: number, commit: Commit, then: (accepted: boolean, base: number) => void): void => {
    recorder.count('git push', 2, 2 * GIT_HTTP_OVERHEAD_BYTES + GIT_PUSH_COMMAND_BYTES + GIT_COMMIT_PACK_BYTES + GIT_PUSH_REPORT_BYTES)
    const answer = (accepted: boolean): void => {
      if (accepted) repo.commit(commit)
      else recorder.bump('pushesRejected')
      const head = repo.head
      scheduler.after(oneWay(r), () => {
        then(accepted, accepted ? head : base)
      })
    }
    scheduler.after(oneWay(r), () => {
      if (base !== repo.head) {
        answer(false)
        return
      }
      const start = Math.max(scheduler.now, serverFreeAt)
      serverFreeAt = start + o.pushServiceMs
      scheduler.at(serverFreeAt, () => {
        answer(base === repo.head)
      })
    })
  }

  /** Push with the usual loop: rejected → back off → pull → check it still makes sense → push again. */
  const pushUntilAccepted = (
    r: Random,
    base: number,
    commit: Commit,
    stillWanted: (base: number) => boolean,
    then: (ok: boolean, base: number) => void,
    rejections = 0
  ): void => {
    push(r, base, commit, (accepted, b) => {
      if (accepted) {
        then(true, b)
        return
      }
      const wait = r.between(0, Math.min(o.backoffCapMs, o.backoffFirstMs * 2 ** rejections))
      scheduler.after(wait, () => {
        pull(r, b, fresh => {
          if (!stillWanted(fresh)) {
            then(false, fresh)
            return
          }
          pushUntilAccepted(r, fresh, commit, stillWanted, then, rejections + 1)
        })
      })
    })
  }

  const agent = (i: number, r: Random): void => {
    let base = 0
    let idle = false
    const ownTraps = new Set<string>()
    const known = (t: ProjectTask): Set<string> => new Set([...ownTraps, ...repo.trapsIn(base, project.areas[t.area].name)])
    const update = (b: number): void => {
      base = Math.max(base, b)
    }

    // the periodic pull, whatever the agent is doing; an idle agent looks again after it
    const periodic = (): void => {
      pull(r, base, b => {
        update(b)
        if (idle) {
          idle = false
          pick()
        }
        scheduler.after(o.pullEveryMs, periodic)
      })
    }

    const pick = (): void => {
      const free = repo.freeIn(base)
      if (free.length === 0) {
        if (!idleRepair(ctx, i, pick)) idle = true
        return
      }
      const task = project.tasks[r.pick(free)]
      const askedAt = scheduler.now
      pushUntilAccepted(
        r,
        base,
        { kind: 'lock', task: task.index },
        b => !repo.lockedIn(task.index, b) && repo.readyIn(task, b),
        (ok, b) => {
          update(b)
          if (!ok) {
            pick()
            return
          }
          recorder.settled(scheduler.now - askedAt)
          work(task)
        }
      )
    }

    const work = (t: ProjectTask): void => {
      runAttempt(ctx, i, r, t, known(t), a => {
        if (a.result === 'trap') {
          ownTraps.add(a.trap)
          recorder.trapRecorded(a.trap, scheduler.now)
          pushUntilAccepted(
            r,
            base,
            { kind: 'note', trap: a.trap },
            () => true,
            (_ok, b) => {
              update(b)
              work(t)
            }
          )
          return
        }
        if (a.result === 'flaky') {
          work(t)
          return
        }
        progress.merge(t, i, scheduler.now)
        pushUntilAccepted(
          r,
          base,
          { kind: 'done', task: t.index },
          () => true,
          (_ok, b) => {
            update(b)
            pick()
          }
        )
      })
    }

    scheduler.at(1_000 + r.between(0, init.startSpreadMs ?? RUN_DEFAULTS.startSpreadMs), () => {
      pull(r, base, b => {
        update(b)
        pick()
        scheduler.after(o.pullEveryMs * r.between(0.5, 1.5), periodic)
      })
    })
  }
  for (let i = 0; i < agents; i++) agent(i, rng.fork())
  scheduler.run({ until: init.maxVirtualMs ?? RUN_DEFAULTS.maxVirtualMs, stop: () => progress.complete })
  return recorder.result(scheduler.now, (performance.now() - wallStart) / 1000, scheduler.eventsRun)
}
