import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { Board } from '../../../src/core/board/board.js'
import type { BoardEntry } from '../../../src/core/board/types.js'
import { createRandom } from '../../../src/sim/engine/random.js'
import { EntryWriter, snapshot } from './helpers.js'
import { dead, op, type Claimed, type Requested } from './board-ops.js'

// Random sets of entries from several authors, with colliding lamports,
// unknown tasks, invalid ids and malformed globs, folded in different orders
// (with duplicates, and with queries in between to exercise the caches) must
// answer every query the same.

function fold(entries: readonly BoardEntry[], queryEvery = 0): Board {
  const board = new Board({ liveness: dead })
  entries.forEach((e, i) => {
    board.apply(e)
    if (queryEvery > 0 && i % queryEvery === 0) snapshot(board, 0)
  })
  return board
}

describe('board fold is order independent', () => {
  it('any delivery order, with duplicates and interleaved queries, gives identical views', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), fc.integer(), fc.integer(), (ops, seedA, seedB) => {
        const w = new EntryWriter()
        const claimed: Claimed = []
        const requested: Requested = []
        const entries = ops.map(make => make(w, claimed, requested))
        const shuffledA = createRandom(seedA).shuffle([...entries])
        const rngB = createRandom(seedB)
        const shuffledB = rngB.shuffle([...entries, ...entries.filter(() => rngB.chance(0.3))])

        const expected = snapshot(fold(entries), 0)
        expect(snapshot(fold(shuffledA), 0)).toEqual(expected)
        expect(snapshot(fold(shuffledB, 2), 0)).toEqual(expected)
      }),
      { numRuns: 1000 }
    )
  })

  it('a duplicate id is a no-op', () => {
    const w = new EntryWriter()
    const board = new Board()
    const t = w.task('p1', { id: 'a' })
    expect(board.apply(t)).toBe(true)
    const before = snapshot(board, 0)
    expect(board.apply(t)).toBe(false)
    expect(board.apply({ ...t, body: { id: 'a', title: 'changed' } })).toBe(false)
    expect(snapshot(board, 0)).toEqual(before)
  })

  it('ignores unknown kinds and malformed entries without changing anything', () => {
    const board = new Board()
    const w = new EntryWriter()
    board.apply(w.task('p1', { id: 'a' }))
    const before = snapshot(board, 0)
    expect(board.apply({ id: 'x/1', author: 'x', seq: 1, lamport: 9, time: 0, kind: 'finding', body: { text: 'hi' } })).toBe(false)
    expect(board.apply({ id: '', author: 'x', seq: 2, lamport: 9, time: 0, kind: 'goal', body: {} })).toBe(false)
    expect(board.apply({ id: 'x/3', author: 'x', seq: 3, lamport: Number.NaN, time: 0, kind: 'goal', body: {} })).toBe(false)
    expect(board.apply({ id: 'x/4', author: 'x', seq: 4, lamport: 9, time: 0, kind: 'claim', body: null })).toBe(false)
    expect(board.apply(w.task('p1', { id: '../etc' }))).toBe(false)
    expect(board.apply(w.claim('p1', 'a', 0))).toBe(false)
    expect(snapshot(board, 0)).toEqual(before)
  })
})
