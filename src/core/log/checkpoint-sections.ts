// The container of agency's checkpoint files (the log's index, the findings
// index): what a restart reads instead of folding the log again.
//
//   magic                           8 bytes
//   header length                   u32, then the header: JSON, padded to 8
//   sections                        each padded to 8
//   sha256 of all the above         32 bytes
//
// Numbers in sections are little-endian. The reader checks the magic, the
// digest and that the sections end where the file does, and throws
// InvalidArgumentError otherwise: a corrupt or foreign file is refused whole.
import { InvalidArgumentError } from '../errors.js'
import { sha256, sha256OfParts } from './crypto.js'

const DIGEST_BYTES = 32

export const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1

export const pad8 = (n: number): number => (n + 7) & ~7

/** The bytes of a typed array (a view, no copy). */
export function bytesOf(a: ArrayBufferView): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength)
}

/** A section's bytes: one typed array, or pieces of one written end to end (a column's chunks, without a copy of them joined first). */
export type Section = ArrayBufferView | readonly ArrayBufferView[]

/** A checkpoint file of `header` and `sections`, under `magic` (8 bytes); throws on a big-endian machine (none is written there). */
export function encodeSections(magic: Uint8Array, header: unknown, sections: readonly Section[]): Uint8Array {
  return joinParts(sectionParts(magic, header, sections))
}

/** The pieces of sectionParts as one array (a plain Uint8Array, as encodeSections has always given). */
export function joinParts(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.byteLength
  }
  return out
}

const ZEROS = new Uint8Array(8)

/**
 * The bytes of encodeSections as pieces to write one after the other: the
 * sections' own bytes as views (no copy), the header, the padding and the
 * digest (sha256 over the pieces). The views are of the caller's arrays:
 * write them before those change.
 */
export function sectionParts(magic: Uint8Array, header: unknown, sections: readonly Section[]): Uint8Array[] {
  if (!LITTLE_ENDIAN) throw new InvalidArgumentError('checkpoints are written only on little-endian machines')
  const head = new TextEncoder().encode(JSON.stringify(header))
  const start = new Uint8Array(pad8(magic.length + 4 + head.length))
  start.set(magic, 0)
  new DataView(start.buffer).setUint32(magic.length, head.length, true)
  start.set(head, magic.length + 4)
  const parts: Uint8Array[] = [start]
  for (const s of sections) {
    let n = 0
    for (const piece of ArrayBuffer.isView(s) ? [s] : s) {
      if (piece.byteLength > 0) parts.push(bytesOf(piece))
      n += piece.byteLength
    }
    if (pad8(n) > n) parts.push(ZEROS.subarray(0, pad8(n) - n))
  }
  parts.push(sha256OfParts(parts))
  return parts
}

/** Reads a checkpoint file's sections in the order they were written. */
export interface SectionReader {
  /** the parsed JSON header (not checked: the caller checks what it uses) */
  header: Record<string, unknown>
  /** the next section of `len` bytes, as an aligned copy */
  take: (len: number) => Uint8Array
  /** the same without a copy when the file's bytes are aligned there (a view of them: keep it only while they may be kept) */
  view: (len: number) => Uint8Array
  /** throws when bytes are left after the last section */
  end: () => void
}

/** Opens a checkpoint file written by encodeSections under `magic`; `what` names it in errors. */
export function decodeSections(bytes: Uint8Array, magic: Uint8Array, what: string): SectionReader {
  const bad = (why: string): never => {
    throw new InvalidArgumentError(`not a usable ${what}: ${why}`)
  }
  if (!LITTLE_ENDIAN) bad('this machine is big-endian')
  if (bytes.byteLength < magic.length + 4 + DIGEST_BYTES) bad('too short')
  for (let i = 0; i < magic.length; i++) if (bytes[i] !== magic[i]) bad('wrong magic')
  const body = bytes.subarray(0, bytes.byteLength - DIGEST_BYTES)
  const digest = sha256(body)
  const stored = bytes.subarray(body.byteLength)
  for (let i = 0; i < DIGEST_BYTES; i++) if (digest[i] !== stored[i]) bad('digest mismatch')
  const headerLength = new DataView(bytes.buffer, bytes.byteOffset).getUint32(magic.length, true)
  if (magic.length + 4 + headerLength > body.byteLength) bad('header runs past the end')
  let header: unknown
  try {
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(magic.length + 4, magic.length + 4 + headerLength)))
  } catch {
    bad('header is not JSON')
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header)) bad('header is not an object')
  let at = pad8(magic.length + 4 + headerLength)
  const copy = (len: number): Uint8Array => {
    if (!Number.isSafeInteger(len) || len < 0 || at + len > body.byteLength) bad('sections run past the end')
    // a copy: aligned for the typed arrays, and free of the file's buffer
    // (not bytes.slice: on a Buffer that is a view)
    const s = new Uint8Array(len)
    s.set(bytes.subarray(at, at + len))
    at += pad8(len)
    return s
  }
  return {
    header: header as Record<string, unknown>,
    view: (len: number): Uint8Array => {
      if (!Number.isSafeInteger(len) || len < 0 || at + len > body.byteLength) bad('sections run past the end')
      if ((bytes.byteOffset + at) % 8 !== 0) return copy(len)
      const v = bytes.subarray(at, at + len)
      at += pad8(len)
      return v
    },
    take: (len: number): Uint8Array => copy(len),
    end: () => {
      if (at !== body.byteLength) bad('bytes left over')
    }
  }
}
