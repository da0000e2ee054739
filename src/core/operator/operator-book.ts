// The board's part that keeps every carried operator action, signed or not,
// in (lamport, author) order of the entries carrying them. Whether one counts
// depends on who the operators are (operator-authority.ts), which the same
// log can change (the first goal names them), so it is judged when asked,
// not here; here each is decoded and its signature checked once.
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

export class OperatorBook {
  private readonly carried: CarriedAction[] = []

  add (h: BoardEntryHeader, env: OperatorEnvelope): void {
    const opened = openEnvelope(env)
    const record: CarriedAction = { id: h.id, author: h.author, seq: h.seq, lamport: h.lamport, carriedAt: h.time, hash: opened.hash }
    if (opened.action !== undefined) record.action = opened.action
    if (opened.fault !== undefined) record.fault = opened.fault
    insertOrdered(this.carried, record)
  }

  /** In (lamport, author) order of the carrying entries. */
  all (): readonly CarriedAction[] {
    return this.carried
  }
}
