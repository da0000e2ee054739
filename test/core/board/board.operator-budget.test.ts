// The budget as an operator action: in a swarm with an operator only the
// operator's signed budget counts (the latest in the operator's order), a
// member's own budget entry counts for nothing and against its author, and
// a budget action with caps out of range is malformed. Without an operator
// the members' budget entries hold, as before.
import { beforeAll, describe, expect, it } from 'vitest'
import { Board } from '../../../src/core/board/board.js'
import { BudgetHistory } from '../../../src/core/spend/index.js'
import { signOperatorAction } from '../../../src/core/operator/index.js'
import { Budget, OperatorAction } from '../../../src/gen/agency/v1/log.js'
import type { Signer } from '../../../src/core/log/crypto.js'
import type { BoardEntry } from '../../../src/core/board/types.js'
import { EntryWriter } from './helpers.js'
import { carry, newSigner, signed } from '../operator/helpers.js'

let op: Signer
let member: Signer

beforeAll(async () => {
  op = await newSigner()
  member = await newSigner()
})

/** Folds the budget entries of `entries` as core/spend does, and the board's judgement over all of them. */
function fold(board: Board, entries: BoardEntry[]): BudgetHistory {
  const history = new BudgetHistory()
  for (const e of entries) {
    board.apply(e)
    if (e.kind === 'budget') history.add(e, e.body)
  }
  return history
}

const usd = (n: number): Budget => Budget.fromPartial({ microUsd: n * 1e6 })

describe('the budget in a swarm with an operator', () => {
  it("is the operator's latest budget action, in the operator's order", () => {
    const w = new EntryWriter()
    const b = new Board({ operators: [op.author] })
    const later = carry(w, 'm1', signed(op, 20, { kind: 'budget', budget: { microUsd: 5e6, tokens: 1000 } }))
    // carried later in lamport order, but the operator made it first
    const earlier = carry(w, 'm2', signed(op, 10, { kind: 'budget', budget: { microUsd: 9e6 } }))
    const budgets = fold(b, [later, earlier])
    expect(budgets.current(b.operatorBudget())).toEqual({
      microUsd: 5e6,
      tokens: 1000,
      agentSeconds: 0,
      perAgentMicroUsd: 0,
      setBy: op.author,
      entryId: later.id
    })
    expect(b.operatorActions().map(a => a.summary)).toEqual(['budget: $9', 'budget: $5, 1000 tokens'])
  })

  it("refuses a member's own budget entry and counts it against its author", () => {
    const w = new EntryWriter()
    const b = new Board({ operators: [op.author] })
    const own = w.entry('m2', 'budget', usd(1_000_000))
    const budgets = fold(b, [carry(w, 'm1', signed(op, 10, { kind: 'budget', budget: { microUsd: 5e6 } })), own])
    expect(budgets.current(b.operatorBudget())?.microUsd).toBe(5e6)
    expect(b.operatorRefusals()).toEqual([{ author: 'm2', count: 1 }])
    // before any operator budget, a member's own still counts for nothing
    const b2 = new Board({ operators: [op.author] })
    const w2 = new EntryWriter()
    expect(fold(b2, [w2.entry('m2', 'budget', usd(7))]).current(b2.operatorBudget())).toBeUndefined()
  })

  it("refuses a budget action signed by a member's key, counted against its carrier", () => {
    const w = new EntryWriter()
    const b = new Board({ operators: [op.author] })
    const forged = carry(w, 'm2', signed(member, 30, { kind: 'budget', budget: { microUsd: 1e12 } }))
    const budgets = fold(b, [carry(w, 'm1', signed(op, 10, { kind: 'budget', budget: { microUsd: 5e6 } })), forged])
    expect(budgets.current(b.operatorBudget())?.microUsd).toBe(5e6)
    expect(b.operatorVerdict(forged.id)).toBe('not_operator')
    expect(b.operatorRefusals()).toEqual([{ author: 'm2', count: 1 }])
  })

  it('takes no negative or out-of-range cap: the signer refuses it, and a hand-built one is malformed everywhere', () => {
    expect(() => signOperatorAction(op, { id: 'x1', time: 1, kind: 'budget', budget: { microUsd: -1 } })).toThrow(
      /a dollar cap is out of range/
    )
    expect(() => signOperatorAction(op, { id: 'x2', time: 1, kind: 'budget' })).toThrow(/a budget action needs its caps/)
    expect(() => signOperatorAction(op, { id: 'x3', time: 1, kind: 'budget', budget: { tokens: 1e16 } })).toThrow(
      /token cap is out of range/
    )
    // signed over bytes the signer would not make: the signature is good, the action is not
    const bytes = OperatorAction.encode(
      OperatorAction.fromPartial({ operator: op.author, id: 'x4', time: 5, kind: 'budget', budget: { agentSeconds: 1e12 } })
    ).finish()
    const w = new EntryWriter()
    const b = new Board({ operators: [op.author] })
    const bad = carry(w, 'm1', { action: Buffer.from(bytes), sig: Buffer.from(op.sign('agency/operator/v1', bytes)) })
    expect(fold(b, [bad]).current(b.operatorBudget())).toBeUndefined()
    expect(b.operatorVerdict(bad.id)).toBe('malformed')
  })
})

describe('the budget in a swarm without an operator', () => {
  it("is the latest budget entry, as before; an operator's budget action counts for nothing", () => {
    const w = new EntryWriter()
    const b = new Board()
    const action = carry(w, 'm1', signed(op, 10, { kind: 'budget', budget: { microUsd: 5e6 } }))
    const own = w.entry('m2', 'budget', usd(3))
    const budgets = fold(b, [action, own])
    expect(budgets.current(b.operatorBudget())).toMatchObject({ microUsd: 3e6, setBy: 'm2' })
    expect(b.operatorVerdict(action.id)).toBe('no_operator')
    expect(b.operatorRefusals()).toEqual([])
  })
})
