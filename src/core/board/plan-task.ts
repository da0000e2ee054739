// The `plan` task: when the swarm has a goal and no task, every replica shows
// the same task, derived from the goal entry itself, so that nobody has to
// create it and holding it is the one election there is: its holder turns the
// goal into tasks. It stays on the board once anyone claimed it (until done),
// and disappears unclaimed as soon as tasks exist (someone planned by hand).
import type { TaskDefinition } from './task-catalog.js'
import type { GoalView } from './goal-history.js'
import { PLAN_TASK_ID } from './task-id.js'
import { PLAN_STEPS } from '../agent-words.js'

export { PLAN_TASK_ID }

/** Plans come first: a swarm that has only a goal has nothing else to do. */
const PLAN_PRIORITY = 1_000_000

export function planDefinition(goal: GoalView): TaskDefinition {
  return {
    id: PLAN_TASK_ID,
    title: 'Plan: turn the goal into tasks',
    description: [`Goal: ${goal.text}`, goal.testCommand !== '' ? `Tests: ${goal.testCommand}` : '', PLAN_STEPS]
      .filter(s => s !== '')
      .join('\n'),
    deps: [],
    scope: [],
    priority: PLAN_PRIORITY,
    addedBy: goal.setBy,
    addedAt: goal.time
  }
}
