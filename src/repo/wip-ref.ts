// The holder's work in progress on the shared remote: refs/agency/wip/<task>
// holds the latest push of the task branch, so that whoever takes the task
// over after a crash or a release starts from it instead of from nothing.
import { checkRefComponent } from './ref-names.js'
import { revParse } from './git.js'
import { pushRefspecs } from './push.js'
import type { Workspace } from './workspace.js'

export function wipRefName(task: string): string {
  return `refs/agency/wip/${checkRefComponent('task', task)}`
}

/**
 * Pushes the task branch to the task's wip ref (forced: the ref follows the
 * current holder). Returns the commit pushed, or null when there is no local
 * task branch or it has nothing beyond `unlessAt`.
 */
export async function pushWip(ws: Workspace, task: string, unlessAt?: string): Promise<string | null> {
  const head = await revParse(ws.dir, `refs/heads/${ws.taskBranch(task)}`)
  if (head == null || head === unlessAt) return null
  const r = await pushRefspecs(ws, [`+${head}:${wipRefName(task)}`])
  return r.ok ? head : null
}
