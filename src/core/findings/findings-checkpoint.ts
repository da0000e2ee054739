// The byte format of a checkpoint of the findings index: what a restart reads
// instead of indexing every finding of the log again. It covers the findings
// up to a log cursor; those after it are indexed from the log as usual.
//
// In the container of core/log/checkpoint-sections.ts, under "AGFCKPT1":
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
// number is in range and every list in order, so what it returns can be
// searched without further checks; whether it is of this log is for
// FindingsIndex.fromSnapshot to check against the log.
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

/** A findings index up to a log cursor, as plain arrays (document d is index d). */
export interface FindingsSnapshot {
  /** the log cursor the index has taken in every finding up to */
  cursor: number
  segmentDocs: number
  kinds: string[]
  authors: string[]
  paths: string[]
  tags: string[]
  docCursor: Float64Array
  docTime: Float64Array
  docKind: Uint8Array
  docAuthor: Int32Array
  docLength: [Uint16Array, Uint16Array, Uint16Array]
  /** documents x 8 bytes */
  docIdHead: Uint8Array
  pathStarts: Int32Array
  pathValues: Int32Array
  tagStarts: Int32Array
  tagValues: Int32Array
  /** documents, newest last */
  recency: Int32Array
  /** [finding id, id of a finding that supersedes it] */
  superseded: Array<[string, string]>
  segments: SegmentSnapshot[]
}

export function encodeFindingsCheckpoint (s: FindingsSnapshot): Uint8Array {
  const encoder = new TextEncoder()
  const termTexts = s.segments.map(g => encoder.encode(g.terms.join('\n')))
  const header = {
    cursor: s.cursor,
    docs: s.docCursor.length,
    segmentDocs: s.segmentDocs,
    kinds: s.kinds,
    authors: s.authors,
    paths: s.paths,
    tags: s.tags,
    superseded: s.superseded,
    pathValues: s.pathValues.length,
    tagValues: s.tagValues.length,
    segments: s.segments.map((g, i) => ({ terms: g.terms.length, termBytes: termTexts[i].byteLength, postingBytes: g.bytes.byteLength, docCount: g.docCount }))
  }
  return encodeSections(MAGIC, header, [
    s.docCursor, s.docTime, s.docKind, s.docAuthor, ...s.docLength, s.docIdHead, s.pathStarts, s.tagStarts,
    s.pathValues, s.tagValues, s.recency,
    ...s.segments.flatMap((g, i) => [termTexts[i], g.offsets, g.dfs, g.bytes])
  ])
}

function bad (why: string): never {
  throw new InvalidArgumentError(`not a usable findings checkpoint: ${why}`)
}

const count = (v: unknown, what: string, min = 0): number => {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) bad(what)
  return v
}

const names = (v: unknown, what: string): string[] => {
  if (!Array.isArray(v) || v.some(x => typeof x !== 'string')) bad(what)
  return v as string[]
}

/** The snapshot a checkpoint holds, checked; throws InvalidArgumentError on anything that is not a whole, consistent one. */
export function decodeFindingsCheckpoint (bytes: Uint8Array): FindingsSnapshot {
  const { header: h, take, end } = decodeSections(bytes, MAGIC, 'findings checkpoint')
  const cursor = count(h.cursor, 'cursor')
  const n = count(h.docs, 'document count')
  const segmentDocs = count(h.segmentDocs, 'segment size', 1)
  const kinds = names(h.kinds, 'kinds')
  const authors = names(h.authors, 'authors')
  const paths = names(h.paths, 'paths')
  const tags = names(h.tags, 'tags')
  if (kinds.length > 255) bad('kinds')
  if (!Array.isArray(h.superseded) || h.superseded.some(p => !Array.isArray(p) || p.length !== 2 || p.some(x => typeof x !== 'string'))) bad('superseded')
  const superseded = h.superseded as Array<[string, string]>
  const nPathValues = count(h.pathValues, 'path values')
  const nTagValues = count(h.tagValues, 'tag values')
  if (!Array.isArray(h.segments)) bad('segments')
  const segmentHeads = (h.segments as unknown[]).map((g, i) => {
    const x = (g ?? {}) as Record<string, unknown>
    return { terms: count(x.terms, `segment ${i} terms`), termBytes: count(x.termBytes, `segment ${i} term bytes`), postingBytes: count(x.postingBytes, `segment ${i} postings`), docCount: count(x.docCount, `segment ${i} documents`) }
  })

  const f64 = (len: number): Float64Array => new Float64Array(take(len * 8).buffer)
  const i32 = (len: number): Int32Array => new Int32Array(take(len * 4).buffer)
  const u16 = (len: number): Uint16Array => new Uint16Array(take(len * 2).buffer)
  const docCursor = f64(n)
  const docTime = f64(n)
  const docKind = take(n)
  const docAuthor = i32(n)
  const docLength: [Uint16Array, Uint16Array, Uint16Array] = [u16(n), u16(n), u16(n)]
  const docIdHead = take(n * 8)
  const pathStarts = i32(n)
  const tagStarts = i32(n)
  const pathValues = i32(nPathValues)
  const tagValues = i32(nTagValues)
  const recency = i32(n)
  const decoder = new TextDecoder()
  const segments = segmentHeads.map((g): SegmentSnapshot => {
    const text = decoder.decode(take(g.termBytes))
    const terms = g.terms === 0 ? [] : text.split('\n')
    return { terms, offsets: new Uint32Array(take((g.terms + 1) * 4).buffer), dfs: new Uint32Array(take(g.terms * 12).buffer), bytes: take(g.postingBytes), docCount: g.docCount }
  })
  end()

  let last = 0
  for (let d = 0; d < n; d++) {
    const c = docCursor[d]
    if (!Number.isSafeInteger(c) || c <= last) bad(`document ${d}: cursor does not grow`)
    last = c
    if (!Number.isSafeInteger(docTime[d]) || docTime[d] < 0) bad(`document ${d}: time`)
    if (docKind[d] >= kinds.length) bad(`document ${d}: kind`)
    if (!(docAuthor[d] >= 0 && docAuthor[d] < authors.length)) bad(`document ${d}: author`)
  }
  if (last > cursor) bad('a document past the cursor')
  checkLists(pathStarts, pathValues, paths.length, 'paths')
  checkLists(tagStarts, tagValues, tags.length, 'tags')
  const seen = new Uint8Array(n)
  for (const d of recency) {
    if (!(d >= 0 && d < n) || seen[d] === 1) bad('recency is not an order of the documents')
    seen[d] = 1
  }
  let base = 0
  segments.forEach((g, i) => {
    if (g.terms.length !== segmentHeads[i].terms) bad(`segment ${i}: term count`)
    if (i < segments.length - 1 && g.docCount !== segmentDocs) bad(`segment ${i}: not full`)
    if (g.docCount > segmentDocs) bad(`segment ${i}: too many documents`)
    checkSegment(g, base, base + g.docCount, i)
    base += g.docCount
  })
  if (base !== n) bad('the segments do not hold the documents')
  return { cursor, segmentDocs, kinds, authors, paths, tags, docCursor, docTime, docKind, docAuthor, docLength, docIdHead, pathStarts, pathValues, tagStarts, tagValues, recency, superseded, segments }
}

function checkLists (starts: Int32Array, values: Int32Array, names: number, what: string): void {
  let last = 0
  for (const s of starts) {
    if (s < last || s > values.length) bad(`${what}: list starts`)
    last = s
  }
  for (const v of values) if (!(v >= 0 && v < names)) bad(`${what}: a name out of range`)
}

/** Terms sorted and distinct; each term's postings in range, docs ascending in [from, to), frequencies as counted. */
function checkSegment (g: SegmentSnapshot, from: number, to: number, i: number): void {
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
      if ((tf >> 4) > 0) df[0]++
      if (((tf >> 2) & 3) > 0) df[1]++
      if ((tf & 3) > 0) df[2]++
    }
    if (df[0] !== dfs[t * 3] || df[1] !== dfs[t * 3 + 1] || df[2] !== dfs[t * 3 + 2]) bad(`segment ${i}: document frequencies`)
  }
}
