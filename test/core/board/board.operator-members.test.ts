// Membership as operator actions: the operators' allow-list and removals,
// folded the same on every replica. A removed member's entries after the seq
// its removal names count for nothing (its goal and operator entries aside),
// it is no longer live, so its tasks are taken over as a dead agent's; an
// action signed by a member's key, or in a swarm without an operator, removes
// nobody.
import { beforeAll, describe, expect, it } from 'vitest'
import { Board } from '../../../src/core/board/board.js'
import { signOperatorAction } from '../../../src/core/operator/index.js'
import type { BoardEntry } from '../../../src/core/board/types.js'
import type { Signer } from '../../../src/core/log/crypto.js'
import { EntryWriter } from './helpers.js'
import { carry, newSigner, signed } from '../operator/helpers.js'

let op: Signer
let member: Signer
let ada: string
let bo: string
let cy: string

beforeAll(async () => {
  op = await newSigner()
  member = await newSigner()
  ada = (await newSigner()).author
  bo = (await newSigner()).author
  cy = (await newSigner()).author
})

const fold = (entries: readonly BoardEntry[], operators?: string[]): Board => {
  const b = new Board({ operators })
  for (const e of entries) b.apply(e)
  return b
}

describe("the operators' allow-list", () => {
  it('is every peer their member_allow actions named, less those removed', () => {
    const w = new EntryWriter()
    const b = fold(
      [
        carry(w, ada, signed(op, 1, { kind: 'member_allow', peers: [ada, bo] })),
        carry(w, ada, signed(op, 2, { kind: 'member_allow', peers: [cy] })),
        carry(w, ada, signed(op, 3, { kind: 'member_remove', peers: [bo], afterSeq: 0 }))
      ],
      [op.author]
    )
    expect(b.membership()).toEqual({ allowed: [ada, cy].sort(), removed: [{ peer: bo, afterSeq: 0, by: op.author, time: 3 }] })
  })

  it('takes no malformed peer id, nor an empty list', () => {
    expect(() => signOperatorAction(op, { id: 'x', time: 1, kind: 'member_allow', peers: ['not-a-peer'] })).toThrow(
      /names 1 to 256 peer ids/
    )
    expect(() => signOperatorAction(op, { id: 'x', time: 1, kind: 'member_allow', peers: [] })).toThrow(/names 1 to 256 peer ids/)
    expect(() => signOperatorAction(op, { id: 'x', time: 1, kind: 'member_remove', peers: [ada, bo] })).toThrow(/names one peer id/)
  })
})

describe('a removed member', () => {
  /** bo claims a, adds task b, then (after its removal names seq 2) adds c and marks a done; the operator's pause rides on bo's seq 5 */
  function entries(): BoardEntry[] {
    const w = new EntryWriter()
    return [
      w.task(ada, { id: 'a' }),
      w.claim(bo, 'a', 1),
      w.task(bo, { id: 'b' }),
      carry(w, ada, signed(op, 10, { kind: 'member_remove', peers: [bo], afterSeq: 2 })),
      w.task(bo, { id: 'c' }),
      w.done(bo, 'a', 1),
      carry(w, bo, signed(op, 11, { kind: 'pause', text: 'carried by bo' }))
    ]
  }

  it('counts up to the seq its removal names; after it only its goal and operator entries count; its tasks are taken over', () => {
    const b = fold(entries(), [op.author])
    expect(b.isRemoved(bo)).toBe(true)
    expect(b.tasks(0).map(t => [t.id, t.state])).toEqual([
      ['a', 'expired'],
      ['b', 'open']
    ])
    expect(b.paused().paused).toBe(true)
    expect(b.checkClaimable('a', cy, 0).takeover).toMatchObject({ previousHolder: bo, expired: true })
  })

  it('gives the same board in any order of arrival, the removal first or last', () => {
    const all = entries()
    const expected = fold(all, [op.author])
    for (const order of [[...all].reverse(), [all[3], ...all.slice(0, 3), ...all.slice(4)], [...all.slice(4), ...all.slice(0, 4)]]) {
      const b = fold(order, [op.author])
      expect(b.tasks(0)).toEqual(expected.tasks(0))
      expect(b.membership()).toEqual(expected.membership())
    }
  })

  it("is not removed by a member's key, which counts against the carrier, nor in a swarm without an operator", () => {
    const w = new EntryWriter()
    const forged = carry(w, cy, signed(member, 10, { kind: 'member_remove', peers: [bo], afterSeq: 0 }))
    const b = fold([w.claim(bo, 'a', 1), w.task(bo, { id: 'a' }), forged], [op.author])
    expect(b.isRemoved(bo)).toBe(false)
    expect(b.operatorVerdict(forged.id)).toBe('not_operator')
    expect(b.operatorRefusals()).toEqual([{ author: cy, count: 1 }])
    const w2 = new EntryWriter()
    const none = fold([w2.task(bo, { id: 'a' }), carry(w2, ada, signed(op, 1, { kind: 'member_remove', peers: [bo], afterSeq: 0 }))])
    expect(none.isRemoved(bo)).toBe(false)
    expect(none.tasks(0).map(t => t.id)).toEqual(['a'])
  })

  it('comes back whole if the removal stops counting (the operators named by the first goal change)', () => {
    const w = new EntryWriter()
    const opGoal = carry(w, ada, signed(op, 1, { kind: 'goal', goal: { text: 'g' }, operators: [op.author] }), 5)
    const removal = carry(w, ada, signed(op, 2, { kind: 'member_remove', peers: [bo], afterSeq: 0 }), 6)
    const task = w.task(bo, { id: 'b' }, 7)
    const earlierPlainGoal = w.goal(cy, 'plain', 1)
    const b = fold([opGoal, removal, task])
    expect(b.isRemoved(bo)).toBe(true)
    expect(b.task('b', 0)).toBeUndefined()
    b.apply(earlierPlainGoal)
    expect(b.operators().source).toBe('none')
    expect(b.isRemoved(bo)).toBe(false)
    expect(b.task('b', 0)?.id).toBe('b')
  })
})
