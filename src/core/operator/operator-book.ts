// The board's part that keeps every carried operator action, signed or not,
// in (lamport, author) order of the entries carrying them. Whether one counts
// depends on who the operators are (operator-authority.ts), which the same
// log can change (the first goal names them), so it is judged when asked,
// not here; here each is decoded and its signature checked once. It also
// keeps the members' own entries of the operator-only kinds other than the
// goal (action-kinds.ts), which count only while no operator governs.
import type { OperatorAction, OperatorEnvelope } from '../../gen/agency/v1/log.js'
import { insertOrdered, type Ordered } from '../board/order.js'
import type { BoardEntryHeader } from '../board/types.js'
import { openEnvelope, type EnvelopeFault } from './operator-signature.js'

export interface CarriedAction extends Ordered {
  /** the carrier's wall clock, informational */
  carriedAt: number
  /** sha256 of the signed bytes, hex */
  hash: string
  action?: OperatorAction
  fault?: EnvelopeFault
}

/** A member's own entry of an operator-only kind (a budget), by its header. */
export interface PlainOperatorEntry extends Ordered {
  kind: string
}

export class OperatorBook {
  private readonly carried: CarriedAction[] = []
  private readonly plain: PlainOperatorEntry[] = []
  /** whether any carried action is a member_remove, signed or not: only then is membership judged as entries arrive */
  private removals = false

  add(h: BoardEntryHeader, env: OperatorEnvelope): void {
    const opened = openEnvelope(env)
    const record: CarriedAction = { id: h.id, author: h.author, seq: h.seq, lamport: h.lamport, carriedAt: h.time, hash: opened.hash }
    if (opened.action !== undefined) record.action = opened.action
    if (opened.fault !== undefined) record.fault = opened.fault
    if (opened.action?.kind === 'member_remove') this.removals = true
    insertOrdered(this.carried, record)
  }

  carriesRemovals(): boolean {
    return this.removals
  }

  /** A member's own entry of an operator-only kind. */
  addPlain(h: BoardEntryHeader, kind: string): void {
    insertOrdered(this.plain, { id: h.id, author: h.author, seq: h.seq, lamport: h.lamport, kind })
  }

  /** The members' own operator-only entries (not goals), in (lamport, author) order. */
  plainEntries(): readonly PlainOperatorEntry[] {
    return this.plain
  }

  /** In (lamport, author) order of the carrying entries. */
  all(): readonly CarriedAction[] {
    return this.carried
  }
}
