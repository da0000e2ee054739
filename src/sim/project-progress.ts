// The ground truth of a simulated run, which no agent sees directly: which
// hidden tests pass, when each file was last merged and by whom, and which
// tasks are ready (dependencies passed, not passed yet). Strategies that
// assume a perfectly fresh view of the repository (no coordination, the
// central manager) read `ready` from here; agency reads its own board.

import { IndexedSet } from './indexed-set.js'
import type { RunRecorder } from './run-recorder.js'
import type { Project, ProjectTask } from './workload.js'

export class ProjectProgress {
  readonly project: Project
  /** tasks whose dependencies pass and whose own test does not yet */
  readonly ready = new IndexedSet<string>()
  private readonly passedAt = new Map<string, number>()
  private readonly fileMerges = new Map<string, Array<{ at: number, agent: number }>>()
  private readonly recorder: RunRecorder
  private readonly listeners: Array<(task: string) => void> = []

  constructor (project: Project, recorder: RunRecorder) {
    this.project = project
    this.recorder = recorder
    for (const t of project.tasks) if (t.deps.length === 0) this.ready.add(t.id)
  }

  get passedCount (): number {
    return this.passedAt.size
  }

  get complete (): boolean {
    return this.passedAt.size === this.project.tasks.length
  }

  passed (task: string): boolean {
    return this.passedAt.has(task)
  }

  /** Called whenever a task's hidden test starts to pass. */
  onPassed (listener: (task: string) => void): void {
    this.listeners.push(listener)
  }

  /** Whether another agent merged into one of the task's files after `since` (a rebase is due). */
  needsRebase (task: ProjectTask, agent: number, since: number): boolean {
    for (const f of task.files) {
      const merges = this.fileMerges.get(f)
      if (merges === undefined) continue
      for (let i = merges.length - 1; i >= 0 && merges[i].at > since; i--) if (merges[i].agent !== agent) return true
    }
    return false
  }

  /** A sound attempt is merged: the task's files change and its hidden test passes (once). Returns true the first time. */
  merge (task: ProjectTask, agent: number, at: number): boolean {
    for (const f of task.files) {
      const list = this.fileMerges.get(f)
      if (list === undefined) this.fileMerges.set(f, [{ at, agent }])
      else list.push({ at, agent })
    }
    if (this.passedAt.has(task.id)) return false
    this.passedAt.set(task.id, at)
    this.ready.delete(task.id)
    this.recorder.taskPassed(task.id, at)
    for (const d of this.project.dependents(task.id)) {
      if (!this.passedAt.has(d) && this.project.task(d).deps.every(x => this.passedAt.has(x))) this.ready.add(d)
    }
    for (const l of this.listeners) l(task.id)
    return true
  }
}
