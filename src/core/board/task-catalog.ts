// Task definitions. Anyone may add a task, and two agents may add the same id
// concurrently. Merge rule: the first entry for an id in (lamport, author)
// order defines the task (and `addedBy`); every later entry for that id is an
// update applied in (lamport, author) order, where each non-empty field
// replaces the earlier value (proto3 cannot tell "empty" from "unset", so an
// update cannot clear a field or set the priority back to 0). Scope hints keep
// what scope-limits lets count (capScope).

import type { TaskSpec } from '../../gen/agency/v1/log.js'
import { compareText, insertOrdered, type Ordered } from './order.js'
import { capScope } from './scope-limits.js'
import { PLAN_TASK_ID, isValidTaskId } from './task-id.js'
import type { BoardEntryHeader } from './types.js'

export interface TaskDefinition {
  id: string
  title: string
  description: string
  deps: string[]
  /** scope hints: paths or globs */
  scope: string[]
  /** higher first */
  priority: number
  addedBy: string
  /** adder's wall clock, informational */
  addedAt: number
  /** an operator cancelled it (core/operator): nobody is to work on it, and the stop rule leaves it out */
  cancelled?: { by: string; reason: string; time: number }
}

interface SpecRecord extends Ordered {
  time: number
  spec: TaskSpec
}

export class TaskCatalog {
  private readonly specs = new Map<string, SpecRecord[]>()
  private readonly merged = new Map<string, TaskDefinition>()
  private sortedIds: string[] | undefined

  /** Returns false (and keeps nothing) when the id is not a valid slug, or is the goal's own `plan` task. */
  add(header: BoardEntryHeader, spec: TaskSpec): boolean {
    if (!isValidTaskId(spec.id) || spec.id === PLAN_TASK_ID) return false
    let list = this.specs.get(spec.id)
    if (list === undefined) {
      list = []
      this.specs.set(spec.id, list)
      this.sortedIds = undefined
    }
    insertOrdered(list, { id: header.id, author: header.author, seq: header.seq, lamport: header.lamport, time: header.time, spec })
    this.merged.delete(spec.id)
    return true
  }

  has(id: string): boolean {
    return this.specs.has(id)
  }

  get(id: string): TaskDefinition | undefined {
    const cached = this.merged.get(id)
    if (cached !== undefined) return cached
    const list = this.specs.get(id)
    if (list === undefined) return undefined
    const def = mergeSpecs(id, list)
    this.merged.set(id, def)
    return def
  }

  /** Known task ids, sorted. */
  ids(): readonly string[] {
    this.sortedIds ??= [...this.specs.keys()].sort(compareText)
    return this.sortedIds
  }
}

function mergeSpecs(id: string, list: SpecRecord[]): TaskDefinition {
  const first = list[0]
  const def: TaskDefinition = {
    id,
    title: first.spec.title,
    description: first.spec.description,
    // the spec is the board's own copy (Board.apply), and a definition is never changed in place: its lists are shared
    deps: first.spec.deps,
    scope: capScope(first.spec.scope),
    priority: first.spec.priority,
    addedBy: first.author,
    addedAt: first.time
  }
  for (const { spec } of list.slice(1)) {
    if (spec.title !== '') def.title = spec.title
    if (spec.description !== '') def.description = spec.description
    if (spec.deps.length > 0) def.deps = spec.deps
    if (spec.scope.length > 0) def.scope = capScope(spec.scope)
    if (spec.priority !== 0) def.priority = spec.priority
  }
  return def
}
