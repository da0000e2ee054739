// Which of an agent's assists landed without its done (core/board/assist-landing.ts):
// the decision a daemon acts on at start and whenever it folds an integration
// or a request, so a done lost to a crash between the landing and the done is
// written later, once, and never for a holder's landing or a task done.
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { Board } from '../../../src/core/board/board.js'
import { AssistBook, APPROACH_TAG, taskTag } from '../../../src/core/board/assist-book.js'
import { landedWithoutDone } from '../../../src/core/board/assist-landing.js'
import type { BoardEntry } from '../../../src/core/board/types.js'
import { Finding, Integration } from '../../../src/gen/agency/v1/log.js'
import { EntryWriter } from './helpers.js'

function fold(entries: readonly BoardEntry[]): Board {
  const board = new Board()
  for (const e of entries) board.apply(e)
  return board
}

/** A book where each named agent announced an approach on `task`. */
function approaches(task: string, ...agents: string[]): () => AssistBook {
  const book = new AssistBook()
  agents.forEach((a, i) =>
    book.add(
      { id: `f-${a}`, author: a, seq: 100 + i, lamport: 100 + i, time: 0 },
      Finding.fromPartial({ kind: 'approach', text: `${a}'s way`, tags: [APPROACH_TAG, taskTag(task), 'assist'] })
    )
  )
  return () => book
}

/** holder claims `a`; helper asks integrator to land its work at epoch 1; integrator merges it. */
function landedThroughIntegrator(w = new EntryWriter()): BoardEntry[] {
  const request = w.integrationRequest('helper', 'a', 1)
  return [w.task('p', { id: 'a' }), w.claim('holder', 'a', 1), request, w.answer('integrator', request.id, 'a', 1)]
}

describe('the landed assists that lack their done', () => {
  it("lists an assistant's landing through an integrator, with the integration's commit, whatever order the entries came in", () => {
    const entries = landedThroughIntegrator()
    const book = approaches('a', 'helper')
    fc.assert(
      fc.property(fc.shuffledSubarray(entries, { minLength: entries.length, maxLength: entries.length }), order => {
        expect(landedWithoutDone(fold(order), book, 'helper')).toEqual([
          { task: 'a', epoch: 1, author: 'helper', commit: 'm-a-1', paths: [] }
        ])
      }),
      { numRuns: 100 }
    )
  })

  it("lists an assistant's own merged integration (a direct agency integrate)", () => {
    const w = new EntryWriter()
    const board = fold([w.task('p', { id: 'a' }), w.claim('holder', 'a', 1), w.integration('helper', 'a', ['a/x.ts'])])
    expect(landedWithoutDone(board, approaches('a', 'helper'), 'helper')).toEqual([
      { task: 'a', epoch: 1, author: 'helper', commit: 'm-a', paths: ['a/x.ts'] }
    ])
  })

  it("lists nothing once the done is there (its own or anyone's that counts), without asking for the approaches", () => {
    const w = new EntryWriter()
    const entries = landedThroughIntegrator(w)
    const book = (): AssistBook => {
      throw new Error('the approaches were asked for')
    }
    expect(landedWithoutDone(fold([...entries, w.done('helper', 'a', 1)]), book, 'helper')).toEqual([])
    expect(landedWithoutDone(fold([...entries, w.done('holder', 'a', 1)]), book, 'helper')).toEqual([])
    expect(landedWithoutDone(fold(entries), book, 'holder')).toEqual([])
  })

  it("lists nothing for a holder's landing: its agent says when the task is done", () => {
    const w = new EntryWriter()
    const board = fold([w.task('p', { id: 'a' }), w.claim('holder', 'a', 1), w.integration('holder', 'a', [])])
    expect(board.landedBy('a', 1, 'holder')).toBe(true)
    // Even with an approach of its own on the task: at epoch 1 it is the winner.
    expect(landedWithoutDone(board, approaches('a', 'holder'), 'holder')).toEqual([])
  })

  it("lists nothing for work that did not land: no approach, another's request, a failed or unanswered request", () => {
    const w = new EntryWriter()
    const request = w.integrationRequest('helper', 'a', 1)
    const base = [w.task('p', { id: 'a' }), w.claim('holder', 'a', 1), request]
    // no approach announced on the task: not an assist
    expect(landedWithoutDone(fold([...base, w.answer('integrator', request.id, 'a', 1)]), () => new AssistBook(), 'helper')).toEqual([])
    const book = approaches('a', 'helper', 'other')
    // the integrator lands the request's author's work, not its own or a bystander's
    expect(landedWithoutDone(fold([...base, w.answer('integrator', request.id, 'a', 1)]), book, 'other')).toEqual([])
    expect(
      landedWithoutDone(fold([...base, w.answer('integrator', request.id, 'a', 1)]), approaches('a', 'integrator'), 'integrator')
    ).toEqual([])
    expect(landedWithoutDone(fold([...base, w.answer('integrator', request.id, 'a', 1, 'failed')]), book, 'helper')).toEqual([])
    expect(landedWithoutDone(fold([...base, w.answer('integrator', request.id, 'a', 1, 'fenced')]), book, 'helper')).toEqual([])
    expect(landedWithoutDone(fold(base), book, 'helper')).toEqual([])
    // an answer at another epoch than the request's lands nothing
    expect(
      landedWithoutDone(fold([...base, w.claim('holder', 'a', 2), w.answer('integrator', request.id, 'a', 2)]), book, 'helper')
    ).toEqual([])
  })

  it('names the first integration in fold order when two land the same work, in either order', () => {
    const w = new EntryWriter()
    const request = w.integrationRequest('helper', 'a', 1)
    const first = w.answer('i1', request.id, 'a', 1, 'merged', 50)
    const second = w.entry(
      'i2',
      'integration',
      Integration.fromPartial({ task: 'a', epoch: 1, commit: 'later', result: 'merged', request: request.id }),
      60
    )
    const base = [w.task('p', { id: 'a' }), w.claim('holder', 'a', 1), request]
    const book = approaches('a', 'helper')
    expect(landedWithoutDone(fold([...base, first, second]), book, 'helper')[0].commit).toBe('m-a-1')
    expect(landedWithoutDone(fold([...base, second, first]), book, 'helper')[0].commit).toBe('m-a-1')
  })
})
