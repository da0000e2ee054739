// Reads an entry's fields straight from its bytes, for the bulk path of sync:
// no protobuf reader, no re-encoding to test that the bytes are canonical.
//
// It takes only the plainest form of the canonical encoding (encodeEntry's):
// each field at most once, in field-number order, with its one-byte tag,
// minimal varints, no field at its default (zero, empty), ASCII strings.
// Such bytes are exactly what encodeEntry gives for the entry they hold, so
// they are canonical. Anything else (a multi-byte UTF-8 author or kind, any
// odd form) is not judged here: the caller falls back to decodeEntry, which
// decides. The entry's byte fields are views into `bytes`.
import type { Entry } from '../../gen/agency/v1/log.js'
import { KNOWN_KINDS } from './kinds.js'

const EMPTY = Buffer.alloc(0)

/** The known kinds, to hand back the one string of each instead of a new one per entry. */
const KINDS: readonly string[] = KNOWN_KINDS
/** The author of the entry scanned last: a bulk sync sends each author's entries together, so the next is mostly the same one. */
let lastAuthor = ''

/** True when `buf[start, end)` holds the characters of `known` (ASCII). */
function sameAscii(buf: Buffer, start: number, end: number, known: string): boolean {
  if (known.length !== end - start) return false
  for (let i = 0; i < known.length; i++) if (buf[start + i] !== known.charCodeAt(i)) return false
  return true
}

function kindString(buf: Buffer, start: number, end: number): string {
  for (const k of KINDS) if (sameAscii(buf, start, end, k)) return k
  return buf.toString('latin1', start, end)
}

function authorString(buf: Buffer, start: number, end: number): string {
  if (sameAscii(buf, start, end, lastAuthor)) return lastAuthor
  lastAuthor = buf.toString('latin1', start, end)
  return lastAuthor
}

/**
 * The entry `bytes` hold when they are in the plain canonical form, else
 * undefined (then decodeEntry says whether they are canonical at all).
 * Never throws.
 */
export function scanEntry(bytes: Uint8Array): Entry | undefined {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const n = buf.length
  let at = 0
  let lastField = 0
  let author = ''
  let seq = 0
  let prev: Buffer = EMPTY
  let lamport = 0
  let time = 0
  let kind = ''
  let body: Buffer = EMPTY
  let sig: Buffer = EMPTY
  while (at < n) {
    const tag = buf[at++]
    const field = tag >>> 3
    if (field <= lastField || field > 8 || tag >= 0x80) return undefined
    lastField = field
    const delimited = field === 1 || field === 3 || field === 6 || field === 7 || field === 8
    if (tag !== ((field << 3) | (delimited ? 2 : 0))) return undefined
    // a varint, inline (no closure per entry): undefined when it is not minimal, too long for a safe integer, cut off, or zero
    let v = 0
    let scale = 1
    for (let i = 0; ; i++) {
      if (i === 8 || at >= n) return undefined
      const b = buf[at++]
      v += (b & 0x7f) * scale
      if (b < 0x80) {
        // a last byte of zero after the first would make the varint longer than it needs to be
        if (b === 0 && i > 0) return undefined
        break
      }
      scale *= 128
    }
    if (v > Number.MAX_SAFE_INTEGER || v === 0) return undefined
    if (!delimited) {
      if (field === 2) seq = v
      else if (field === 4) lamport = v
      else time = v
      continue
    }
    const end = at + v
    if (end > n) return undefined
    if (field === 1 || field === 6) {
      for (let i = at; i < end; i++) if (buf[i] >= 0x80) return undefined
      if (field === 1) author = authorString(buf, at, end)
      else kind = kindString(buf, at, end)
    } else {
      const view = buf.subarray(at, end)
      if (field === 3) prev = view
      else if (field === 7) body = view
      else sig = view
    }
    at = end
  }
  return { author, seq, prev, lamport, time, kind, body, sig }
}
