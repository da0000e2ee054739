// A frozen segment holds what its open segment held: each term's postings, in order.
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { OpenSegment, type Segment } from '../../../src/core/findings/term-segments.js'

function postingsOf(s: Segment, at: number): Array<[number, number]> {
  const out: Array<[number, number]> = []
  s.postings(at, (doc, tf) => {
    out.push([doc, tf])
  })
  return out
}

// per document, terms (from a small alphabet, so that they repeat) with their packed frequencies
const docs = fc.array(
  fc.uniqueArray(fc.record({ term: fc.constantFrom('a', 'b', 'lease', 'z9', 'quorum', 'x'), tf: fc.integer({ min: 1, max: 255 }) }), {
    selector: p => p.term,
    maxLength: 6
  }),
  { maxLength: 60 }
)

describe('freezing a term segment', () => {
  it("keeps every term's postings and counts, and below a cut only those of the documents under it", () => {
    fc.assert(
      fc.property(docs, fc.nat(70), fc.integer({ min: 0, max: 300 }), (list, cut, gap) => {
        const open = new OpenSegment()
        // documents spaced by `gap` so that deltas take several varint bytes
        list.forEach((terms, d) => {
          for (const { term, tf } of terms) open.post(open.handle(term), d * (gap + 1), tf)
          open.endDoc()
        })
        for (const limit of [Number.POSITIVE_INFINITY, cut * (gap + 1)]) {
          const frozen = open.freeze(limit)
          const expected = [...new Set(list.flat().map(p => p.term))]
            .sort()
            .map(term => ({ term, postings: postingsOf(open, open.find(term)).filter(([doc]) => doc < limit) }))
            .filter(t => t.postings.length > 0)
          expect(frozen.terms).toEqual(expected.map(t => t.term))
          expected.forEach((t, i) => {
            expect(postingsOf(frozen, i)).toEqual(t.postings)
            const df = [0, 1, 2].map(f => t.postings.filter(([, tf]) => (f === 0 ? tf >> 4 : f === 1 ? (tf >> 2) & 3 : tf & 3) > 0).length)
            expect(frozen.df(i)).toEqual(df)
          })
        }
      }),
      { numRuns: 300 }
    )
  })
})
