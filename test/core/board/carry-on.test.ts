// Carry-on (core/board/carry-on.ts): a task whose holder's integration request
// at the held epoch waits for an answer (or landed) is on its way: not the
// holder's current task, and the holder is a seeker again; a landing wants the
// holder's done; a request answered without landing makes the task current
// again. Whatever order the entries are folded in.
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { Board } from '../../../src/core/board/board.js'
import { AssistBook } from '../../../src/core/board/assist-book.js'
import { ASSIST_DEFAULTS, checkAssister } from '../../../src/core/board/assist-choice.js'
import { carriedWithoutDone, onItsWay, onItsWayHere } from '../../../src/core/board/carry-on.js'
import { ClaimProtocol } from '../../../src/core/board/claim-protocol.js'
import type { BoardEntry } from '../../../src/core/board/types.js'
import { EntryWriter } from './helpers.js'

function fold(entries: readonly BoardEntry[]): Board {
  const board = new Board()
  for (const e of entries) board.apply(e)
  return board
}

/** amy holds a and b (a first), and asked integrator ivy to land a at epoch 1. */
function pending(w = new EntryWriter()): { entries: BoardEntry[]; request: BoardEntry } {
  const request = w.integrationRequest('amy', 'a', 1)
  return { entries: [w.task('p', { id: 'a' }), w.task('p', { id: 'b' }), w.claim('amy', 'a', 1), w.claim('amy', 'b', 1), request], request }
}

describe('a held task on its way to the shared branch', () => {
  it("is on its way while its request waits, and wants the holder's done once it landed, in every order", () => {
    const w = new EntryWriter()
    const { entries, request } = pending(w)
    expect(onItsWay(fold(entries), 'amy', 'a')).toBe(true)
    expect(onItsWay(fold(entries), 'amy', 'b')).toBe(false)
    expect(onItsWay(fold(entries), 'ivy', 'a')).toBe(false)
    const landed = [...entries, w.answer('ivy', request.id, 'a', 1)]
    fc.assert(
      fc.property(fc.shuffledSubarray(landed, { minLength: landed.length, maxLength: landed.length }), order => {
        const board = fold(order)
        expect(onItsWay(board, 'amy', 'a')).toBe(true)
        expect(carriedWithoutDone(board, 'amy')).toEqual([{ task: 'a', epoch: 1, author: 'amy', commit: 'm-a-1', paths: [] }])
      }),
      { numRuns: 100 }
    )
    const done = fold([...landed, w.done('amy', 'a', 1)])
    expect(carriedWithoutDone(done, 'amy')).toEqual([])
    expect(onItsWay(done, 'amy', 'a')).toBe(false)
  })

  it('is not on its way once its request is answered without landing, nor for a request at another epoch', () => {
    const w = new EntryWriter()
    const { entries, request } = pending(w)
    const failed = fold([...entries, w.answer('ivy', request.id, 'a', 1, 'failed')])
    expect(onItsWay(failed, 'amy', 'a')).toBe(false)
    expect(carriedWithoutDone(failed, 'amy')).toEqual([])
    // asked again after the fix: on its way again
    expect(
      onItsWay(fold([...entries, w.answer('ivy', request.id, 'a', 1, 'failed'), w.integrationRequest('amy', 'a', 1)]), 'amy', 'a')
    ).toBe(true)
    const w2 = new EntryWriter()
    expect(onItsWay(fold([w2.task('p', { id: 'a' }), w2.claim('amy', 'a', 1), w2.integrationRequest('amy', 'a', 2)]), 'amy', 'a')).toBe(
      false
    )
  })

  it("is not the holder's current task for claim --next, and the holder counts among the seekers", () => {
    const w = new EntryWriter()
    const { entries, request } = pending(w)
    const p = new ClaimProtocol({ me: 'amy', startedAt: 0, fixedSettleMs: 100, leaseMs: 10_000 })
    for (const e of entries.slice(0, 4)) p.apply(e, 0)
    p.restore(
      [
        { task: 'a', epoch: 1, settled: true },
        { task: 'b', epoch: 1, settled: true }
      ],
      0
    )
    expect(p.current()).toEqual({ task: 'a', settling: false })
    p.apply(request, 0)
    expect(p.current()).toEqual({ task: 'b', settling: false })
    p.apply(w.answer('ivy', request.id, 'a', 1, 'conflict'), 0)
    expect(p.current()).toEqual({ task: 'a', settling: false })

    const q = new ClaimProtocol({ me: 'ivy', startedAt: 0, fixedSettleMs: 100, leaseMs: 10_000 })
    const w3 = new EntryWriter()
    const one = [w3.task('p', { id: 'a' }), w3.claim('amy', 'a', 1)]
    for (const e of one) q.apply(e, 0)
    q.heard('amy', 0)
    expect(q.seekers(0)).toEqual(['ivy'])
    q.apply(w3.integrationRequest('amy', 'a', 1), 0)
    expect(q.seekers(0)).toEqual(['ivy', 'amy'])
  })

  it("is not the holder's current task while its daemon carries it before the request (a verify first), for that daemon only", () => {
    const w = new EntryWriter()
    const { entries, request } = pending(w)
    const p = new ClaimProtocol({ me: 'amy', startedAt: 0, fixedSettleMs: 100, leaseMs: 10_000 })
    for (const e of entries.slice(0, 4)) p.apply(e, 0)
    p.restore(
      [
        { task: 'a', epoch: 1, settled: true },
        { task: 'b', epoch: 1, settled: true }
      ],
      0
    )
    p.carryHere('a', 1)
    expect(p.current()).toEqual({ task: 'b', settling: false })
    expect(p.onItsWay('a')).toBe(true)
    expect(onItsWayHere(p.board, 'amy', 'a', new Map([['a', 2]]))).toBe(false) // another epoch than the one held
    // peers still see amy at work on a: nothing is on the log
    expect(onItsWay(p.board, 'amy', 'a')).toBe(false)
    // a red verify: current again
    p.stopCarrying('a')
    expect(p.current()).toEqual({ task: 'a', settling: false })
    // a green one: the request goes on the log, then the board's rule carries it
    p.carryHere('a', 1)
    p.apply(request, 0)
    p.stopCarrying('a')
    expect(p.current()).toEqual({ task: 'b', settling: false })
    // a fresh protocol (a restart) carries nothing
    const again = new ClaimProtocol({ me: 'amy', startedAt: 0, fixedSettleMs: 100, leaseMs: 10_000 })
    for (const e of entries.slice(0, 4)) again.apply(e, 0)
    again.restore(
      [
        { task: 'a', epoch: 1, settled: true },
        { task: 'b', epoch: 1, settled: true }
      ],
      0
    )
    expect(again.current()).toEqual({ task: 'a', settling: false })
  })

  it('leaves a receiver whose held tasks are on their way free: a hand-off by speed stays reserved for it', () => {
    const w = new EntryWriter()
    const entries = [
      w.task('p', { id: 'a' }),
      w.task('p', { id: 'b' }),
      w.claim('amy', 'a', 1),
      w.claim('bob', 'b', 1),
      w.release('amy', 'a', 1, { note: 'slow', to: 'bob' })
    ]
    const cat = new ClaimProtocol({ me: 'cat', startedAt: 0, fixedSettleMs: 100, leaseMs: 10_000 })
    cat.heard('bob', 0)
    for (const e of entries) cat.apply(e, 0)
    // bob works on b: the reservation does not hold (it would block a for nobody)
    expect(cat.handedAway('a', 0)).toBe(false)
    cat.apply(w.integrationRequest('bob', 'b', 1), 0)
    expect(cat.handedAway('a', 0)).toBe(true)
    expect(cat.nextChoices(0).map(t => t.id)).not.toContain('a')
    const bob = new ClaimProtocol({ me: 'bob', startedAt: 0, fixedSettleMs: 100, leaseMs: 10_000 })
    for (const e of [...entries, w.integrationRequest('bob', 'b', 1)]) bob.apply(e, 0)
    expect(bob.handedAway('a', 0)).toBe(false)
    // after the keep time anyone may take it (bob still live)
    cat.heard('bob', 29_000)
    expect(cat.handedAway('a', 29_500)).toBe(true)
    expect(cat.handedAway('a', 30_600)).toBe(false)
  })

  it('lets a holder whose held tasks are all on their way assist', () => {
    const w = new EntryWriter()
    const entries = [w.task('p', { id: 'a' }), w.claim('amy', 'a', 1)]
    const input = (board: Board): Parameters<typeof checkAssister>[0] => ({
      board,
      book: new AssistBook(),
      me: 'amy',
      now: 0,
      wallNow: 0,
      isLive: () => true,
      policy: ASSIST_DEFAULTS
    })
    expect(() => {
      checkAssister(input(fold(entries)))
    }).toThrow(/you hold a/)
    expect(() => {
      checkAssister(input(fold([...entries, w.integrationRequest('amy', 'a', 1)])))
    }).not.toThrow()
  })
})
