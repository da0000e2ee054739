// The dashboard's overlap pairs come from core's scope index: they must be
// exactly the pairs, in the order, core's overlaps() finds by comparing all.
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { Board, overlaps } from '../../src/core/board/index.js'
import { overlapPairs } from '../../src/ui/overlap-pairs.js'

const SEGMENTS = ['src', 'test', 'parser', 'lexer', '*', '**', 'x.ts', '*.ts', 'a?c', '[ab]', '{x,y}', '.', 'src.d']

function board(scopes: string[][]): Board {
  const b = new Board()
  let lamport = 0
  scopes.forEach((scope, i) => {
    const id = `t${i}`
    const author = `peer-${i % 5}`
    b.apply({
      id: `task-${i}`,
      author: 'planner',
      seq: i + 1,
      lamport: ++lamport,
      time: 1,
      kind: 'task',
      body: { id, title: id, description: '', deps: [], scope: [], priority: 0 }
    })
    b.apply({ id: `claim-${i}`, author, seq: i + 1, lamport: ++lamport, time: 1, kind: 'claim', body: { task: id, scope, epoch: 1 } })
  })
  return b
}

const key = (o: { a: { task: string }; b: { task: string }; globs: Array<[string, string]> }): string =>
  `${o.a.task}|${o.b.task}|${JSON.stringify(o.globs)}`

describe('overlap pairs', () => {
  it('are exactly the pairs core finds, for random scopes', () => {
    const glob = fc.array(fc.constantFrom(...SEGMENTS), { minLength: 1, maxLength: 4 }).map(s => s.join('/'))
    fc.assert(
      fc.property(fc.array(fc.array(glob, { minLength: 1, maxLength: 3 }), { minLength: 2, maxLength: 12 }), scopes => {
        const b = board(scopes)
        const want = overlaps(b, 0).map(key)
        const got = overlapPairs(b.liveClaims(0)).map(key)
        expect(got).toEqual(want)
      }),
      { numRuns: 150 }
    )
  })
})
