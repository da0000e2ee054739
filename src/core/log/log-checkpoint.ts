// The byte format of a checkpoint of the accepted entries' index (the rows of
// accepted-entries.ts): what a restart reads instead of decoding and hashing
// every entry again. It covers the entries up to a cursor; those after it are
// folded from the log as usual.
//
//   "AGLCKPT1"                      8 bytes
//   header length                   u32, then the header: JSON
//                                   { rows, cursor, authors: [names] }, padded to 8
//   ids                             rows x 32 bytes
//   author index, seq               rows x i32 each, each padded to 8
//   lamport, cursor                 rows x f64 each
//   kind index                      rows x u8, padded to 8
//   sha256 of all the above         32 bytes
//
// Numbers are little-endian. decodeCheckpoint checks the digest and every
// field's range, and that the rows are a log (cursors grow, each author's seqs
// run from 1 without a gap); it throws InvalidArgumentError otherwise, so a
// corrupt or foreign file is refused whole and the log is folded instead.
import { InvalidArgumentError } from '../errors.js'
import { sha256 } from './crypto.js'
import { KNOWN_KINDS } from './kinds.js'
import { ENTRY_ID_BYTES } from './limits.js'

const MAGIC = new TextEncoder().encode('AGLCKPT1')
const DIGEST_BYTES = 32
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1

/** The rows of a checkpoint, as plain arrays (row r is index r). */
export interface CheckpointRows {
  /** the cursor of the last row: the checkpoint covers the log up to here */
  cursor: number
  authors: string[]
  /** rows x ENTRY_ID_BYTES */
  ids: Uint8Array
  author: Int32Array
  seq: Int32Array
  lamport: Float64Array
  rowCursor: Float64Array
  /** index into KNOWN_KINDS */
  kind: Uint8Array
}

const pad8 = (n: number): number => (n + 7) & ~7

/** The checkpoint's bytes; throws on a big-endian machine (no checkpoint is written there). */
export function encodeCheckpoint (rows: CheckpointRows): Uint8Array {
  if (!LITTLE_ENDIAN) throw new InvalidArgumentError('checkpoints are written only on little-endian machines')
  const n = rows.author.length
  const header = new TextEncoder().encode(JSON.stringify({ rows: n, cursor: rows.cursor, authors: rows.authors }))
  const sections: Uint8Array[] = [
    rows.ids,
    new Uint8Array(rows.author.buffer, rows.author.byteOffset, n * 4),
    new Uint8Array(rows.seq.buffer, rows.seq.byteOffset, n * 4),
    new Uint8Array(rows.lamport.buffer, rows.lamport.byteOffset, n * 8),
    new Uint8Array(rows.rowCursor.buffer, rows.rowCursor.byteOffset, n * 8),
    rows.kind
  ]
  const headerEnd = pad8(MAGIC.length + 4 + header.length)
  const size = headerEnd + sections.reduce((s, x) => s + pad8(x.byteLength), 0) + DIGEST_BYTES
  const out = new Uint8Array(size)
  out.set(MAGIC, 0)
  new DataView(out.buffer).setUint32(MAGIC.length, header.length, true)
  out.set(header, MAGIC.length + 4)
  let at = headerEnd
  for (const s of sections) { out.set(s, at); at += pad8(s.byteLength) }
  out.set(sha256(out.subarray(0, at)), at)
  return out
}

function bad (why: string): never {
  throw new InvalidArgumentError(`not a usable log checkpoint: ${why}`)
}

/** The rows of a checkpoint, checked; throws InvalidArgumentError on anything that is not a whole, consistent checkpoint. */
export function decodeCheckpoint (bytes: Uint8Array): CheckpointRows {
  if (!LITTLE_ENDIAN) bad('this machine is big-endian')
  if (bytes.byteLength < MAGIC.length + 4 + DIGEST_BYTES) bad('too short')
  for (let i = 0; i < MAGIC.length; i++) if (bytes[i] !== MAGIC[i]) bad('wrong magic')
  const body = bytes.subarray(0, bytes.byteLength - DIGEST_BYTES)
  const digest = sha256(body)
  const stored = bytes.subarray(body.byteLength)
  for (let i = 0; i < DIGEST_BYTES; i++) if (digest[i] !== stored[i]) bad('digest mismatch')
  const headerLength = new DataView(bytes.buffer, bytes.byteOffset).getUint32(MAGIC.length, true)
  if (MAGIC.length + 4 + headerLength > body.byteLength) bad('header runs past the end')
  let header: unknown
  try {
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(MAGIC.length + 4, MAGIC.length + 4 + headerLength)))
  } catch {
    bad('header is not JSON')
  }
  const h = header as { rows?: unknown, cursor?: unknown, authors?: unknown }
  const n = h.rows
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) bad('row count')
  if (typeof h.cursor !== 'number' || !Number.isSafeInteger(h.cursor)) bad('cursor')
  if (!Array.isArray(h.authors) || h.authors.some(a => typeof a !== 'string' || a === '')) bad('authors')
  const authors = h.authors as string[]
  if (new Set(authors).size !== authors.length) bad('an author twice')
  let at = pad8(MAGIC.length + 4 + headerLength)
  const take = (len: number): Uint8Array => {
    if (at + len > body.byteLength) bad('sections run past the end')
    // a copy: aligned for the typed arrays, and free of the file's buffer
    // (not bytes.slice: on a Buffer that is a view)
    const s = new Uint8Array(len)
    s.set(bytes.subarray(at, at + len))
    at += pad8(len)
    return s
  }
  const ids = take(n * ENTRY_ID_BYTES)
  const author = new Int32Array(take(n * 4).buffer)
  const seq = new Int32Array(take(n * 4).buffer)
  const lamport = new Float64Array(take(n * 8).buffer)
  const rowCursor = new Float64Array(take(n * 8).buffer)
  const kind = take(n)
  if (at !== body.byteLength) bad('bytes left over')

  const held = new Int32Array(authors.length)
  let last = 0
  for (let r = 0; r < n; r++) {
    const a = author[r]
    if (!(a >= 0 && a < authors.length)) bad(`row ${r}: author index`)
    if (seq[r] !== held[a] + 1) bad(`row ${r}: seq ${seq[r]} does not follow ${held[a]}`)
    held[a] = seq[r]
    const c = rowCursor[r]
    if (!Number.isSafeInteger(c) || c <= last) bad(`row ${r}: cursor does not grow`)
    last = c
    if (kind[r] >= KNOWN_KINDS.length) bad(`row ${r}: kind`)
    if (!Number.isSafeInteger(lamport[r]) || lamport[r] < 0) bad(`row ${r}: lamport`)
  }
  if (last !== h.cursor) bad('the header cursor is not the last row\'s')
  if (held.some(s => s === 0)) bad('an author without rows')
  return { cursor: last, authors, ids, author, seq, lamport, rowCursor, kind }
}
