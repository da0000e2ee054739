// The inverted index of the findings: which documents hold each term, and
// how often in each field (text, paths, tags). Documents are added to an open
// segment (Maps and arrays); every SEGMENT_DOCS documents it is frozen into a
// sorted term list and one byte array of postings (doc deltas as varints, one
// byte of term frequencies), a few bytes per posting. Frozen segments never
// change, so a checkpoint writes each once.

/** Documents per segment before it is frozen. */
export const SEGMENT_DOCS = 32768

/** The fields of a finding, in posting order. */
export const FIELDS = ['text', 'paths', 'tags'] as const
export type FieldIndex = 0 | 1 | 2

/** Term frequencies of one posting in one byte: text (0..15), paths (0..3), tags (0..3), each capped. */
export function packTf(text: number, paths: number, tags: number): number {
  return (Math.min(text, 15) << 4) | (Math.min(paths, 3) << 2) | Math.min(tags, 3)
}

export function tfOf(packed: number, field: FieldIndex): number {
  return field === 0 ? packed >> 4 : field === 1 ? (packed >> 2) & 3 : packed & 3
}

/** A term found in one segment, to read its postings. */
export interface TermRef {
  segment: Segment
  /** the segment's own handle of the term */
  at: number
  term: string
}

export interface Segment {
  /** documents per field that hold the term */
  df: (at: number) => [number, number, number]
  /** calls `fn` for each posting of the term, docs ascending */
  postings: (at: number, fn: (doc: number, tf: number) => void) => void
  /** the term at the handle */
  term: (at: number) => string
  /** the handle of `term`, or -1 */
  find: (term: string) => number
  /** handles of the terms that start with `prefix` */
  withPrefix: (prefix: string) => number[]
  /** handles of the terms whose first character is `c` and whose length is in [min, max] */
  candidates: (c: string, min: number, max: number) => number[]
}

import { int32Column, uint8Column } from '../log/columns.js'
import { TermTable } from './term-table.js'

/**
 * The segment documents are added to. Its postings are chains in typed
 * columns (document, frequencies, next posting), a term's chain from its
 * first posting to its last, so a segment of tens of thousands of
 * documents is a few arrays, not an object and two arrays per term.
 */
export class OpenSegment implements Segment {
  private readonly table = new TermTable()
  private readonly terms: string[] = this.table.terms
  // per term handle
  private readonly first = int32Column()
  private readonly last = int32Column()
  private readonly dfs = [int32Column(), int32Column(), int32Column()] as const
  // per posting
  private readonly doc = int32Column()
  private readonly tf = uint8Column()
  private readonly next = int32Column()
  /** the term handle of each posting: freeze reads the postings in the order they came, not chain by chain */
  private readonly postingTerm = int32Column()
  docCount = 0

  /** The handle of `term` (lower-case), made when the segment does not have it yet. */
  handle(term: string): number {
    return this.made(this.table.handleOf(term))
  }

  /** The handle of the term `text[start, end)` is once lower-cased (ASCII only), made when new. */
  handleOfAscii(text: string, start: number, end: number): number {
    return this.made(this.table.handleOfAscii(text, start, end))
  }

  /** An open segment holding what `frozen` holds (a checkpoint's last, partly filled segment), to add documents to. */
  static thaw(frozen: FrozenSegment): OpenSegment {
    const open = new OpenSegment()
    frozen.terms.forEach((term, i) => {
      const at = open.handle(term)
      frozen.postings(i, (doc, tf) => {
        open.post(at, doc, tf)
      })
    })
    open.docCount = frozen.docCount
    return open
  }

  private made(at: number): number {
    if (at === this.first.length) {
      this.first.push(-1)
      this.last.push(-1)
      for (const df of this.dfs) df.push(0)
    }
    return at
  }

  /** Adds the posting of document `doc` (not below any doc posted before) for the term at `at`, with its packed frequencies. */
  post(at: number, doc: number, tf: number): void {
    const p = this.doc.length
    this.doc.push(doc)
    this.tf.push(tf)
    this.next.push(-1)
    this.postingTerm.push(at)
    const tail = this.last.at(at)
    if (tail < 0) this.first.set(at, p)
    else this.next.set(tail, p)
    this.last.set(at, p)
    if (tf >> 4 > 0) this.dfs[0].set(at, this.dfs[0].at(at) + 1)
    if (((tf >> 2) & 3) > 0) this.dfs[1].set(at, this.dfs[1].at(at) + 1)
    if ((tf & 3) > 0) this.dfs[2].set(at, this.dfs[2].at(at) + 1)
  }

  /** Counts a document whose postings are in. */
  endDoc(): void {
    this.docCount++
  }

  df(at: number): [number, number, number] {
    return [this.dfs[0].at(at), this.dfs[1].at(at), this.dfs[2].at(at)]
  }

  postings(at: number, fn: (doc: number, tf: number) => void): void {
    for (let p = this.first.at(at); p >= 0; p = this.next.at(p)) fn(this.doc.at(p), this.tf.at(p))
  }

  term(at: number): string {
    return this.terms[at]
  }

  find(term: string): number {
    return this.table.find(term)
  }

  withPrefix(prefix: string): number[] {
    const out: number[] = []
    this.terms.forEach((t, i) => {
      if (t.startsWith(prefix)) out.push(i)
    })
    return out
  }

  candidates(c: string, min: number, max: number): number[] {
    const out: number[] = []
    this.terms.forEach((t, i) => {
      if (t[0] === c && t.length >= min && t.length <= max) out.push(i)
    })
    return out
  }

  /**
   * The frozen form of this segment; with `limit`, of its documents below
   * `limit` only (`docCount` of them): the part a checkpoint up to document
   * `limit` keeps, without the terms left with no posting.
   */
  freeze(limit = Number.POSITIVE_INFINITY, docCount = this.docCount): FrozenSegment {
    const n = this.terms.length
    const order = this.terms.map((_, i) => i).sort((x, y) => (this.terms[x] < this.terms[y] ? -1 : this.terms[x] > this.terms[y] ? 1 : 0))
    // The postings in the order they came (documents ascending), read twice
    // from flat copies: once for each term's byte length and counts, once to
    // write them where their term's postings go. Walking each term's chain
    // instead jumps all over the columns, a cache miss a posting.
    const docs = this.doc.toArray()
    const handles = this.postingTerm.toArray()
    const tfs = this.tf.toArray()
    let postings = docs.length
    if (limit < Number.POSITIVE_INFINITY) {
      let lo = 0
      while (lo < postings) {
        const mid = (lo + postings) >>> 1
        if (docs[mid] < limit) lo = mid + 1
        else postings = mid
      }
    }
    const length = new Int32Array(n)
    const last = new Int32Array(n)
    const df = new Uint32Array(n * 3)
    for (let p = 0; p < postings; p++) {
      const t = handles[p]
      const delta = docs[p] - last[t]
      last[t] = docs[p]
      // a posting is a varint delta (at most 5 bytes) and a byte of frequencies
      length[t] += (delta < 0x80 ? 1 : delta < 0x4000 ? 2 : delta < 0x200000 ? 3 : delta < 0x10000000 ? 4 : 5) + 1
      const tf = tfs[p]
      if (tf >> 4 > 0) df[t * 3]++
      if (((tf >> 2) & 3) > 0) df[t * 3 + 1]++
      if ((tf & 3) > 0) df[t * 3 + 2]++
    }
    const terms: string[] = []
    const offsets: number[] = []
    const dfs: number[] = []
    const write = new Int32Array(n)
    let size = 0
    for (const i of order) {
      if (length[i] === 0) continue
      terms.push(this.terms[i])
      offsets.push(size)
      dfs.push(df[i * 3], df[i * 3 + 1], df[i * 3 + 2])
      write[i] = size
      size += length[i]
    }
    offsets.push(size)
    const bytes = new Uint8Array(size)
    last.fill(0)
    for (let p = 0; p < postings; p++) {
      const t = handles[p]
      let delta = docs[p] - last[t]
      last[t] = docs[p]
      let at = write[t]
      while (delta >= 0x80) {
        bytes[at++] = (delta & 0x7f) | 0x80
        delta = Math.floor(delta / 128)
      }
      bytes[at++] = delta
      bytes[at++] = tfs[p]
      write[t] = at
    }
    return new FrozenSegment(terms, Uint32Array.from(offsets), Uint32Array.from(dfs), bytes, docCount)
  }
}

/** A segment that no longer changes: sorted terms and packed postings. */
export class FrozenSegment implements Segment {
  constructor(
    readonly terms: string[],
    /** byte offset of each term's postings, and the end */
    readonly offsets: Uint32Array,
    /** documents per field holding each term: 3 per term */
    readonly dfs: Uint32Array,
    readonly bytes: Uint8Array,
    readonly docCount: number
  ) {}

  df(at: number): [number, number, number] {
    return [this.dfs[at * 3], this.dfs[at * 3 + 1], this.dfs[at * 3 + 2]]
  }

  postings(at: number, fn: (doc: number, tf: number) => void): void {
    const b = this.bytes
    let doc = 0
    for (let i = this.offsets[at], end = this.offsets[at + 1]; i < end;) {
      let delta = 0
      let mul = 1
      for (;;) {
        const v = b[i++]
        delta += (v & 0x7f) * mul
        if (v < 0x80) break
        mul *= 128
      }
      doc += delta
      fn(doc, b[i++])
    }
  }

  term(at: number): string {
    return this.terms[at]
  }

  /**
   * This segment without the postings of documents `limit` and above (and
   * without the terms left with none), holding `docCount` documents: the part
   * of it a checkpoint up to document `limit` keeps.
   */
  below(limit: number, docCount: number): FrozenSegment {
    const terms: string[] = []
    const offsets: number[] = []
    const dfs: number[] = []
    const bytes: number[] = []
    this.terms.forEach((term, i) => {
      const start = bytes.length
      const df = [0, 0, 0]
      let last = 0
      this.postings(i, (doc, tf) => {
        if (doc >= limit) return
        let delta = doc - last
        last = doc
        while (delta >= 0x80) {
          bytes.push((delta & 0x7f) | 0x80)
          delta = Math.floor(delta / 128)
        }
        bytes.push(delta, tf)
        if (tf >> 4 > 0) df[0]++
        if (((tf >> 2) & 3) > 0) df[1]++
        if ((tf & 3) > 0) df[2]++
      })
      if (bytes.length === start) return
      terms.push(term)
      offsets.push(start)
      dfs.push(...df)
    })
    offsets.push(bytes.length)
    return new FrozenSegment(terms, Uint32Array.from(offsets), Uint32Array.from(dfs), Uint8Array.from(bytes), docCount)
  }

  /** The first index whose term is >= `term`. */
  private lowerBound(term: string): number {
    let lo = 0
    let hi = this.terms.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.terms[mid] < term) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  find(term: string): number {
    const i = this.lowerBound(term)
    return i < this.terms.length && this.terms[i] === term ? i : -1
  }

  withPrefix(prefix: string): number[] {
    const out: number[] = []
    for (let i = this.lowerBound(prefix); i < this.terms.length && this.terms[i].startsWith(prefix); i++) out.push(i)
    return out
  }

  candidates(c: string, min: number, max: number): number[] {
    const out: number[] = []
    for (let i = this.lowerBound(c); i < this.terms.length && this.terms[i][0] === c; i++) {
      const n = this.terms[i].length
      if (n >= min && n <= max) out.push(i)
    }
    return out
  }
}
