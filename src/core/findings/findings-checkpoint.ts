// The byte format of a checkpoint of the findings index: what a restart reads
// instead of indexing every finding of the log again. It covers the findings
// up to a log cursor; those after it are indexed from the log as usual.
//
// This file holds the pieces of the format and the single-file format,
// still read; the checkpoint written now is in parts
// (findings-checkpoint-parts.ts), of the same sections. The single file, in
// the container of core/log/checkpoint-sections.ts, under "AGFCKPT1":
//   header       JSON { cursor, docs, segmentDocs, kinds, authors, paths, tags,
//                superseded: [[target id, by id]], pathValues, tagValues,
//                segments: [{ terms, termBytes, postingBytes, docCount }] }
//   per document cursor, time (f64), kind (u8), author (i32), three field
//                lengths (u16), the first 8 bytes of its id, the start of its
//                paths and tags in their value lists (i32)
//   path values, tag values (i32), the documents newest last (i32)
//   per segment  its terms (UTF-8, one per line: no term holds a line break),
//                offsets (u32, terms + 1), document frequencies (u32, 3 per
//                term), postings (bytes)
//
// decodeFindingsCheckpoint checks the container's digest and that every
// number is in range and every list in order (checkSnapshot), so what it
// returns can be searched without further checks; whether it is of this log
// is for FindingsIndex.fromSnapshot to check against the log.
import { InvalidArgumentError } from '../errors.js'
import { decodeSections, encodeSections } from '../log/checkpoint-sections.js'

const MAGIC = new TextEncoder().encode('AGFCKPT1')

export interface SegmentSnapshot {
  terms: string[]
  offsets: Uint32Array
  dfs: Uint32Array
  bytes: Uint8Array
  docCount: number
}

/** Documents firstDoc, firstDoc + 1, ... of a findings index: their columns (document firstDoc + d at d) and their term segments. */
export interface FindingsDocs {
  /** 0 in a whole snapshot */
  firstDoc: number
  docCursor: Float64Array
  docTime: Float64Array
  docKind: Uint8Array
  docAuthor: Int32Array
  docLength: [Uint16Array, Uint16Array, Uint16Array]
  /** documents x 8 bytes */
  docIdHead: Uint8Array
  /** where each document's list starts in pathValues (the first at 0) */
  pathStarts: Int32Array
  pathValues: Int32Array
  tagStarts: Int32Array
  tagValues: Int32Array
  /** postings of absolute document numbers: all but the last full */
  segments: SegmentSnapshot[]
}

/** A findings index up to a log cursor, as plain arrays (document d is index d when firstDoc is 0). */
export interface FindingsSnapshot extends FindingsDocs {
  /** the log cursor the index has taken in every finding up to */
  cursor: number
  segmentDocs: number
  kinds: string[]
  authors: string[]
  paths: string[]
  tags: string[]
  /** every document, newest last */
  recency: Int32Array
  /** [finding id, id of a finding that supersedes it] */
  superseded: Array<[string, string]>
}

/** The sections of documents' columns, in the order they are written (see takeDocs). */
export function docSections(d: FindingsDocs): ArrayBufferView[] {
  return [d.docCursor, d.docTime, d.docKind, d.docAuthor, ...d.docLength, d.docIdHead, d.pathStarts, d.tagStarts, d.pathValues, d.tagValues]
}

/** The sections of term segments, and what a header says of each (see takeSegments). */
export function segmentSections(segments: readonly SegmentSnapshot[]): { heads: SegmentHead[]; sections: ArrayBufferView[] } {
  const encoder = new TextEncoder()
  const texts = segments.map(g => encoder.encode(g.terms.join('\n')))
  return {
    heads: segments.map((g, i) => ({
      terms: g.terms.length,
      termBytes: texts[i].byteLength,
      postingBytes: g.bytes.byteLength,
      docCount: g.docCount
    })),
    sections: segments.flatMap((g, i) => [texts[i], g.offsets, g.dfs, g.bytes])
  }
}

export interface SegmentHead {
  terms: number
  termBytes: number
  postingBytes: number
  docCount: number
}

/** The single-file checkpoint (the single-file format: still read, see findings-checkpoint-parts for the one written now). */
export function encodeFindingsCheckpoint(s: FindingsSnapshot): Uint8Array {
  if (s.firstDoc !== 0) throw new InvalidArgumentError('a single-file findings checkpoint holds every document')
  const { header, sections } = wholeHeader(s)
  return encodeSections(MAGIC, header, [...docSections(s), s.recency, ...sections])
}

/**
 * What a header says of a snapshot (snapshotHeader reads it), with its documents' value counts and segments, and the segments' sections.
 */
export function wholeHeader(s: FindingsSnapshot): { header: Record<string, unknown>; sections: ArrayBufferView[] } {
  const { heads, sections } = segmentSections(s.segments)
  const header = {
    cursor: s.cursor,
    docs: s.recency.length,
    segmentDocs: s.segmentDocs,
    kinds: s.kinds,
    authors: s.authors,
    paths: s.paths,
    tags: s.tags,
    superseded: s.superseded,
    pathValues: s.pathValues.length,
    tagValues: s.tagValues.length,
    segments: heads
  }
  return { header, sections }
}

export function bad(why: string): never {
  throw new InvalidArgumentError(`not a usable findings checkpoint: ${why}`)
}

export const count = (v: unknown, what: string, min = 0): number => {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) bad(what)
  return v
}

export const names = (v: unknown, what: string): string[] => {
  if (!Array.isArray(v) || v.some(x => typeof x !== 'string')) bad(what)
  return v as string[]
}

/** The snapshot a checkpoint holds, checked; throws InvalidArgumentError on anything that is not a whole, consistent one. */
export function decodeFindingsCheckpoint(bytes: Uint8Array): FindingsSnapshot {
  const { header: h, take, end } = decodeSections(bytes, MAGIC, 'findings checkpoint')
  const head = snapshotHeader(h)
  const docs = takeDocs(take, 0, count(h.docs, 'document count'), h)
  const recency = new Int32Array(take(docs.docCursor.length * 4).buffer)
  docs.segments = takeSegments(take, h.segments)
  end()
  return checkSnapshot({ ...head, ...docs, recency })
}

/** What a checkpoint's header says of the index as a whole, checked. */
export function snapshotHeader(
  h: Record<string, unknown>
): Pick<FindingsSnapshot, 'cursor' | 'segmentDocs' | 'kinds' | 'authors' | 'paths' | 'tags' | 'superseded'> {
  const cursor = count(h.cursor, 'cursor')
  const segmentDocs = count(h.segmentDocs, 'segment size', 1)
  const kinds = names(h.kinds, 'kinds')
  const authors = names(h.authors, 'authors')
  const paths = names(h.paths, 'paths')
  const tags = names(h.tags, 'tags')
  if (kinds.length > 255) bad('kinds')
  if (!Array.isArray(h.superseded) || h.superseded.some(p => !Array.isArray(p) || p.length !== 2 || p.some(x => typeof x !== 'string')))
    bad('superseded')
  return { cursor, segmentDocs, kinds, authors, paths, tags, superseded: h.superseded as Array<[string, string]> }
}

type Take = (len: number) => Uint8Array

/**
 * The columns of `n` documents from `firstDoc` (as docSections wrote them; `h` says how many path and tag values), without their segments.
 */
export function takeDocs(take: Take, firstDoc: number, n: number, h: Record<string, unknown>): FindingsDocs {
  const nPathValues = count(h.pathValues, 'path values')
  const nTagValues = count(h.tagValues, 'tag values')
  const f64 = (len: number): Float64Array => new Float64Array(take(len * 8).buffer)
  const i32 = (len: number): Int32Array => new Int32Array(take(len * 4).buffer)
  const u16 = (len: number): Uint16Array => new Uint16Array(take(len * 2).buffer)
  return {
    firstDoc,
    docCursor: f64(n),
    docTime: f64(n),
    docKind: take(n),
    docAuthor: i32(n),
    docLength: [u16(n), u16(n), u16(n)],
    docIdHead: take(n * 8),
    pathStarts: i32(n),
    tagStarts: i32(n),
    pathValues: i32(nPathValues),
    tagValues: i32(nTagValues),
    segments: []
  }
}

/** The term segments a header's `heads` describes (as segmentSections wrote them). */
export function takeSegments(take: Take, heads: unknown): SegmentSnapshot[] {
  if (!Array.isArray(heads)) bad('segments')
  const checked = (heads as unknown[]).map((g, i) => {
    const x = (g ?? {}) as Record<string, unknown>
    return {
      terms: count(x.terms, `segment ${i} terms`),
      termBytes: count(x.termBytes, `segment ${i} term bytes`),
      postingBytes: count(x.postingBytes, `segment ${i} postings`),
      docCount: count(x.docCount, `segment ${i} documents`)
    }
  })
  const decoder = new TextDecoder()
  return checked.map((g, i): SegmentSnapshot => {
    const text = decoder.decode(take(g.termBytes))
    const terms = g.terms === 0 ? [] : text.split('\n')
    if (terms.length !== g.terms) bad(`segment ${i}: term count`)
    return {
      terms,
      offsets: new Uint32Array(take((g.terms + 1) * 4).buffer),
      dfs: new Uint32Array(take(g.terms * 12).buffer),
      bytes: take(g.postingBytes),
      docCount: g.docCount
    }
  })
}

/** `s` when every number is in range and every list in order (a whole snapshot: firstDoc 0); throws InvalidArgumentError otherwise. */
export function checkSnapshot(s: FindingsSnapshot): FindingsSnapshot {
  const { docCursor, docTime, docKind, docAuthor, kinds, authors, segments, segmentDocs } = s
  const n = docCursor.length
  if (s.firstDoc !== 0) bad('documents missing at the start')
  let last = 0
  for (let d = 0; d < n; d++) {
    const c = docCursor[d]
    if (!Number.isSafeInteger(c) || c <= last) bad(`document ${d}: cursor does not grow`)
    last = c
    if (!Number.isSafeInteger(docTime[d]) || docTime[d] < 0) bad(`document ${d}: time`)
    if (docKind[d] >= kinds.length) bad(`document ${d}: kind`)
    if (!(docAuthor[d] >= 0 && docAuthor[d] < authors.length)) bad(`document ${d}: author`)
  }
  if (last > s.cursor) bad('a document past the cursor')
  checkLists(s.pathStarts, s.pathValues, s.paths.length, 'paths')
  checkLists(s.tagStarts, s.tagValues, s.tags.length, 'tags')
  if (s.recency.length !== n) bad('recency is not an order of the documents')
  const seen = new Uint8Array(n)
  for (const d of s.recency) {
    if (!(d >= 0 && d < n) || seen[d] === 1) bad('recency is not an order of the documents')
    seen[d] = 1
  }
  let base = 0
  segments.forEach((g, i) => {
    if (i < segments.length - 1 && g.docCount !== segmentDocs) bad(`segment ${i}: not full`)
    if (g.docCount > segmentDocs) bad(`segment ${i}: too many documents`)
    checkSegment(g, base, base + g.docCount, i)
    base += g.docCount
  })
  if (base !== n) bad('the segments do not hold the documents')
  return s
}

function checkLists(starts: Int32Array, values: Int32Array, names: number, what: string): void {
  let last = 0
  for (const s of starts) {
    if (s < last || s > values.length) bad(`${what}: list starts`)
    last = s
  }
  for (const v of values) if (!(v >= 0 && v < names)) bad(`${what}: a name out of range`)
}

/** Terms sorted and distinct; each term's postings in range, docs ascending in [from, to), frequencies as counted. */
function checkSegment(g: SegmentSnapshot, from: number, to: number, i: number): void {
  const { terms, offsets, dfs, bytes } = g
  for (let t = 1; t < terms.length; t++) if (!(terms[t - 1] < terms[t])) bad(`segment ${i}: terms out of order`)
  if (terms.some(t => t === '')) bad(`segment ${i}: an empty term`)
  if (offsets[0] !== 0 || offsets[terms.length] !== bytes.length) bad(`segment ${i}: offsets`)
  for (let t = 0; t < terms.length; t++) {
    const end = offsets[t + 1]
    if (end < offsets[t]) bad(`segment ${i}: offsets`)
    let doc = 0
    let first = true
    const df = [0, 0, 0]
    for (let p = offsets[t]; p < end;) {
      let delta = 0
      let mul = 1
      for (;;) {
        if (p >= end || mul > 2 ** 28) bad(`segment ${i}: postings`)
        const v = bytes[p++]
        delta += (v & 0x7f) * mul
        if (v < 0x80) break
        mul *= 128
      }
      if (!first && delta === 0) bad(`segment ${i}: a document twice`)
      first = false
      doc += delta
      if (doc < from || doc >= to || p >= end) bad(`segment ${i}: postings`)
      const tf = bytes[p++]
      if (tf === 0) bad(`segment ${i}: an empty posting`)
      if (tf >> 4 > 0) df[0]++
      if (((tf >> 2) & 3) > 0) df[1]++
      if ((tf & 3) > 0) df[2]++
    }
    if (df[0] !== dfs[t * 3] || df[1] !== dfs[t * 3 + 1] || df[2] !== dfs[t * 3 + 2]) bad(`segment ${i}: document frequencies`)
  }
}
