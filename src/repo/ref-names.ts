// The names agency gives to git refs, and the checks that keep agent and task
// ids from escaping them. Ids become one path component of a ref each, so a
// slash or `..` in a task id must not be able to name some other ref.
import { InvalidArgumentError } from '../core/errors.js'

const COMPONENT = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$/

/** Throws InvalidArgumentError unless `value` is safe as one ref component. */
export function checkRefComponent(what: string, value: unknown): string {
  if (typeof value !== 'string' || !COMPONENT.test(value) || value.includes('..') || value.endsWith('.lock') || value.endsWith('.')) {
    throw new InvalidArgumentError(
      `${what} ${JSON.stringify(value)} is not usable in a git ref name: use 1-128 of [A-Za-z0-9._-], not starting with "." or "-", without ".." or a ".lock" ending`
    )
  }
  return value
}

/** The branch an agent works on for one task. */
export function taskBranchName(agentId: string, task: string): string {
  return `agency/${checkRefComponent('agent id', agentId)}/${checkRefComponent('task', task)}`
}

/** Names under refs/agency/ that are agency's own, not an agent's: no agent id may take them. */
const RESERVED_AGENT_IDS = new Set(['tasks', 'wip'])

/** Where an agent publishes its branch on the shared remote for an integrator. */
export function requestRefName(agentId: string, task: string): string {
  checkRefComponent('agent id', agentId)
  if (RESERVED_AGENT_IDS.has(agentId))
    throw new InvalidArgumentError(`agent id ${JSON.stringify(agentId)} is reserved: refs/agency/${agentId}/ holds agency's own refs`)
  return `refs/agency/${agentId}/${checkRefComponent('task', task)}`
}

/**
 * The task's fence on the shared remote: it points at the merge commit that
 * last landed work for the task, whose trailers (Agency-Task: <task>@<epoch>,
 * Agency-Agent: <holder>) say under which claim. See task-fence.ts.
 */
export function taskFenceRef(task: string): string {
  return `refs/agency/tasks/${checkRefComponent('task', task)}`
}

/** Where a clone keeps its copy of the remote's task fences. */
export function taskFenceTrackingRef(task: string): string {
  return `refs/remotes/origin-agency/tasks/${checkRefComponent('task', task)}`
}

/** Fetches every task fence (with --prune, so a deleted fence is not remembered). */
export const TASK_FENCES_REFSPEC = '+refs/agency/tasks/*:refs/remotes/origin-agency/tasks/*'

export function checkBranchName(branch: unknown): string {
  if (
    typeof branch !== 'string' ||
    !/^[A-Za-z0-9_][A-Za-z0-9._/-]{0,199}$/.test(branch) ||
    branch.includes('..') ||
    branch.includes('//') ||
    branch.endsWith('/') ||
    branch.endsWith('.lock') ||
    branch.endsWith('.')
  ) {
    throw new InvalidArgumentError(`branch ${JSON.stringify(branch)} is not a usable branch name`)
  }
  return branch
}

export function checkEpoch(epoch: unknown): number {
  if (typeof epoch !== 'number' || !Number.isSafeInteger(epoch) || epoch < 0) {
    throw new InvalidArgumentError(`epoch ${String(epoch)} is not a non-negative integer`)
  }
  return epoch
}

/** Trailers that tie a merge commit to the task claim it was made under (the fence). */
export function agencyTrailers(task: string, epoch: number, agentId: string, extra: Record<string, string> = {}): string {
  const lines = [`Agency-Task: ${task}@${epoch}`, `Agency-Agent: ${agentId}`]
  for (const [k, v] of Object.entries(extra)) lines.push(`${k}: ${v}`)
  return lines.join('\n')
}

/** A merge commit message: the caller's text (or a default), then the trailer block. */
export function mergeMessage(subject: string | undefined, fallback: string, trailers: string): string[] {
  if (subject !== undefined && typeof subject !== 'string') throw new InvalidArgumentError('message must be a string')
  const text = (subject ?? '').trim()
  if (text.length > 10_000) throw new InvalidArgumentError('message is longer than 10000 characters')
  // Each -m is one paragraph; the trailers must be the last one to parse as trailers.
  return ['-m', text.length > 0 ? text : fallback, '-m', trailers]
}
