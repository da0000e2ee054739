// The byte format of a checkpoint of the accepted entries' index (the rows of
// accepted-entries.ts): what a restart reads instead of decoding and hashing
// every entry again. It covers the entries up to a cursor; those after it are
// folded from the log as usual.
//
// In the container of checkpoint-sections.ts, under the magic "AGLCKPT1":
//   header                          JSON { rows, cursor, authors: [names] }
//   ids                             rows x 32 bytes
//   author index, seq               rows x i32 each
//   lamport, cursor                 rows x f64 each
//   kind index                      rows x u8
//
// decodeCheckpoint checks the container's digest and every
// field's range, and that the rows are a log (cursors grow, each author's seqs
// run from 1 without a gap); it throws InvalidArgumentError otherwise, so a
// corrupt or foreign file is refused whole and the log is folded instead.
import { InvalidArgumentError } from '../errors.js'
import { decodeSections, joinParts, sectionParts, type Section } from './checkpoint-sections.js'
import { KNOWN_KINDS } from './kinds.js'
import { ENTRY_ID_BYTES } from './limits.js'

const MAGIC = new TextEncoder().encode('AGLCKPT1')

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

/**
 * The rows to write, each column as one array or as the pieces of one (the
 * index's column chunks, as views): encoding reads them once, into the file's
 * bytes, without whole copies of the columns made first.
 */
export type CheckpointColumns = { [K in keyof CheckpointRows]: CheckpointRows[K] extends ArrayBufferView ? Section : CheckpointRows[K] }

/** The checkpoint's bytes; throws on a big-endian machine (no checkpoint is written there). */
export function encodeCheckpoint(rows: CheckpointColumns): Uint8Array {
  return joinParts(checkpointParts(rows))
}

/** The checkpoint's bytes as pieces to write in order, the columns' as views of `rows` (see sectionParts). */
export function checkpointParts(rows: CheckpointColumns): Uint8Array[] {
  const n = sectionLength(rows.author, 4)
  return sectionParts(MAGIC, { rows: n, cursor: rows.cursor, authors: rows.authors }, [
    rows.ids,
    rows.author,
    rows.seq,
    rows.lamport,
    rows.rowCursor,
    rows.kind
  ])
}

function sectionLength(s: Section, bytesEach: number): number {
  return (ArrayBuffer.isView(s) ? s.byteLength : s.reduce((n, x) => n + x.byteLength, 0)) / bytesEach
}

function bad(why: string): never {
  throw new InvalidArgumentError(`not a usable log checkpoint: ${why}`)
}

/** The rows of a checkpoint, checked; throws InvalidArgumentError on anything that is not a whole, consistent checkpoint. */
export function decodeCheckpoint(bytes: Uint8Array): CheckpointRows {
  // views of the file's bytes where they are aligned: AcceptedEntries.fromCheckpoint copies the rows into its columns
  const { header, view: take, end } = decodeSections(bytes, MAGIC, 'log checkpoint')
  const h = header as { rows?: unknown; cursor?: unknown; authors?: unknown }
  const n = h.rows
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) bad('row count')
  if (typeof h.cursor !== 'number' || !Number.isSafeInteger(h.cursor)) bad('cursor')
  if (!Array.isArray(h.authors) || h.authors.some(a => typeof a !== 'string' || a === '')) bad('authors')
  const authors = h.authors as string[]
  if (new Set(authors).size !== authors.length) bad('an author twice')
  const ids = take(n * ENTRY_ID_BYTES)
  const i32 = (v: Uint8Array): Int32Array => new Int32Array(v.buffer, v.byteOffset, v.byteLength / 4)
  const f64 = (v: Uint8Array): Float64Array => new Float64Array(v.buffer, v.byteOffset, v.byteLength / 8)
  const author = i32(take(n * 4))
  const seq = i32(take(n * 4))
  const lamport = f64(take(n * 8))
  const rowCursor = f64(take(n * 8))
  const kind = take(n)
  end()

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
  if (last !== h.cursor) bad("the header cursor is not the last row's")
  if (held.some(s => s === 0)) bad('an author without rows')
  return { cursor: last, authors, ids, author, seq, lamport, rowCursor, kind }
}
