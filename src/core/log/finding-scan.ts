// Reads a finding's body straight from its bytes, for the paths that take in
// many findings (bulk sync's body check, the findings index): no protobuf
// reader, no message object built field by field.
//
// It takes only the plain form the encoder writes: each field with its
// one-byte tag and length-delimited wire type, fields in field-number order
// (the repeated ones, paths, tags and refs, in runs), minimal lengths.
// Anything else (an unknown field, another wire type, fields out of order) is
// not judged here: the caller falls back to Finding.decode, which decides.
// Strings decode as Finding.decode decodes them (UTF-8, with replacement
// characters for bad sequences); ASCII, nearly all of them, without a decoder.
import { Finding } from '../../gen/agency/v1/log.js'

const utf8 = new TextDecoder()

/** The finding `bytes` hold in the plain form, else undefined (then Finding.decode says what they are). Never throws. */
export function scanFinding (bytes: Uint8Array): Finding | undefined {
  const n = bytes.length
  const out: Finding = { kind: '', text: '', paths: [], tags: [], refs: [], supersedes: '' }
  let at = 0
  let lastField = 0
  while (at < n) {
    const tag = bytes[at++]
    const field = tag >>> 3
    if ((tag & 7) !== 2 || field < 1 || field > 6 || tag >= 0x80) return undefined
    const repeated = field >= 3 && field <= 5
    if (field < lastField || (field === lastField && !repeated)) return undefined
    lastField = field
    // the length: a varint of at most 4 bytes (an entry is far smaller than 2^28)
    let len = 0
    let scale = 1
    for (let i = 0; ; i++) {
      if (i === 4 || at >= n) return undefined
      const b = bytes[at++]
      len += (b & 0x7f) * scale
      if (b < 0x80) { if (b === 0 && i > 0) return undefined; break }
      scale *= 128
    }
    const end = at + len
    if (end > n) return undefined
    let ascii = true
    for (let i = at; i < end; i++) if (bytes[i] >= 0x80) { ascii = false; break }
    const s = ascii ? latin1(bytes, at, end) : utf8.decode(bytes.subarray(at, end))
    switch (field) {
      case 1: out.kind = s; break
      case 2: out.text = s; break
      case 3: out.paths.push(s); break
      case 4: out.tags.push(s); break
      case 5: out.refs.push(s); break
      default: out.supersedes = s
    }
    at = end
  }
  return out
}

/** A finding's body, decoded: scanned when plain, else by Finding.decode (which throws on bytes that are not a Finding). */
export function decodeFinding (bytes: Uint8Array): Finding {
  return scanFinding(bytes) ?? Finding.decode(bytes)
}

function latin1 (bytes: Uint8Array, start: number, end: number): string {
  if (Buffer.isBuffer(bytes)) return bytes.toString('latin1', start, end)
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1', start, end)
}
