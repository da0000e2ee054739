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
export function scanFinding(bytes: Uint8Array): Finding | undefined {
  const out: Finding = { kind: '', text: '', paths: [], tags: [], refs: [], supersedes: '' }
  return walkFinding(bytes, out) ? out : undefined
}

/**
 * True when `bytes` hold a finding in the plain form (scanFinding would read
 * it), without making its strings: the body check of a bulk sync, which the
 * findings index follows with scanFinding. Never throws.
 */
export function isPlainFinding(bytes: Uint8Array): boolean {
  return walkFinding(bytes, undefined)
}

/**
 * False only when `bytes` are a plain finding none of whose tags is `tag`
 * (ASCII): a listener that wants the findings with one tag skips the rest
 * without decoding them. True for any other bytes (decode them to know).
 */
export function mayHaveTag(bytes: Uint8Array, tag: string): boolean {
  const n = bytes.length
  let at = 0
  let lastField = 0
  let found = false
  while (at < n) {
    const t = bytes[at++]
    const field = t >>> 3
    if ((t & 7) !== 2 || field < 1 || field > 6 || t >= 0x80) return true
    if (field < lastField || (field === lastField && !(field >= 3 && field <= 5))) return true
    lastField = field
    let len = 0
    let scale = 1
    for (let i = 0; ; i++) {
      if (i === 4 || at >= n) return true
      const b = bytes[at++]
      len += (b & 0x7f) * scale
      if (b < 0x80) {
        if (b === 0 && i > 0) return true
        break
      }
      scale *= 128
    }
    const end = at + len
    if (end > n) return true
    if (field === 4 && !found && len === tag.length) {
      let same = true
      for (let i = 0; i < len && same; i++) same = bytes[at + i] === tag.charCodeAt(i)
      found = same
    }
    at = end
  }
  return found
}

/** Walks the fields of a plain finding, reading them into `out` when given; false when the form is not plain. */
function walkFinding(bytes: Uint8Array, out: Finding | undefined): boolean {
  const n = bytes.length
  let at = 0
  let lastField = 0
  while (at < n) {
    const tag = bytes[at++]
    const field = tag >>> 3
    if ((tag & 7) !== 2 || field < 1 || field > 6 || tag >= 0x80) return false
    const repeated = field >= 3 && field <= 5
    if (field < lastField || (field === lastField && !repeated)) return false
    lastField = field
    // the length: a varint of at most 4 bytes (an entry is far smaller than 2^28)
    let len = 0
    let scale = 1
    for (let i = 0; ; i++) {
      if (i === 4 || at >= n) return false
      const b = bytes[at++]
      len += (b & 0x7f) * scale
      if (b < 0x80) {
        if (b === 0 && i > 0) return false
        break
      }
      scale *= 128
    }
    const end = at + len
    if (end > n) return false
    if (out !== undefined) {
      let ascii = true
      for (let i = at; i < end; i++)
        if (bytes[i] >= 0x80) {
          ascii = false
          break
        }
      const s = ascii ? latin1(bytes, at, end) : utf8.decode(bytes.subarray(at, end))
      switch (field) {
        case 1:
          out.kind = s
          break
        case 2:
          out.text = s
          break
        case 3:
          out.paths.push(s)
          break
        case 4:
          out.tags.push(s)
          break
        case 5:
          out.refs.push(s)
          break
        default:
          out.supersedes = s
      }
    }
    at = end
  }
  return true
}

/** A finding's body, decoded: scanned when plain, else by Finding.decode (which throws on bytes that are not a Finding). */
export function decodeFinding(bytes: Uint8Array): Finding {
  return scanFinding(bytes) ?? Finding.decode(bytes)
}

function latin1(bytes: Uint8Array, start: number, end: number): string {
  if (Buffer.isBuffer(bytes)) return bytes.toString('latin1', start, end)
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1', start, end)
}
