// `agency wait`: an agent with nothing to take blocks here instead of
// spinning, until there is something for it: the goal is met, a message or
// notice is unread, it holds a task, or a task is ready. The answer says which
// and what to do next.
import type { TaskView } from '../core/board/index.js'
import { GOAL_MET, WAIT_AGAIN, carryOnWith, readyToClaim, unreadInbox } from '../core/agent-words.js'

export type WaitReason = 'goal_met' | 'message' | 'held' | 'ready' | 'timeout'

export interface WaitAnswer {
  reason: WaitReason
  ready: TaskView[]
  unread: number
  text: string
}

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
/** Leases expire with time, not with entries: a wait looks again this often even if nothing arrives. */
export const RECHECK_MS = 1_000

export function whatToDo(s: WorkSources, timedOut = false): WaitAnswer | undefined {
  const unread = s.unread()
  if (s.goalMet()) return { reason: 'goal_met', ready: [], unread, text: GOAL_MET }
  if (unread > 0) return { reason: 'message', ready: [], unread, text: unreadInbox(unread) }
  const held = s.held()
  if (held.length > 0) return { reason: 'held', ready: [], unread, text: carryOnWith(held) }
  const ready = s.ready()
  if (ready.length > 0) return { reason: 'ready', ready, unread, text: readyToClaim(ready.map(t => t.id)) }
  if (timedOut) return { reason: 'timeout', ready: [], unread, text: WAIT_AGAIN }
  return undefined
}

export async function waitForWork(s: WorkSources, timeoutMs: number, signal?: AbortSignal): Promise<WaitAnswer> {
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
    const look = (): void => {
      const a = whatToDo(s)
      if (a !== undefined) finish(a)
    }
    const onAbort = (): void => {
      finish(whatToDo(s, true) as WaitAnswer)
    }
    // Answers after the entry that woke it has reached every listener.
    const unsubscribe = s.onChange(() => {
      setImmediate(look)
    })
    const tick = setInterval(look, RECHECK_MS)
    const deadline = setTimeout(onAbort, timeoutMs)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
