// Hand-off by speed, sans-IO (issue #20: "a holder that is much slower than
// its peers hands the task to a faster helper"). One rule for agentd and the
// simulator; the time is passed in.
//
// - When: a holder is slow on its task once it has been at it for longer than
//   `factor` x the task's usual time, and longer than the floor. agentd cannot
//   know a task's usual time: it takes the median claim-to-done time of the
//   tasks their holders finished (usualTaskMs over board.doneTimesByAgent),
//   and the time since the holder's claim;
//   the simulator knows each task's effort and the time since the attempt
//   began. With no usual time (nothing done yet) nobody is slow.
// - Earlier for a holder slow by its record (response speed): one whose own
//   usual time (the median claim-to-done of the tasks it finished as their
//   holder, at least RECORD_MIN_DONE of them) is above `factor` x the board's
//   is slow on a task once at it for longer than the usual time (and the
//   floor): by then a peer of usual speed would have been done, while the
//   holder, by its record, has more than as long again to go.
// - Not while the holder's work is on its way to the shared branch (an
//   integration running, or a request waiting for the integrator): it may be
//   about to land.
// - To whom: a live peer that is not itself slow: its own usual time (the
//   median claim-to-done of the tasks it finished as their holder) is not
//   above `factor` x the board's; an agent with no done task counts as not
//   slow. An assistant already on the task first (it knows the task), then
//   an idle agent (holding no task and assisting none); among equals the
//   faster one, then the higher rendezvous score of (task, agent), so that two
//   holders' daemons do not pick the same idle agent.
// - factor 0 turns hand-off off.

import { rendezvousScore } from './claim-choice.js'
import { compareText } from './order.js'

export interface HandoffPolicy {
  /** a holder is slow past factor x the usual time; 0: no hand-off */
  factor: number
  /** and past this long at least, ms */
  floorMs: number
}

export const HANDOFF_DEFAULTS: Readonly<HandoffPolicy> = Object.freeze({ factor: 2, floorMs: 15 * 60_000 })

/** Done tasks a holder's record needs before it can make the holder slow by it (one stalled task makes no slow agent). */
export const RECORD_MIN_DONE = 2

/** A peer the task may be handed to. */
export interface HandoffPeer {
  agent: string
  /** it assists the task now */
  assisting: boolean
  /** its own usual time (median claim-to-done of the tasks it finished), ms; undefined: none done */
  usualMs?: number
  /** slow by another measure the caller has (the simulator's agents know it); default: judged by usualMs */
  slow?: boolean
}

export interface HandoffInput {
  task: string
  holder: string
  /** how long the holder has been at the task, ms */
  heldMs: number
  /** the task's usual time, ms; undefined when unknown (nothing done yet) */
  usualMs: number | undefined
  /** the holder's work is on its way to the shared branch */
  merging: boolean
  /** the holder's own claim-to-done times as the holder of the tasks it finished, ms (its record); absent: none */
  holderDone?: readonly number[]
  /** live peers that may take the task (the holder among them is ignored) */
  peers: readonly HandoffPeer[]
  policy: HandoffPolicy
}

export type HandoffDecision = { receiver: HandoffPeer; limitMs: number; text: string } | { receiver?: undefined; refusal: string }

/** The median of `ms` (any order); undefined when empty. */
export function usualTaskMs(ms: readonly number[]): number | undefined {
  if (ms.length === 0) return undefined
  const sorted = [...ms].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/**
 * How long a holder may be at a task before it counts as slow, ms; undefined:
 * never (off, or no usual time). `holderDone`: the holder's record (its own
 * claim-to-done times); a holder slow by it may be at a task for the usual
 * time only.
 */
export function handoffLimitMs(usualMs: number | undefined, policy: HandoffPolicy, holderDone: readonly number[] = []): number | undefined {
  if (!(policy.factor > 0) || usualMs === undefined) return undefined
  return Math.max(policy.floorMs, (slowByRecord(holderDone, usualMs, policy) ? 1 : policy.factor) * usualMs)
}

/** Whether a holder's record (its claim-to-done times, at least RECORD_MIN_DONE) makes it slow beside the board's usual time. */
export function slowByRecord(done: readonly number[], usualMs: number | undefined, policy: HandoffPolicy): boolean {
  return done.length >= RECORD_MIN_DONE && slowAgent(usualTaskMs(done), usualMs, policy)
}

/** Whether a holder at its task for `heldMs` should hand it off, a receiver aside. */
export function handoffDue(
  heldMs: number,
  usualMs: number | undefined,
  merging: boolean,
  policy: HandoffPolicy,
  holderDone: readonly number[] = []
): boolean {
  const limit = handoffLimitMs(usualMs, policy, holderDone)
  return limit !== undefined && !merging && heldMs > limit
}

/** Whether an agent whose own usual time is `agentMs` is slow beside the board's `usualMs`. */
export function slowAgent(agentMs: number | undefined, usualMs: number | undefined, policy: HandoffPolicy): boolean {
  return policy.factor > 0 && agentMs !== undefined && usualMs !== undefined && agentMs > policy.factor * usualMs
}

/** Whether `peer` may take a task handed off: not the holder, not slow. */
export function mayReceive(peer: HandoffPeer, holder: string, usualMs: number | undefined, policy: HandoffPolicy): boolean {
  return peer.agent !== holder && !(peer.slow ?? slowAgent(peer.usualMs, usualMs, policy))
}

/** Whether the holder should hand its task off now, and to whom; with the reason either way. */
export function chooseHandoff(input: HandoffInput): HandoffDecision {
  const { task, holder, heldMs, usualMs, merging, policy } = input
  if (!(policy.factor > 0)) return { refusal: 'hand-off by speed is off (agentd --handoff-factor 0)' }
  const holderDone = input.holderDone ?? []
  const limitMs = handoffLimitMs(usualMs, policy, holderDone)
  if (limitMs === undefined) return { refusal: 'no task is done yet: there is no usual time to be slow against' }
  const byRecord = slowByRecord(holderDone, usualMs, policy)
  const record = byRecord
    ? `; ${holder}'s own median ${minutes(usualTaskMs(holderDone) as number)} over ${holderDone.length} done tasks is more than ${policy.factor} x that`
    : ''
  if (heldMs <= limitMs)
    return {
      refusal: `${task} has been held for ${minutes(heldMs)}; it is handed off past ${minutes(limitMs)} (${byRecord ? '1' : policy.factor} x the median claim-to-done time ${minutes(usualMs as number)}${record}, at least ${minutes(policy.floorMs)})`
    }
  if (merging) return { refusal: `${task}'s work is on its way to the shared branch` }
  const fit = input.peers.filter(p => mayReceive(p, holder, usualMs, policy))
  if (fit.length === 0) return { refusal: `no live peer that is not slow is free to take ${task}` }
  const known = (p: HandoffPeer): number => p.usualMs ?? (usualMs as number)
  fit.sort(
    (a, b) =>
      Number(b.assisting) - Number(a.assisting) ||
      known(a) - known(b) ||
      rendezvousScore(b.agent, task) - rendezvousScore(a.agent, task) ||
      compareText(a.agent, b.agent)
  )
  const receiver = fit[0]
  const factor = byRecord ? 1 : policy.factor
  const text = `${holder} held ${task} for ${minutes(heldMs)}, more than ${byRecord ? 'the' : `${policy.factor} x the`} median claim-to-done time of the done tasks (${minutes(usualMs as number)}${record}${limitMs > factor * (usualMs as number) ? `; floor ${minutes(policy.floorMs)}` : ''}): handed to ${receiver.agent}${receiver.assisting ? ', its assistant' : ''}${receiver.usualMs !== undefined ? ` (median ${minutes(receiver.usualMs)})` : ''}`
  return { receiver, limitMs, text }
}

function minutes(ms: number): string {
  if (ms < 60_000) return `${Math.round(ms / 1000)} s`
  return `${Math.round(ms / 60_000)} min`
}
