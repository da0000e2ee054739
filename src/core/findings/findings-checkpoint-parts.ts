// The findings checkpoint in parts: each full term segment (SEGMENT_DOCS
// findings) with its documents' columns in a part of its own, written once
// and never again, and a head rewritten at every checkpoint with the rest
// (the names, the recency order, the supersedings, the documents of the
// segment still open). At a million findings a checkpoint then writes a few
// MB instead of the whole index (about 117 MB).
//
// A part, in the container of core/log/checkpoint-sections.ts under "AGFPART1":
//   header       JSON { firstDoc, docs, pathValues, tagValues, segments: [one] }
//   sections     the documents' columns and the segment's, as in the single
//                file (findings-checkpoint.ts), path and tag lists from 0
// The head, under "AGFCKPT2":
//   header       JSON { cursor, docs, segmentDocs, kinds, authors, paths, tags,
//                superseded, parts: [digest of part i (hex)], firstDoc,
//                pathValues, tagValues, segments }
//   sections     the columns of documents firstDoc.., the recency of all of
//                them (i32), the segments from firstDoc on
//
// The head names each part by its index and the sha256 that ends its file
// (the container's digest, checked when it is read): a part of another
// index, or an older one, is not mixed in; a part missing or torn makes the
// whole checkpoint refused (then the log is indexed). Where a part is kept is
// for the caller (readPart): this file does no I/O.
import { decodeSections, encodeSections } from '../log/checkpoint-sections.js'
import { toHex } from '../log/crypto.js'
import {
  bad,
  checkSnapshot,
  count,
  decodeFindingsCheckpoint,
  docSections,
  segmentSections,
  snapshotHeader,
  takeDocs,
  takeSegments,
  wholeHeader,
  type FindingsDocs,
  type FindingsSnapshot
} from './findings-checkpoint.js'

const HEAD_MAGIC = new TextEncoder().encode('AGFCKPT2')
const SINGLE_MAGIC = new TextEncoder().encode('AGFCKPT1')
const PART_MAGIC = new TextEncoder().encode('AGFPART1')
const DIGEST_BYTES = 32

/** A part of a checkpoint: documents and their full segment. */
export function encodeFindingsPart(d: FindingsDocs): Uint8Array {
  if (d.segments.length !== 1) bad('a part holds one segment')
  const { heads, sections } = segmentSections(d.segments)
  const header = {
    firstDoc: d.firstDoc,
    docs: d.docCursor.length,
    pathValues: d.pathValues.length,
    tagValues: d.tagValues.length,
    segments: heads
  }
  return encodeSections(PART_MAGIC, header, [...docSections(d), ...sections])
}

/** What names a part's bytes: the digest that ends them (hex). */
export function partDigest(bytes: Uint8Array): string {
  return toHex(bytes.subarray(bytes.byteLength - DIGEST_BYTES))
}

/**
 * The head of a checkpoint: `s` holds the documents from the parts' end on (firstDoc = parts x segmentDocs); `parts` the digests of the
 * parts before, in order.
 */
export function encodeFindingsHead(s: FindingsSnapshot, parts: readonly string[]): Uint8Array {
  if (s.firstDoc !== parts.length * s.segmentDocs) bad('the head does not start where its parts end')
  const { header, sections } = wholeHeader(s)
  return encodeSections(HEAD_MAGIC, { ...header, parts, firstDoc: s.firstDoc }, [...docSections(s), s.recency, ...sections])
}

/** A checkpoint read: the whole snapshot, and the digests of the parts it was read from (none for a single file). */
export interface FindingsCheckpointParts {
  snapshot: FindingsSnapshot
  parts: string[]
}

const startsWith = (bytes: Uint8Array, magic: Uint8Array): boolean =>
  bytes.byteLength >= magic.length && magic.every((b, i) => bytes[i] === b)

/**
 * The snapshot a checkpoint's head (or a single-file checkpoint) and its
 * parts hold, checked as decodeFindingsCheckpoint checks one; `readPart`
 * gives the bytes of part `i` the head names by `digest` (undefined: none).
 * Throws InvalidArgumentError on anything that is not a whole, consistent
 * checkpoint, a part missing, torn or not the one named among them.
 */
export function decodeFindingsCheckpointParts(
  head: Uint8Array,
  readPart: (i: number, digest: string) => Uint8Array | undefined
): FindingsCheckpointParts {
  if (startsWith(head, SINGLE_MAGIC)) return { snapshot: decodeFindingsCheckpoint(head), parts: [] }
  const { header: h, take, end } = decodeSections(head, HEAD_MAGIC, 'findings checkpoint')
  const whole = snapshotHeader(h)
  const n = count(h.docs, 'document count')
  if (!Array.isArray(h.parts) || h.parts.some(p => typeof p !== 'string' || !/^[0-9a-f]{64}$/.test(p))) bad('parts')
  const parts = h.parts as string[]
  const firstDoc = count(h.firstDoc, 'first document')
  if (firstDoc !== parts.length * whole.segmentDocs || firstDoc > n) bad('the head does not start where its parts end')
  const tail = takeDocs(take, firstDoc, n - firstDoc, h)
  const recency = new Int32Array(take(n * 4).buffer)
  tail.segments = takeSegments(take, h.segments)
  end()
  const pieces = parts.map((digest, i) => readOnePart(readPart(i, digest), i, digest, whole.segmentDocs))
  return { snapshot: checkSnapshot({ ...whole, ...joinDocs([...pieces, tail]), recency }), parts }
}

function readOnePart(bytes: Uint8Array | undefined, i: number, digest: string, segmentDocs: number): FindingsDocs {
  if (bytes === undefined) bad(`part ${i} is missing`)
  if (bytes.byteLength < DIGEST_BYTES || partDigest(bytes) !== digest) bad(`part ${i} is not the one the head names`)
  const { header: h, take, end } = decodeSections(bytes, PART_MAGIC, `findings checkpoint part ${i}`)
  if (count(h.firstDoc, `part ${i}: first document`) !== i * segmentDocs || count(h.docs, `part ${i}: documents`) !== segmentDocs)
    bad(`part ${i}: not segment ${i}`)
  const docs = takeDocs(take, i * segmentDocs, segmentDocs, h)
  docs.segments = takeSegments(take, h.segments)
  end()
  if (docs.segments.length !== 1 || docs.segments[0].docCount !== segmentDocs) bad(`part ${i}: not one full segment`)
  return docs
}

/** Consecutive documents' pieces as one, from the first piece's firstDoc (path and tag lists rebased onto the joined values). */
export function joinDocs(pieces: readonly FindingsDocs[]): FindingsDocs {
  if (pieces.length === 1) return pieces[0]
  const n = pieces.reduce((s, p) => s + p.docCursor.length, 0)
  let at = pieces[0].firstDoc
  for (const p of pieces) {
    if (p.firstDoc !== at) bad('the parts do not follow each other')
    at += p.docCursor.length
  }
  const join = <T extends Float64Array | Int32Array | Uint8Array | Uint16Array>(
    make: (len: number) => T,
    of: (p: FindingsDocs) => T,
    per = 1
  ): T => {
    const out = make(n * per)
    let off = 0
    for (const p of pieces) {
      const a = of(p)
      out.set(a, off)
      off += a.length
    }
    return out
  }
  const lists = (
    starts: (p: FindingsDocs) => Int32Array,
    values: (p: FindingsDocs) => Int32Array
  ): { starts: Int32Array; values: Int32Array } => {
    const s = new Int32Array(n)
    const v = new Int32Array(pieces.reduce((sum, p) => sum + values(p).length, 0))
    let doc = 0
    let off = 0
    for (const p of pieces) {
      const ps = starts(p)
      for (let d = 0; d < ps.length; d++) s[doc + d] = ps[d] + off
      v.set(values(p), off)
      doc += ps.length
      off += values(p).length
    }
    return { starts: s, values: v }
  }
  const paths = lists(
    p => p.pathStarts,
    p => p.pathValues
  )
  const tags = lists(
    p => p.tagStarts,
    p => p.tagValues
  )
  return {
    firstDoc: pieces[0].firstDoc,
    docCursor: join(
      len => new Float64Array(len),
      p => p.docCursor
    ),
    docTime: join(
      len => new Float64Array(len),
      p => p.docTime
    ),
    docKind: join(
      len => new Uint8Array(len),
      p => p.docKind
    ),
    docAuthor: join(
      len => new Int32Array(len),
      p => p.docAuthor
    ),
    docLength: [0, 1, 2].map(f =>
      join(
        len => new Uint16Array(len),
        p => p.docLength[f]
      )
    ) as [Uint16Array, Uint16Array, Uint16Array],
    docIdHead: join(
      len => new Uint8Array(len),
      p => p.docIdHead,
      8
    ),
    pathStarts: paths.starts,
    pathValues: paths.values,
    tagStarts: tags.starts,
    tagValues: tags.values,
    segments: pieces.flatMap(p => p.segments)
  }
}
