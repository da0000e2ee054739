import { InvalidArgumentError } from '../errors.js'

export const MAX_TASK_ID_LENGTH = 64

/** The task every replica derives from the goal while the board has no other (core/board/plan-task). */
export const PLAN_TASK_ID = 'plan'

// Lowercase words joined by single '-', '_' or '.': safe inside git ref names
// (refs/agency/<task>/...) and in the `Agency-Task: <task>@<epoch>` trailer.
const TASK_ID = /^[a-z0-9]+(?:[-_.][a-z0-9]+)*$/

export function isValidTaskId(id: unknown): id is string {
  return typeof id === 'string' && id.length <= MAX_TASK_ID_LENGTH && TASK_ID.test(id) && !id.endsWith('.lock')
}

/** Throws InvalidArgumentError unless `id` is a task slug. */
export function validateTaskId(id: unknown): string {
  if (typeof id !== 'string' || id.length === 0) throw new InvalidArgumentError('task id must be a non-empty string')
  if (id.length > MAX_TASK_ID_LENGTH) throw new InvalidArgumentError(`task id is longer than ${MAX_TASK_ID_LENGTH} characters`)
  if (!isValidTaskId(id)) {
    throw new InvalidArgumentError(
      `task id ${JSON.stringify(id)} is not a slug: use lowercase letters and digits joined by single '-', '_' or '.'`
    )
  }
  return id
}
