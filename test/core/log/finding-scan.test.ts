// scanFinding reads what Finding.decode reads, or leaves the bytes to it.
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { Finding } from '../../../src/gen/agency/v1/log.js'
import { decodeFinding, isPlainFinding, mayHaveTag, scanFinding } from '../../../src/core/log/finding-scan.js'
import { bodyDecodes } from '../../../src/core/log/kinds.js'

const hexId = fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 64, maxLength: 64 })
const finding = fc.record({
  kind: fc.constantFrom('', 'discovery', 'failure', 'note'),
  text: fc.string({ unit: 'binary', maxLength: 300 }),
  paths: fc.array(fc.string({ maxLength: 40 }), { maxLength: 4 }),
  tags: fc.array(fc.string({ unit: 'grapheme', maxLength: 12 }), { maxLength: 4 }),
  refs: fc.array(hexId, { maxLength: 2 }),
  supersedes: fc.oneof(fc.constant(''), hexId)
})

describe('reading a finding straight from its bytes', () => {
  it('gives what Finding.decode gives, for any finding the encoder writes', () => {
    fc.assert(
      fc.property(finding, f => {
        const bytes = Finding.encode(f).finish()
        expect(scanFinding(bytes)).toEqual(Finding.decode(bytes))
        expect(scanFinding(Buffer.from(bytes))).toEqual(Finding.decode(bytes))
      }),
      { numRuns: 500 }
    )
  })

  it('whatever it reads from altered bytes, Finding.decode reads the same', () => {
    const good = Finding.encode({
      kind: 'failure',
      text: 'the lease runs out — twice',
      paths: ['src/a.ts', 'src/b.ts'],
      tags: ['lease'],
      refs: [],
      supersedes: 'ab'.repeat(32)
    }).finish()
    fc.assert(
      fc.property(
        fc.array(fc.record({ at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }), { minLength: 1, maxLength: 4 }),
        fc.nat(12),
        (edits, cut) => {
          const bytes = Buffer.from(good.subarray(0, good.length - cut))
          for (const { at, byte } of edits) bytes[at % bytes.length] = byte
          const scanned = scanFinding(bytes)
          expect(isPlainFinding(bytes)).toBe(scanned !== undefined)
          // a finding skipped for lacking a tag is one that decodes without it
          if (!mayHaveTag(bytes, 'lease')) expect(Finding.decode(bytes).tags).not.toContain('lease')
          if (scanned === undefined) return
          expect(scanned).toEqual(Finding.decode(bytes))
          expect(bodyDecodes('finding', bytes)).toBe(true)
        }
      ),
      { numRuns: 3000 }
    )
  })

  it('tells a finding without a tag from one that may have it, without decoding', () => {
    fc.assert(
      fc.property(finding, fc.constantFrom('approach', 'lease', 'a'), (f, tag) => {
        const bytes = Finding.encode(f).finish()
        expect(isPlainFinding(bytes)).toBe(true)
        expect(mayHaveTag(bytes, tag)).toBe(f.tags.includes(tag))
        expect(mayHaveTag(Finding.encode({ ...f, tags: [...f.tags, tag] }).finish(), tag)).toBe(true)
      }),
      { numRuns: 500 }
    )
    // a tag in an unusual form is left to the decoder: a non-minimal length
    expect(mayHaveTag(Uint8Array.from([0x22, 0x81, 0x00]), 'x')).toBe(true)
  })

  it('leaves unusual forms to Finding.decode, which decides', () => {
    // a field out of order, a singular field twice, an unknown field, a varint field, a cut-off length, a non-minimal length
    for (const odd of [
      [0x12, 0x01, 0x41, 0x0a, 0x01, 0x42],
      [0x0a, 0x01, 0x41, 0x0a, 0x01, 0x42],
      [0x3a, 0x01, 0x41],
      [0x08, 0x01],
      [0x12, 0x05, 0x41],
      [0x12, 0x81, 0x00]
    ]) {
      const bytes = Uint8Array.from(odd)
      expect(scanFinding(bytes)).toBeUndefined()
      expect(isPlainFinding(bytes)).toBe(false)
      expect(mayHaveTag(bytes, 'A')).toBe(true)
      let decoded: Finding | undefined
      try {
        decoded = Finding.decode(bytes)
      } catch {
        decoded = undefined
      }
      if (decoded === undefined) expect(() => decodeFinding(bytes)).toThrow()
      else expect(decodeFinding(bytes)).toEqual(decoded)
      expect(bodyDecodes('finding', bytes)).toBe(decoded !== undefined)
    }
  })
})
