// The operator's action kinds and what each must carry. Adding a kind is one
// row here plus the view that reads it; the signature, the fold's judgement
// and the audit take every kind alike.
import type { OperatorAction } from '../../gen/agency/v1/log.js'
import { isValidTaskId } from '../board/task-id.js'
import { authorKey } from '../log/crypto.js'
import { budgetFault } from '../spend/spend-bounds.js'

/** Most peer ids one member_allow action names. */
export const MAX_ACTION_PEERS = 256

/** A member's peer id: an Ed25519 public key, as a daemon's identity has. */
const isPeerId = (id: string): boolean => id !== '' && authorKey(id) !== null

/** What an action of each kind must carry: a reason it is malformed, or undefined. */
const RULES = {
  goal: (a: OperatorAction) => (a.goal === undefined || a.goal.text.trim() === '' ? 'a goal action needs the goal text' : undefined),
  pause: () => undefined,
  resume: () => undefined,
  task: taskFault,
  task_cancel: taskFault,
  task_priority: taskFault,
  message: (a: OperatorAction) => (a.text.trim() === '' ? 'a message needs text' : undefined),
  approval: (a: OperatorAction) => (a.request === '' ? 'an approval needs the request id' : undefined),
  budget: (a: OperatorAction) => (a.budget === undefined ? 'a budget action needs its caps' : (budgetFault(a.budget) ?? undefined)),
  member_allow: (a: OperatorAction) =>
    a.peers.length === 0 || a.peers.length > MAX_ACTION_PEERS || !a.peers.every(isPeerId)
      ? `a member_allow action names 1 to ${MAX_ACTION_PEERS} peer ids`
      : undefined,
  member_remove: (a: OperatorAction) =>
    a.peers.length !== 1 || !isPeerId(a.peers[0]) || !Number.isSafeInteger(a.afterSeq)
      ? 'a member_remove action names one peer id and the seq its feed counts up to'
      : undefined
} satisfies Record<string, (a: OperatorAction) => string | undefined>

export type OperatorActionKind = keyof typeof RULES

export const OPERATOR_ACTION_KINDS: readonly OperatorActionKind[] = Object.freeze(Object.keys(RULES) as OperatorActionKind[])

/**
 * Plain entry kinds that, in a swarm with an operator, count only when an
 * operator signed them (as an action of the same name): a member's own entry
 * of such a kind is refused by every replica and counted against its author.
 */
export const OPERATOR_ONLY_ENTRY_KINDS: ReadonlySet<string> = new Set(['goal', 'budget'])

/** Longest action id: ids are random hex, 32 characters from `agency`. */
export const MAX_ACTION_ID_LENGTH = 64

export function isOperatorActionKind(kind: string): kind is OperatorActionKind {
  return Object.hasOwn(RULES, kind)
}

/** Why an action is malformed (whatever its signature says), or undefined when it is sound. */
export function actionFault(a: OperatorAction): string | undefined {
  if (a.operator === '') return 'no operator key'
  if (a.id === '' || a.id.length > MAX_ACTION_ID_LENGTH || !/^[0-9a-zA-Z_-]+$/.test(a.id)) return 'the action id is not a short token'
  if (!Number.isSafeInteger(a.time) || a.time <= 0) return 'no time'
  if (!isOperatorActionKind(a.kind)) return `unknown operator action kind ${JSON.stringify(a.kind.slice(0, 40))}`
  return RULES[a.kind](a)
}

function taskFault(a: OperatorAction): string | undefined {
  return a.task === undefined || !isValidTaskId(a.task.id) ? 'a task action needs a task id (a slug)' : undefined
}
