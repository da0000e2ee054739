// Who landed a task's work (core/board/landed-work.ts): a merged integration
// that answers an integration request lands the request's author's work, at
// the integration's task and epoch when the request names the same; that is
// what lets an assistant that landed through an integrator finish the task.
// Whatever order the entries are folded in.
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { Board } from '../../../src/core/board/board.js'
import { ClaimProtocol } from '../../../src/core/board/claim-protocol.js'
import type { BoardEntry } from '../../../src/core/board/types.js'
import { EntryWriter } from './helpers.js'

/** holder H claims `a` at epoch 1; assistant A asks integrator I to land its work; I merges it; A writes done. */
function assistedLanding(w = new EntryWriter()): { entries: BoardEntry[]; request: BoardEntry } {
  const task = w.task('p', { id: 'a' })
  const claim = w.claim('holder', 'a', 1)
  const request = w.integrationRequest('helper', 'a', 1)
  const landed = w.answer('integrator', request.id, 'a', 1)
  const done = w.done('helper', 'a', 1)
  return { entries: [task, claim, request, landed, done], request }
}

function fold(entries: readonly BoardEntry[]): Board {
  const board = new Board()
  for (const e of entries) board.apply(e)
  return board
}

describe('work landed through an integrator', () => {
  it("counts an assistant's done when an integrator's merged integration answers its request, in every order", () => {
    const { entries } = assistedLanding()
    const expected = fold(entries)
    expect(expected.task('a', 0)).toMatchObject({ state: 'done', holder: 'holder', doneBy: 'helper' })
    expect(expected.landedBy('a', 1, 'helper')).toBe(true)
    fc.assert(
      fc.property(fc.shuffledSubarray(entries, { minLength: entries.length, maxLength: entries.length }), order => {
        const board = fold(order)
        expect(board.task('a', 0)).toEqual(expected.task('a', 0))
        expect(board.landedBy('a', 1, 'helper')).toBe(true)
      }),
      { numRuns: 200 }
    )
  })

  it("lands nothing for the integrator that merged someone else's request: its own done does not count", () => {
    const w = new EntryWriter()
    const { entries } = assistedLanding(w)
    const board = fold([...entries.slice(0, 4), w.done('integrator', 'a', 1)])
    expect(board.landedBy('a', 1, 'integrator')).toBe(false)
    expect(board.task('a', 0)).toMatchObject({ state: 'claimed', holder: 'holder' })
  })

  it("lands the integrator's work when it answered a request of its own", () => {
    const w = new EntryWriter()
    const board = new Board()
    board.apply(w.task('p', { id: 'a' }))
    board.apply(w.claim('holder', 'a', 1))
    const request = w.integrationRequest('integrator', 'a', 1)
    board.apply(w.answer('integrator', request.id, 'a', 1))
    board.apply(w.done('integrator', 'a', 1))
    expect(board.task('a', 0)).toMatchObject({ state: 'claimed' }) // the request is not folded yet
    board.apply(request)
    expect(board.task('a', 0)).toMatchObject({ state: 'done', doneBy: 'integrator' })
  })

  it('lands nothing when the integration names another epoch or task than the request', () => {
    for (const [task, epoch] of [
      ['a', 2],
      ['b', 1]
    ] as const) {
      const w = new EntryWriter()
      const board = new Board()
      board.apply(w.task('p', { id: 'a' }))
      board.apply(w.task('p', { id: 'b' }))
      board.apply(w.claim('holder', 'a', 1))
      board.apply(w.claim('holder', 'a', 2))
      board.apply(w.claim('holder', 'b', 1))
      const request = w.integrationRequest('helper', 'a', 1)
      board.apply(request)
      board.apply(w.answer('integrator', request.id, task, epoch))
      board.apply(w.done('helper', task, epoch))
      board.apply(w.done('helper', 'a', 1))
      expect(board.landedBy(task, epoch, 'helper')).toBe(false)
      expect(board.landedBy('a', 1, 'helper')).toBe(false)
      expect(board.task('a', 0)?.state).toBe('claimed')
      expect(board.task('b', 0)?.state).toBe('claimed')
    }
  })

  it('lands nothing for an answer that did not merge, or one naming no known request', () => {
    for (const result of ['conflict', 'failed', 'refused', 'fenced']) {
      const w = new EntryWriter()
      const { entries, request } = assistedLanding(w)
      const board = fold([entries[0], entries[1], request, w.answer('integrator', request.id, 'a', 1, result), w.done('helper', 'a', 1)])
      expect(board.task('a', 0)?.state).toBe('claimed')
    }
    const w = new EntryWriter()
    const { entries } = assistedLanding(w)
    const board = fold([entries[0], entries[1], w.answer('integrator', 'helper/999', 'a', 1), w.done('helper', 'a', 1)])
    expect(board.task('a', 0)?.state).toBe('claimed')
  })

  it("stops counting when the request's author forks before its request, and counts again for nothing else", () => {
    const { entries, request } = assistedLanding()
    const board = fold(entries)
    expect(board.task('a', 0)?.state).toBe('done')
    expect(board.markFaulty('helper', request.seq)).toBe(true)
    expect(board.landedBy('a', 1, 'helper')).toBe(false)
    expect(board.task('a', 0)).toMatchObject({ state: 'claimed', holder: 'holder' })

    // The integrator forking before its integration does the same.
    const again = assistedLanding()
    const other = fold(again.entries)
    expect(other.markFaulty('integrator', 1)).toBe(true)
    expect(other.task('a', 0)).toMatchObject({ state: 'claimed', holder: 'holder' })
  })

  it("ends the holder's claim when the integration that lands the assistant's request is the last entry to arrive", () => {
    const window = 500
    const w = new EntryWriter()
    const p = new ClaimProtocol({ me: 'holder', startedAt: 0, fixedSettleMs: window, leaseMs: 10_000 })
    p.apply(w.task('p', { id: 'a' }), 0)
    const ticket = p.claim('a', [], 0)
    for (const a of ticket.output.append) p.apply(w.entry('holder', a.kind, a.body), 0)
    p.tick(window)
    expect(p.mine()).toEqual([{ task: 'a', epoch: 1, settled: true }])
    const request = w.integrationRequest('helper', 'a', 1)
    const landed = w.answer('integrator', request.id, 'a', 1)
    p.apply(request, window)
    p.apply(w.done('helper', 'a', 1), window) // does not count yet: nothing landed
    expect(p.mine()).toHaveLength(1)
    p.apply(landed, window + 1)
    const out = p.tick(3 * window)
    expect(p.board.task('a', 0)).toMatchObject({ state: 'done', doneBy: 'helper' })
    expect(out.notices).toEqual([expect.objectContaining({ task: 'a', epoch: 1, reason: 'done', winner: 'helper' })])
    expect(p.mine()).toEqual([])
  })
})
