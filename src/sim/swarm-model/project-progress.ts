// The ground truth of a simulated run, which no agent sees directly: which
// hidden tests pass, when each file was last merged and by whom, and which
// tasks are ready (dependencies passed, not passed yet). Strategies that
// assume a perfectly fresh view of the repository (no coordination, the
// central manager) read `ready` from here; agency reads its own board.
//
// It also keeps the hazards' state (src/sim/swarm-model/hazards.ts), the same for every
// strategy: a change merged without running the whole suite may break other
// passing tests of its area (they stop passing until someone repairs the
// area); a defect that got past its own test waits in the merged code for the
// first dependent that builds on it.

import { Hazards } from './hazards.js'
import { IndexedSet } from '../engine/indexed-set.js'
import type { RunRecorder } from '../../experiment/run-recorder.js'
import type { Project, ProjectTask } from './workload.js'

export interface MergeOptions {
  /** the whole suite ran on the merged tree first: a change that would break other tests was fixed before it landed */
  verified?: boolean
  /** a review caught the change's defect (or there was none to catch) */
  defectCaught?: boolean
}

export class ProjectProgress {
  readonly project: Project
  readonly hazards: Hazards
  /** tasks whose dependencies pass and whose own test does not yet */
  readonly ready = new IndexedSet<string>()
  private readonly passedAt = new Map<string, number>()
  private readonly fileMerges = new Map<string, Array<{ at: number; agent: number; task: number }>>()
  private readonly recorder: RunRecorder
  private readonly listeners: Array<(task: string) => void> = []
  /** broken tests (task index) by area */
  private readonly brokenByArea = new Map<number, Set<number>>()
  private brokenCount = 0
  /** areas someone is repairing now */
  private readonly repairing = new Set<number>()
  /** merged tasks whose hidden defect nobody has hit yet */
  private readonly latentDefects = new Set<number>()
  /** tasks whose defect a review found and its author fixed */
  private readonly fixedDefects = new Set<number>()
  private readonly attemptsOn = new Map<number, number>()
  private readonly passedByArea = new Map<number, number[]>()

  constructor(project: Project, recorder: RunRecorder) {
    this.project = project
    this.hazards = project.hazards
    this.recorder = recorder
    for (const t of project.tasks) if (t.deps.length === 0) this.ready.add(t.id)
  }

  get passedCount(): number {
    return this.passedAt.size - this.brokenCount
  }

  /** Every hidden test passes now. */
  get complete(): boolean {
    return this.passedAt.size === this.project.tasks.length && this.brokenCount === 0
  }

  /** The task's change has been merged (its test may be broken again since). */
  passed(task: string): boolean {
    return this.passedAt.has(task)
  }

  /** Called whenever a task's change is merged for the first time. */
  onPassed(listener: (task: string) => void): void {
    this.listeners.push(listener)
  }

  /** The ordinal of the next attempt at `task` (any agent), for the hazard rolls. */
  nextAttempt(task: ProjectTask): number {
    const n = this.attemptsOn.get(task.index) ?? 0
    this.attemptsOn.set(task.index, n + 1)
    return n
  }

  /** Whether another agent merged into one of the task's files after `since` (a rebase is due). */
  needsRebase(task: ProjectTask, agent: number, since: number): boolean {
    return this.mergedSince(task, agent, since).length > 0
  }

  /** Tasks another agent merged into this task's files after `since`, each once. */
  mergedSince(task: ProjectTask, agent: number, since: number): number[] {
    const out = new Set<number>()
    for (const f of task.files) {
      const merges = this.fileMerges.get(f)
      if (merges === undefined) continue
      for (let i = merges.length - 1; i >= 0 && merges[i].at > since; i--)
        if (merges[i].agent !== agent && merges[i].task !== task.index) out.add(merges[i].task)
    }
    return [...out]
  }

  /**
   * Whether the task's area has broken tests, or one of its dependencies' tests is broken: working on it shows red tests its agent did not
   * cause.
   */
  brokenAround(task: ProjectTask): boolean {
    if ((this.brokenByArea.get(task.area)?.size ?? 0) > 0) return true
    for (const d of task.depIndices) if (this.brokenByArea.get(this.project.tasks[d].area)?.has(d) === true) return true
    return false
  }

  /** Areas with broken tests that nobody is repairing: one for an idle agent that sees red tests on the shared branch. */
  takeRepair(): number | undefined {
    for (const [area, set] of this.brokenByArea) {
      if (set.size > 0 && !this.repairing.has(area)) {
        this.repairing.add(area)
        return area
      }
    }
    return undefined
  }

  /** The broken tests around `task` (its area, its dependencies' areas) pass again. */
  repairAround(task: ProjectTask, at: number): void {
    this.repairArea(task.area, at)
    for (const d of task.depIndices) this.repairArea(this.project.tasks[d].area, at)
  }

  repairArea(area: number, at: number): void {
    this.repairing.delete(area)
    const set = this.brokenByArea.get(area)
    if (set === undefined || set.size === 0) return
    this.brokenCount -= set.size
    set.clear()
    this.recorder.passing(at, this.passedCount)
    if (this.brokenCount === 0) this.recorder.mainBroken(at, false)
  }

  /** A review found the task's defect and its author fixed it: no dependent that builds on it from now on trips over it. */
  fixDefect(task: number): void {
    this.fixedDefects.add(task)
    if (this.latentDefects.delete(task)) this.recorder.bump('defectsFixedAfterLanding')
  }

  /** Dependencies of `task` whose latent defect it is the first to build on. */
  takeDefects(task: ProjectTask): number[] {
    const out: number[] = []
    for (const d of task.depIndices) {
      if (this.latentDefects.delete(d)) out.push(d)
    }
    return out
  }

  /**
   * A sound attempt is merged: the task's files change and its hidden test
   * passes (once). Unverified, a change that breaks others breaks up to
   * `breakVictims` passing tests of its area. Returns true the first time.
   */
  merge(task: ProjectTask, agent: number, at: number, opts: MergeOptions = {}): boolean {
    for (const f of task.files) {
      const list = this.fileMerges.get(f)
      const m = { at, agent, task: task.index }
      if (list === undefined) this.fileMerges.set(f, [m])
      else list.push(m)
    }
    if (this.passedAt.has(task.id)) return false
    this.passedAt.set(task.id, at)
    this.ready.delete(task.id)
    if (opts.verified !== true && this.hazards.breaks(task.index)) {
      this.recorder.bump('breakingMerges')
      this.breakOthers(task, at)
    }
    if (opts.defectCaught !== true && !this.fixedDefects.has(task.index) && this.hazards.defect(task.index)) {
      this.recorder.bump('defectsLanded')
      this.latentDefects.add(task.index)
    }
    const inArea = this.passedByArea.get(task.area)
    if (inArea === undefined) this.passedByArea.set(task.area, [task.index])
    else inArea.push(task.index)
    this.recorder.passing(at, this.passedCount)
    for (const d of this.project.dependents(task.id)) {
      if (!this.passedAt.has(d) && this.project.task(d).deps.every(x => this.passedAt.has(x))) this.ready.add(d)
    }
    for (const l of this.listeners) l(task.id)
    return true
  }

  private breakOthers(task: ProjectTask, at: number): void {
    const candidates = (this.passedByArea.get(task.area) ?? []).filter(v => !(this.brokenByArea.get(task.area)?.has(v) ?? false))
    if (candidates.length === 0) return
    candidates.sort((a, b) => this.hazards.victimRank(task.index, a) - this.hazards.victimRank(task.index, b))
    const victims = candidates.slice(0, this.hazards.options.breakVictims)
    let set = this.brokenByArea.get(task.area)
    if (set === undefined) {
      set = new Set()
      this.brokenByArea.set(task.area, set)
    }
    const wasClean = this.brokenCount === 0
    for (const v of victims) set.add(v)
    this.brokenCount += victims.length
    this.recorder.bump('testsBroken', victims.length)
    if (wasClean && victims.length > 0) this.recorder.mainBroken(at, true)
  }
}
