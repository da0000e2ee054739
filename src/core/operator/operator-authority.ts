// Who steers the swarm, and which carried actions count: a deterministic
// judgement over the board's entries and this daemon's configured keys, the
// same on every replica that holds the same entries and configuration.
//
// The operators are the configured keys; without any, the keys the swarm's
// first goal carries when that goal is an operator's action signed by one of
// them (trust on the first goal); else there is no operator and the swarm
// works as it did before operators existed: any member may set the goal.
//
// An action counts when its signature is good and its key is an operator's.
// One action id counts once, whoever carries it (a replay is the same action),
// and operator actions take effect in the operator's order (its time, then
// the id), not the carriers': a member that carries an old action again
// cannot undo a newer one. A forged or malformed action, and a member's own
// goal or budget entry while operators govern, count for nothing and against
// the member that wrote the entry.
import type { OperatorAction } from '../../gen/agency/v1/log.js'
import type { GoalView } from '../board/goal-history.js'
import { compareText } from '../board/order.js'
import type { CarriedAction } from './operator-book.js'
import { isOperatorKey } from './operator-keys.js'

export type OperatorSource = 'config' | 'goal' | 'none'

/** What a carried action came to: only `accepted` has effect; the last three count against the carrier. */
export type ActionVerdict = 'accepted' | 'replayed' | 'no_operator' | 'not_operator' | 'bad_signature' | 'malformed'

export const REFUSED_VERDICTS: ReadonlySet<ActionVerdict> = new Set(['not_operator', 'bad_signature', 'malformed'])

export interface AcceptedAction {
  action: OperatorAction
  /** the carrying entry */
  entryId: string
  carrier: string
  lamport: number
}

export interface PlainGoal {
  author: string
  lamport: number
  entryId: string
}

export interface JudgeInput {
  /** keys this daemon was started with (parseOperatorKeys) */
  configured: readonly string[]
  /** members' own goal entries, in fold order */
  plainGoals: readonly PlainGoal[]
  /** members' own entries of the other operator-only kinds (a budget), in fold order */
  plainOthers?: ReadonlyArray<{ author: string }>
  carried: readonly CarriedAction[]
}

export class OperatorAuthority {
  readonly keys: readonly string[]
  readonly source: OperatorSource
  /** one per action id, in operator order (time, id) */
  readonly accepted: readonly AcceptedAction[]
  /** carrying entry id -> verdict */
  private readonly verdicts = new Map<string, ActionVerdict>()
  private readonly refused = new Map<string, number>()

  constructor(input: JudgeInput) {
    const { keys, source } = chooseOperators(input)
    this.keys = keys
    this.source = source
    const operators = new Set(keys)
    // per action id, the one copy that counts: the smallest signed bytes (two
    // different actions under one id can only come from an operator), then the first carrier
    const chosen = new Map<string, CarriedAction>()
    for (const c of input.carried) {
      const verdict = judgeOne(c, operators)
      this.verdicts.set(c.id, verdict)
      if (verdict !== 'accepted') continue
      const id = (c.action as OperatorAction).id
      const had = chosen.get(id)
      if (had === undefined || c.hash < had.hash) chosen.set(id, c)
    }
    for (const c of input.carried) {
      const verdict = this.verdicts.get(c.id) as ActionVerdict
      if (verdict === 'accepted' && chosen.get((c.action as OperatorAction).id) !== c) this.verdicts.set(c.id, 'replayed')
      if (REFUSED_VERDICTS.has(verdict)) this.countAgainst(c.author)
    }
    if (keys.length > 0) for (const g of [...input.plainGoals, ...(input.plainOthers ?? [])]) this.countAgainst(g.author)
    this.accepted = [...chosen.values()]
      .map(c => ({ action: c.action as OperatorAction, entryId: c.id, carrier: c.author, lamport: c.lamport }))
      .sort((a, b) => a.action.time - b.action.time || compareText(a.action.id, b.action.id))
  }

  /** Whether operators govern the swarm (else: anyone may set the goal, as before). */
  get governs(): boolean {
    return this.keys.length > 0
  }

  verdict(entryId: string): ActionVerdict | undefined {
    return this.verdicts.get(entryId)
  }

  /** Members whose entries tried operator actions they could not make, with how many, by author. */
  refusals(): Array<{ author: string; count: number }> {
    return [...this.refused].sort(([a], [b]) => compareText(a, b)).map(([author, count]) => ({ author, count }))
  }

  /** Accepted actions of some kinds, in operator order. */
  ofKind(...kinds: string[]): AcceptedAction[] {
    return this.accepted.filter(a => kinds.includes(a.action.kind))
  }

  /** The operators' goals, oldest first. */
  goalHistory(): GoalView[] {
    return this.ofKind('goal').map(a => {
      const g = a.action.goal as NonNullable<OperatorAction['goal']>
      return {
        text: g.text,
        files: [...g.files],
        testCommand: g.testCommand,
        setBy: a.action.operator,
        time: a.action.time,
        lamport: a.lamport,
        entryId: a.entryId
      }
    })
  }

  private countAgainst(author: string): void {
    this.refused.set(author, (this.refused.get(author) ?? 0) + 1)
  }
}

function judgeOne(c: CarriedAction, operators: ReadonlySet<string>): ActionVerdict {
  if (c.fault !== undefined) return c.fault
  if (operators.size === 0) return 'no_operator'
  return operators.has((c.action as OperatorAction).operator) ? 'accepted' : 'not_operator'
}

/** The configured keys; else those of a first goal that is an operator's, signed by one of them. */
function chooseOperators(input: JudgeInput): { keys: readonly string[]; source: OperatorSource } {
  if (input.configured.length > 0) return { keys: [...input.configured], source: 'config' }
  let first: { lamport: number; author: string; entryId: string; carried?: CarriedAction } | undefined
  const earlier = (x: { lamport: number; author: string; entryId: string }): boolean =>
    first === undefined ||
    x.lamport < first.lamport ||
    (x.lamport === first.lamport && (x.author < first.author || (x.author === first.author && x.entryId < first.entryId)))
  const plain = input.plainGoals[0]
  if (plain !== undefined) first = plain
  for (const c of input.carried) {
    if (c.fault !== undefined || c.action?.kind !== 'goal') continue
    const candidate = { lamport: c.lamport, author: c.author, entryId: c.id, carried: c }
    if (earlier(candidate)) first = candidate
    break // carried actions are in (lamport, author) order: the first goal among them is the earliest
  }
  const action = first?.carried?.action
  if (action === undefined || !action.operators.includes(action.operator)) return { keys: [], source: 'none' }
  return { keys: [...new Set(action.operators.filter(isOperatorKey))].sort(), source: 'goal' }
}
