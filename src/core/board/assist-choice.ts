// Which held task an idle agent assists, and the checks an assist must pass,
// sans-IO (issue #20, "idle agents help"). The rule, in full:
//
// - Who may assist: an agent that holds no task and assists none (one assist
//   at a time; `agency assist --stop` ends one).
// - Which tasks: held by a live peer (state "claimed": an expired one is
//   claimed instead, a takeover), not done, not the plan task, held for at
//   least the floor, with fewer live assistants than the budget.
//   - floor: a daemon option (`agentd --assist-after`), default 0: an idle
//     agent may assist a task as soon as it is held. Waiting for the median
//     done time would keep idle agents idle while the critical path's
//     holders work alone: the simulator's 128- and 1024-agent runs reach
//     90 % 8 to 15 % later with it. How long a task is held is this
//     daemon's wall clock minus the holder's claim entry time: a skewed
//     clock moves when help may start, nothing else.
//   - budget: assistants per task (default 2, a daemon option), counting the
//     assists in progress whose assistant is live. The budget is the
//     redundancy the swarm pays for: at most budget + 1 agents on a task.
//     While more agents are free than assist places are left, every held task
//     has `spare` more places (default 2, agentd --assist-spare): the rule is
//     assist-spare.ts.
// - Which first: the critical path. The task with the longest chain of
//   not-done tasks that depend on it (directly or through others) first; then
//   the one held longest; then the higher rendezvous score of (agent, task),
//   so that idle agents spread over equal candidates.
// - The approach: every assistant names one, and it must differ from every
//   approach already announced on the task (in progress or tried): two
//   approaches are the same when their words, lowercased, with punctuation
//   dropped, overlap by 80 % or more (Jaccard over the sets of words).

import { FailedPreconditionError, InvalidArgumentError, NotFoundError } from '../errors.js'
import type { AssistBook, ApproachView } from './assist-book.js'
import type { Board, TaskView } from './board.js'
import { rendezvousScore } from './claim-choice.js'
import { compareText } from './order.js'
import { PLAN_TASK_ID } from './plan-task.js'
import { validateTaskId } from './task-id.js'
import { onItsWay } from './carry-on.js'
import { assistBudgetNow, assistPlacesLeft } from './assist-spare.js'
import { PLAN_NOT_ASSISTED, assistingAlready, claimInsteadOfAssist, holderMayNotAssist, nameYourApproach } from '../agent-words.js'

export interface AssistPolicy {
  /** assistants per task at most */
  budget: number
  /** a task is assisted only once held for at least this long (ms); 0: at once */
  floorMs: number
  /** places per task beyond the budget while more agents are free than places are left (assist-spare.ts); absent or 0: none */
  spare?: number
}

export const ASSIST_DEFAULTS: Readonly<Required<AssistPolicy>> = Object.freeze({ budget: 2, floorMs: 0, spare: 2 })

export const MAX_APPROACH_CHARS = 2000
/** Word overlap (Jaccard) from which two approaches count as the same one. */
export const SAME_APPROACH_OVERLAP = 0.8

export interface AssistInput {
  board: Board
  book: AssistBook
  me: string
  /** this daemon's monotonic time: the board's liveness is judged by it */
  now: number
  /** this daemon's wall clock (ms since the epoch): for how long a task has been held */
  wallNow: number
  /** whether a peer is live here (an assistant that is not counts for nothing) */
  isLive: (peer: string) => boolean
  policy: AssistPolicy
  /**
   * live agents holding no task (but those on their way) and assisting none, `me` among them if it is so; undefined: not known (no spare
   * places)
   */
  freeAgents?: number
}

export interface AssistCandidate {
  task: string
  holder: string
  epoch: number
  /** how long the holder has held it, ms */
  heldMs: number
  /** not-done tasks along its longest chain of dependents */
  chain: number
  /** live assists in progress */
  assistants: ApproachView[]
  /** every approach announced on it, oldest first */
  approaches: ApproachView[]
  /** the floor it was judged by, ms */
  thresholdMs: number
  /** assistants it may have now: the budget, or more while many agents are free (assist-spare.ts) */
  budget: number
  /** why it may not be assisted now; '' when it may */
  refusal: string
}

/**
 * For every not-done task, the number of not-done tasks along its longest
 * chain of dependents (0: nothing waits on it).
 */
export function dependentChains(tasks: readonly TaskView[]): Map<string, number> {
  const open = tasks.filter(t => t.state !== 'done')
  const dependents = new Map<string, string[]>()
  for (const t of open) {
    for (const d of t.deps) {
      const list = dependents.get(d) ?? []
      list.push(t.id)
      dependents.set(d, list)
    }
  }
  const memo = new Map<string, number>()
  const onPath = new Set<string>()
  const chain = (id: string): number => {
    const known = memo.get(id)
    if (known !== undefined) return known
    if (onPath.has(id)) return 0 // a cycle cannot be added, but a fold must not loop on one
    onPath.add(id)
    let best = 0
    for (const d of dependents.get(id) ?? []) best = Math.max(best, 1 + chain(d))
    onPath.delete(id)
    memo.set(id, best)
    return best
  }
  const out = new Map<string, number>()
  for (const t of open) out.set(t.id, chain(t.id))
  return out
}

/** Every task held by a live peer, with whether `me` may assist it and why not; best first. */
export function assistCandidates(input: AssistInput): AssistCandidate[] {
  const { board, book, me, now, wallNow, policy } = input
  const tasks = board.tasks(now)
  const chains = dependentChains(tasks)
  const thresholdMs = policy.floorMs
  const out: AssistCandidate[] = []
  for (const t of tasks) {
    if (t.state !== 'claimed' || t.holder === undefined || t.holder === me || t.id === PLAN_TASK_ID) continue
    const heldMs = Math.max(0, wallNow - (board.claimTime(t.id) ?? wallNow))
    const assistants = book.active(t.id).filter(a => a.author !== me && input.isLive(a.author))
    out.push({
      task: t.id,
      holder: t.holder,
      epoch: t.epoch,
      heldMs,
      chain: chains.get(t.id) ?? 0,
      assistants,
      approaches: book.approaches(t.id),
      thresholdMs,
      budget: policy.budget,
      refusal: ''
    })
  }
  const open = out.filter(c => c.heldMs >= thresholdMs)
  const budget = assistBudgetNow(
    policy.budget,
    policy.spare ?? 0,
    input.freeAgents,
    assistPlacesLeft(
      policy.budget,
      open.map(c => c.assistants.length)
    )
  )
  for (const c of out) {
    c.budget = budget
    if (c.heldMs < thresholdMs)
      c.refusal = `${c.task} has been held for ${minutes(c.heldMs)}; a task may be assisted once held for ${minutes(thresholdMs)} (agentd --assist-after)`
    else if (c.assistants.length >= budget)
      c.refusal = `${c.task} has ${c.assistants.length} assistant(s) already, the budget per task (${budgetText(policy, budget)})`
  }
  return out.sort(
    (a, b) =>
      b.chain - a.chain || b.heldMs - a.heldMs || rendezvousScore(me, b.task) - rendezvousScore(me, a.task) || compareText(a.task, b.task)
  )
}

/**
 * The task `me` should assist: the best candidate it may assist, or
 * undefined when there is none. Throws like checkAssister when `me` may not
 * assist at all.
 */
export function chooseAssist(input: AssistInput): AssistCandidate | undefined {
  checkAssister(input)
  return assistCandidates(input).find(c => c.refusal === '')
}

/**
 * Throws FailedPreconditionError when `me` holds a task (an assistant holds
 * nothing but tasks on their way to the shared branch: carry-on.ts) or
 * already assists one.
 */
export function checkAssister(input: AssistInput): void {
  const { board, book, me } = input
  const held = board.heldBy(me).filter(h => !onItsWay(board, me, h.task))
  if (held.length > 0) {
    throw new FailedPreconditionError(holderMayNotAssist(held.map(h => h.task)))
  }
  const current = book.current(me, id => board.doneRecord(id) !== undefined)
  if (current !== undefined) {
    throw new FailedPreconditionError(assistingAlready(current.task, current.text))
  }
}

/**
 * The candidate `me` may assist as `task`: throws InvalidArgumentError for a
 * bad id, NotFoundError for an unknown task, FailedPreconditionError when
 * `me` may not assist, or the task is done, not held by a live peer, held too
 * briefly or at its budget.
 */
export function checkAssistTask(input: AssistInput, task: string): AssistCandidate {
  validateTaskId(task)
  checkAssister(input)
  const t = input.board.task(task, input.now)
  if (t === undefined) throw new NotFoundError(`no task ${JSON.stringify(task)}`)
  if (task === PLAN_TASK_ID) throw new FailedPreconditionError(PLAN_NOT_ASSISTED)
  if (t.state === 'done') throw new FailedPreconditionError(`task ${task} is done (by ${t.doneBy ?? 'unknown'}): nothing to assist`)
  if (t.state !== 'claimed') throw new FailedPreconditionError(claimInsteadOfAssist(task, t.state))
  const c = assistCandidates(input).find(x => x.task === task) as AssistCandidate
  if (c.refusal !== '') throw new FailedPreconditionError(`cannot assist: ${c.refusal}`)
  return c
}

/**
 * The approach text, trimmed; throws InvalidArgumentError when it is empty
 * or too long, FailedPreconditionError when it is the same as one announced
 * on the task already.
 */
export function checkApproach(candidate: AssistCandidate, approach: string): string {
  const text = approach.trim()
  if (text === '') throw new InvalidArgumentError(nameYourApproach(candidate.task))
  if (text.length > MAX_APPROACH_CHARS)
    throw new InvalidArgumentError(`the approach is longer than ${MAX_APPROACH_CHARS} characters: say it in a sentence or two`)
  const same = candidate.approaches.find(a => sameApproach(a.text, text))
  if (same !== undefined) {
    throw new FailedPreconditionError(
      `that approach was announced on ${candidate.task} already by ${same.author} (${same.ended ? 'tried' : 'in progress'}: "${same.text}"): choose a different approach`
    )
  }
  return text
}

/** The words of an approach: lowercased runs of letters and digits. */
export function approachWords(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(w => w !== '')
}

/** Whether two approaches count as the same: their word sets overlap by SAME_APPROACH_OVERLAP or more. */
export function sameApproach(a: string, b: string): boolean {
  const x = new Set(approachWords(a))
  const y = new Set(approachWords(b))
  if (x.size === 0 || y.size === 0) return a.trim().toLowerCase() === b.trim().toLowerCase()
  let common = 0
  for (const w of x) if (y.has(w)) common++
  return common / (x.size + y.size - common) >= SAME_APPROACH_OVERLAP
}

function budgetText(policy: AssistPolicy, now: number): string {
  if ((policy.spare ?? 0) <= 0) return String(policy.budget)
  return now > policy.budget
    ? `${policy.budget}, ${now} while more agents are free than places are left`
    : `${policy.budget}; ${policy.budget + (policy.spare ?? 0)} while more agents are free than places are left (agentd --assist-spare)`
}

function minutes(ms: number): string {
  if (ms < 60_000) return `${Math.round(ms / 1000)} s`
  return `${Math.round(ms / 60_000)} min`
}
