// Checks a set of new tasks against the board before anything is written: a
// task graph whose dependencies name no task, or go round in a cycle, or that
// redefines an existing task differently, is refused whole.
import { InvalidArgumentError } from '../errors.js'
import { validateScope } from './scope-limits.js'
import { PLAN_TASK_ID } from './plan-task.js'
import type { TaskDefinition } from './task-catalog.js'
import { validateTaskId } from './task-id.js'

/** What an agent gives for a task; the board adds who added it and when. */
export type NewTask = Omit<TaskDefinition, 'addedBy' | 'addedAt'>

export const MAX_TITLE_LENGTH = 512

/**
 * The tasks to append, in an order where each comes after its dependencies.
 * Tasks identical to one already on the board are dropped (a retried add);
 * one that differs is a conflict. `existing` looks a task id up on the board.
 */
export function checkNewTasks(tasks: readonly NewTask[], existing: (id: string) => TaskDefinition | undefined): NewTask[] {
  if (tasks.length === 0) throw new InvalidArgumentError('no tasks given')
  const batch = new Map<string, NewTask>()
  for (const t of tasks) {
    validateTaskId(t.id)
    if (t.id === PLAN_TASK_ID)
      throw new InvalidArgumentError(`"${PLAN_TASK_ID}" is the planning task the board derives from the goal: give your task another id`)
    if (batch.has(t.id)) throw new InvalidArgumentError(`task ${t.id} is given twice`)
    if (t.title.length > MAX_TITLE_LENGTH) throw new InvalidArgumentError(`task ${t.id}: title longer than ${MAX_TITLE_LENGTH} characters`)
    for (const d of t.deps) {
      validateTaskId(d)
      if (d === t.id) throw new InvalidArgumentError(`task ${t.id} cannot depend on itself`)
    }
    batch.set(t.id, { ...t, scope: validateScope(t.scope) })
  }
  const fresh: NewTask[] = []
  for (const t of batch.values()) {
    const have = existing(t.id)
    if (have === undefined) {
      fresh.push(t)
      continue
    }
    if (!sameTask(have, t))
      throw new InvalidArgumentError(
        `task ${t.id} already exists with another definition (see \`agency task show ${t.id}\`): choose a new id`
      )
  }
  for (const t of fresh) {
    for (const d of t.deps) {
      if (d === PLAN_TASK_ID)
        throw new InvalidArgumentError(`task ${t.id}: do not depend on "${PLAN_TASK_ID}"; tasks exist only once planned`)
      if (!batch.has(d) && existing(d) === undefined)
        throw new InvalidArgumentError(
          `task ${t.id} depends on ${d}, which is no task on the board or in this plan: add ${d} first, or fix the dependency`
        )
    }
  }
  return inDependencyOrder(fresh)
}

function sameTask(a: TaskDefinition, b: NewTask): boolean {
  return (
    a.title === b.title &&
    a.description === b.description &&
    a.priority === b.priority &&
    a.deps.join('\n') === b.deps.join('\n') &&
    a.scope.join('\n') === b.scope.join('\n')
  )
}

/** Dependencies first (a task only waits on tasks of the batch); throws on a cycle, naming it. */
function inDependencyOrder(tasks: NewTask[]): NewTask[] {
  const byId = new Map(tasks.map(t => [t.id, t]))
  const out: NewTask[] = []
  const state = new Map<string, 'visiting' | 'done'>()
  const visit = (t: NewTask, path: string[]): void => {
    const s = state.get(t.id)
    if (s === 'done') return
    if (s === 'visiting') {
      const cycle = [...path.slice(path.indexOf(t.id)), t.id]
      throw new InvalidArgumentError(`the tasks' dependencies form a cycle: ${cycle.join(' -> ')}`)
    }
    state.set(t.id, 'visiting')
    for (const d of t.deps) {
      const dep = byId.get(d)
      if (dep !== undefined) visit(dep, [...path, t.id])
    }
    state.set(t.id, 'done')
    out.push(t)
  }
  for (const t of tasks) visit(t, [])
  return out
}
