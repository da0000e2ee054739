import { describe, expect, it, beforeAll } from 'vitest'
import fc from 'fast-check'
import { Entry } from '../../../src/gen/agency/v1/log.js'
import {
  decodeEntry,
  encodeEntry,
  entryId,
  entryIdHex,
  isEntryIdHex,
  MalformedEntryError,
  signEntry,
  unsignedBytes,
  verifyEntry
} from '../../../src/core/log/entry.js'
import { encodeBody } from '../../../src/core/log/kinds.js'
import { TooLargeError } from '../../../src/core/errors.js'
import { MAX_ENTRY_BYTES } from '../../../src/core/log/limits.js'
import { makeIdentities, impostor, type TestIdentity } from '../../helpers/identity.js'

let a: TestIdentity
let b: TestIdentity
beforeAll(async () => {
  ;[a, b] = await makeIdentities(2)
})

function sample(signer = a.signer): Entry {
  return signEntry(signer, {
    seq: 1,
    prev: new Uint8Array(0),
    lamport: 1,
    time: 1_700_000_000_000,
    kind: 'finding',
    body: encodeBody('finding', { kind: 'note', text: 'hello' })
  })
}

describe('entry encoding and signatures', () => {
  it('round-trips through its canonical bytes, and the id is the hash of those bytes', () => {
    const e = sample()
    const bytes = encodeEntry(e)
    const back = decodeEntry(bytes)
    expect(back).toEqual(e)
    expect(entryIdHex(back)).toBe(entryIdHex(e))
    expect(isEntryIdHex(entryIdHex(e))).toBe(true)
    expect(entryId(e)).toHaveLength(32)
  })

  it('signs every field except the signature, as the author', () => {
    const e = sample()
    expect(verifyEntry(e)).toBe(true)
    expect(unsignedBytes(e)).toEqual(encodeEntry({ ...e, sig: Buffer.alloc(0) }))
    for (const changed of [
      { ...e, seq: 2 },
      { ...e, lamport: 2 },
      { ...e, time: e.time + 1 },
      { ...e, kind: 'goal' },
      { ...e, body: Buffer.from('x') },
      { ...e, prev: Buffer.alloc(32) },
      { ...e, author: b.id }
    ]) {
      expect(verifyEntry(changed)).toBe(false)
    }
  })

  it('refuses a signature by another key than the one the author names', () => {
    expect(verifyEntry(sample(impostor(a, b)))).toBe(false)
  })

  it('throws a named error on oversized bytes', () => {
    expect(() => decodeEntry(new Uint8Array(MAX_ENTRY_BYTES + 1))).toThrow(TooLargeError)
    expect(() => decodeEntry(new Uint8Array(100), 99)).toThrow(TooLargeError)
  })

  it('throws MalformedEntryError on bytes that do not decode', () => {
    for (const bad of [[0xff], [0x0a, 0x05, 0x61], [0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]]) {
      expect(() => decodeEntry(Uint8Array.from(bad))).toThrow(MalformedEntryError)
    }
  })

  it('throws MalformedEntryError on a non-canonical encoding of a valid entry', () => {
    const bytes = encodeEntry(sample())
    // an unknown field appended: decodes to the same entry, but is not its canonical bytes
    const extra = Buffer.concat([bytes, Buffer.from([0x48, 0x01])])
    expect(() => decodeEntry(extra)).toThrow(MalformedEntryError)
    // seq written twice: the last one wins when decoding, so the bytes are not canonical
    const twice = Buffer.concat([bytes, Buffer.from([0x10, 0x01])])
    expect(() => decodeEntry(twice)).toThrow(MalformedEntryError)
  })

  it('never throws anything but its named errors on arbitrary bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), bytes => {
        try {
          decodeEntry(bytes)
        } catch (err) {
          expect(err).toBeInstanceOf(MalformedEntryError)
        }
      }),
      { numRuns: 2000 }
    )
  })
})
