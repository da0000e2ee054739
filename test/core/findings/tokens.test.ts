// The tokenizer's ASCII path gives the terms the Unicode rule gives.
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { tokenize } from '../../../src/core/findings/tokens.js'

const RULE = /[\n\r\p{Z}\p{P}]+/u
const reference = (text: string): string[] =>
  text
    .split(RULE)
    .filter(t => t !== '')
    .map(t => t.toLowerCase())

describe('tokenize', () => {
  it('splits on whitespace and punctuation as the Unicode rule does, for any text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary-ascii', maxLength: 80 }), text => {
        expect(tokenize(text)).toEqual(reference(text))
      }),
      { numRuns: 2000 }
    )
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), text => {
        expect(tokenize(text)).toEqual(reference(text))
      }),
      { numRuns: 500 }
    )
  })

  it('keeps symbols and tabs inside terms, as the rule does', () => {
    expect(tokenize('src/mesh/sync-protocol.ts a+b\tc $x')).toEqual(['src', 'mesh', 'sync', 'protocol', 'ts', 'a+b\tc', '$x'])
  })
})
