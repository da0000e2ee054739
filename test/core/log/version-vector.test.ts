import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import {
  compareVectors,
  mergeVectors,
  missing,
  vectorDigestHex,
  vectorFromWire,
  vectorToWire
} from '../../../src/core/log/version-vector.js'
import { InvalidArgumentError } from '../../../src/core/errors.js'

const v = (o: Record<string, number>): Map<string, number> => new Map(Object.entries(o))
const vectorArb = fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd'), fc.nat(20)).map(v)

describe('version vectors', () => {
  it('merges pointwise to the maximum', () => {
    expect(mergeVectors(v({ a: 3, b: 1 }), v({ b: 4, c: 2 }))).toEqual(v({ a: 3, b: 4, c: 2 }))
  })

  it('compares, treating an absent author as seq 0', () => {
    expect(compareVectors(v({ a: 1 }), v({ a: 1, b: 0 }))).toBe('equal')
    expect(compareVectors(v({ a: 1 }), v({ a: 2 }))).toBe('before')
    expect(compareVectors(v({ a: 2, b: 1 }), v({ a: 2 }))).toBe('after')
    expect(compareVectors(v({ a: 2 }), v({ b: 1 }))).toBe('concurrent')
  })

  it('lists what the remote holds that the local side lacks', () => {
    expect(missing(v({ a: 3, b: 5 }), v({ a: 5, b: 2, c: 1 }))).toEqual([
      { author: 'a', from: 4, to: 5 },
      { author: 'c', from: 1, to: 1 }
    ])
    expect(missing(v({ a: 3 }), v({ a: 3 }))).toEqual([])
  })

  it('digests equal vectors equally, whatever their insertion order or zero entries', () => {
    expect(vectorDigestHex(v({ a: 1, b: 2 }))).toBe(
      vectorDigestHex(
        new Map([
          ['b', 2],
          ['a', 1],
          ['z', 0]
        ])
      )
    )
    expect(vectorDigestHex(v({ a: 1, b: 2 }))).not.toBe(vectorDigestHex(v({ a: 1, b: 3 })))
    expect(vectorDigestHex(v({}))).toMatch(/^[0-9a-f]{64}$/)
  })

  it('merge is a join: commutative, associative, idempotent, and above both inputs', () => {
    fc.assert(
      fc.property(vectorArb, vectorArb, vectorArb, (x, y, z) => {
        const d = vectorDigestHex
        expect(d(mergeVectors(x, y))).toBe(d(mergeVectors(y, x)))
        expect(d(mergeVectors(mergeVectors(x, y), z))).toBe(d(mergeVectors(x, mergeVectors(y, z))))
        expect(d(mergeVectors(x, x))).toBe(d(x))
        expect(['after', 'equal']).toContain(compareVectors(mergeVectors(x, y), x))
        expect(missing(mergeVectors(x, y), y)).toEqual([])
      })
    )
  })

  it('round-trips through the wire form and refuses bad wire entries', () => {
    expect(vectorFromWire(vectorToWire(v({ b: 2, a: 1, c: 0 })))).toEqual(v({ a: 1, b: 2 }))
    expect(vectorToWire(v({ b: 2, a: 1 })).map(({ author, seq }) => ({ author, seq }))).toEqual([
      { author: 'a', seq: 1 },
      { author: 'b', seq: 2 }
    ])
    const entry = (author: string, seq: number) => ({ author, seq, head: Buffer.alloc(0), forkSeq: 0, faulty: false })
    expect(() => vectorFromWire([entry('', 1)])).toThrow(InvalidArgumentError)
    expect(() => vectorFromWire([entry('a', -1)])).toThrow(InvalidArgumentError)
  })
})
