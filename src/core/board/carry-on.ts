// Carry-on: a holder does not wait for its integration request. A task its
// holder asked the integrator to land, at the epoch it holds, is "on its way"
// while no integration answers the request (and once one answering it landed,
// until its done is written): it is not the holder's current task, so
// `claim --next` gives the holder another (claim-protocol current()), and the
// holder counts among the agents choosing a task (seekers). Its lease goes on:
// the holder holds the task until it is done.
//
// - Landed: a merged integration answering the holder's request at the
//   epoch it holds finishes the task. The holder's daemon writes the done
//   (carriedWithoutDone: a function of the board, so it is written at start
//   and whenever an integration is folded, whatever came before a restart).
// - Refused, failed, conflict: the request is answered and did not land, so
//   the task is the holder's current task again, to fix (its agent is told).
//
// - Carried here: a holder's daemon that verifies the change before it
//   writes the request (a background integrate while an integrator serves,
//   daemon/background-integration) keeps the task on its way for itself only, from a local
//   set of task -> epoch (onItsWayHere). Peers still see the holder at work
//   until the request is on the log; a stop empties the set, so after a
//   restart the task is its holder's current task again, never silently done.
//
// The simulator's carry-on (sim settings.carryOn) follows the same rule.

import type { Landing } from './landed-work.js'

/** A task's holder at its epoch, as the board answers it. */
interface HeldAt {
  task: string
  holder: string
  epoch: number
}

/**
 * What the carry-on rule reads of a board. The Board has all of it; the rule
 * names only this, so the board can ask it without the two importing each other.
 */
export interface CarryOnBoard {
  holder: (task: string) => HeldAt | undefined
  holders: () => Map<string, HeldAt>
  requestPending: (task: string, epoch: number, author: string) => boolean
  requestLanded: (task: string, epoch: number, author: string) => boolean
  landingsBy: (author: string) => Landing[]
}

/** Whether `me` holds `task` and asked for its integration at the epoch it holds, and the request is unanswered or landed. */
export function onItsWay(board: CarryOnBoard, me: string, task: string): boolean {
  const h = board.holder(task)
  if (h?.holder !== me) return false
  return board.requestPending(task, h.epoch, me) || board.requestLanded(task, h.epoch, me)
}

/**
 * onItsWay, or `me` holds `task` at the epoch its daemon carries it at locally (`carried`: task -> epoch), before any request is on the
 * log.
 */
export function onItsWayHere(board: CarryOnBoard, me: string, task: string, carried: ReadonlyMap<string, number>): boolean {
  if (onItsWay(board, me, task)) return true
  const h = board.holder(task)
  return h?.holder === me && carried.get(task) === h.epoch
}

/** The agents holding a task that is not on its way: at work on it, so neither choosing a task nor free to receive one. */
export function agentsAtWork(board: CarryOnBoard): Set<string> {
  const out = new Set<string>()
  for (const h of board.holders().values()) {
    if (!out.has(h.holder) && !onItsWay(board, h.holder, h.task)) out.add(h.holder)
  }
  return out
}

/**
 * The tasks `me` holds whose integration request at the held epoch landed
 * and that are not done: each wants `me`'s done at that epoch, naming the
 * landing's commit and paths. By task; one per task.
 */
export function carriedWithoutDone(board: CarryOnBoard, me: string): Landing[] {
  const out: Landing[] = []
  for (const l of board.landingsBy(me)) {
    const h = board.holder(l.task)
    if (h?.holder !== me || h.epoch !== l.epoch || !board.requestLanded(l.task, l.epoch, me)) continue
    out.push(l)
  }
  return out
}
