// Which tasks a replica's agent could claim, kept up to date as entries are
// folded in, so that picking a task does not rebuild board.ready() (a view of
// all M tasks) a few hundred thousand times per run. The index only narrows
// the search: every candidate is checked against the real board (task view,
// checkClaimable) before it is claimed. Dependency lists are the project's,
// which are exactly what the task entries carry.

import type { Board } from '../../core/board/board.js'
import { IndexedSet } from '../engine/indexed-set.js'
import type { Project } from './workload.js'

export class ReadyIndex {
  /** known, dependencies done, not done, nobody holds it */
  readonly open = new IndexedSet<number>()
  /** known, dependencies done, not done, somebody holds it (maybe with an expired lease) */
  readonly held = new IndexedSet<number>()
  private readonly known: Uint8Array
  private readonly done: Uint8Array
  private readonly board: Board
  private readonly project: Project

  constructor(board: Board, project: Project) {
    this.board = board
    this.project = project
    this.known = new Uint8Array(project.tasks.length)
    this.done = new Uint8Array(project.tasks.length)
  }

  isDone(task: number): boolean {
    return this.done[task] === 1
  }

  /** After a task, claim, release or done entry about `task` was folded in. */
  touch(task: number, kind: string): void {
    if (kind === 'task') this.known[task] = 1
    const t = this.project.tasks[task]
    if (this.done[task] === 0 && this.board.doneRecord(t.id) !== undefined) {
      this.done[task] = 1
      this.open.delete(task)
      this.held.delete(task)
      for (const d of t.dependentIndices) this.classify(d)
      return
    }
    this.classify(task)
  }

  private classify(task: number): void {
    const t = this.project.tasks[task]
    let candidate = this.known[task] === 1 && this.done[task] === 0
    for (let i = 0; candidate && i < t.depIndices.length; i++) candidate = this.done[t.depIndices[i]] === 1
    if (!candidate) {
      this.open.delete(task)
      this.held.delete(task)
      return
    }
    if (this.board.holder(t.id) === undefined) {
      this.held.delete(task)
      this.open.add(task)
    } else {
      this.open.delete(task)
      this.held.add(task)
    }
  }
}
