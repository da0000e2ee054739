// `agency wait`: an agent with nothing to take blocks here instead of
// spinning, until there is something for it: the goal is met, a message or
// notice is unread, it holds a task, or a task is ready. The answer says which
// and what to do next.
import type { TaskView } from '../core/board/index.js'

export type WaitReason = 'goal_met' | 'message' | 'held' | 'ready' | 'timeout'

export interface WaitAnswer { reason: WaitReason, ready: TaskView[], unread: number, text: string }

export interface WorkSources {
  goalMet: () => boolean
  unread: () => number
  held: () => string[]
  ready: () => TaskView[]
  /** calls back on anything that may change the answer; returns the unsubscribe function */
  onChange: (listener: () => void) => () => void
}

export const DEFAULT_WAIT_MS = 10 * 60_000
export const MAX_WAIT_MS = 60 * 60_000
/** Leases expire with time, not with entries: look again this often even if nothing arrives. */
const RECHECK_MS = 1_000

export function whatToDo (s: WorkSources, timedOut = false): WaitAnswer | undefined {
  const unread = s.unread()
  if (s.goalMet()) return { reason: 'goal_met', ready: [], unread, text: 'the goal is met: every task is done and the shared branch\'s tests pass. Stop.' }
  if (unread > 0) return { reason: 'message', ready: [], unread, text: `${unread} unread in your inbox: agency inbox` }
  const held = s.held()
  if (held.length > 0) return { reason: 'held', ready: [], unread, text: `you hold ${held.join(', ')}: carry on with it (agency task show ${held[0]})` }
  const ready = s.ready()
  if (ready.length > 0) return { reason: 'ready', ready, unread, text: `ready to claim: ${ready.slice(0, 10).map(t => t.id).join(', ')}${ready.length > 10 ? ', ...' : ''} (agency claim --next)` }
  if (timedOut) return { reason: 'timeout', ready: [], unread, text: 'nothing to take yet: peers hold every open task. Run agency wait again.' }
  return undefined
}

export async function waitForWork (s: WorkSources, timeoutMs: number, signal?: AbortSignal): Promise<WaitAnswer> {
  const now = whatToDo(s)
  if (now !== undefined) return now
  return await new Promise<WaitAnswer>(resolve => {
    let finished = false
    const finish = (a: WaitAnswer): void => {
      if (finished) return
      finished = true
      unsubscribe()
      clearInterval(tick)
      clearTimeout(deadline)
      signal?.removeEventListener('abort', onAbort)
      resolve(a)
    }
    const look = (): void => { const a = whatToDo(s); if (a !== undefined) finish(a) }
    const onAbort = (): void => { finish(whatToDo(s, true) as WaitAnswer) }
    // Answers after the entry that woke it has reached every listener.
    const unsubscribe = s.onChange(() => { setImmediate(look) })
    const tick = setInterval(look, RECHECK_MS)
    const deadline = setTimeout(onAbort, timeoutMs)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
