// Background integrates in this agent's clone: refs/agency-background/<task>
// (local only, never pushed) marks the request commit of a task its daemon
// integrates in the background (agency integrate --background), so a daemon
// that stops before it answers the request finds it again at its next start.
import { checkRefComponent } from './ref-names.js'
import { git, gitOut } from './git.js'
import type { Workspace } from './workspace.js'

const PREFIX = 'refs/agency-background/'

function markName(task: string): string {
  return `${PREFIX}${checkRefComponent('task', task)}`
}

/** Marks `task`'s request at `commit` as integrated in the background here. */
export async function markBackground(ws: Workspace, task: string, commit: string): Promise<void> {
  await git(ws.dir, ['update-ref', markName(task), commit])
}

/** Removes the mark of `task` (answered), whatever it points at; nothing when there is none. */
export async function clearBackground(ws: Workspace, task: string): Promise<void> {
  await git(ws.dir, ['update-ref', '-d', markName(task)], { allowFail: true })
}

/** The background integrates marked in this clone: task -> request commit. */
export async function backgroundMarks(ws: Workspace): Promise<Map<string, string>> {
  const out = await gitOut(ws.dir, ['for-each-ref', '--format=%(refname) %(objectname)', PREFIX])
  const marks = new Map<string, string>()
  for (const line of out.split('\n')) {
    const [ref, commit] = line.split(' ')
    if (ref?.startsWith(PREFIX) === true && commit !== undefined) marks.set(ref.slice(PREFIX.length), commit)
  }
  return marks
}
