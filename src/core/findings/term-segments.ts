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
export function packTf (text: number, paths: number, tags: number): number {
  return (Math.min(text, 15) << 4) | (Math.min(paths, 3) << 2) | Math.min(tags, 3)
}

export function tfOf (packed: number, field: FieldIndex): number {
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

import { TermTable } from './term-table.js'

interface OpenPostings { docs: number[], tfs: number[], df: [number, number, number] }

/** The segment documents are added to. */
export class OpenSegment implements Segment {
  private readonly table = new TermTable()
  private readonly terms: string[] = this.table.terms
  private readonly lists: OpenPostings[] = []
  docCount = 0

  /** The handle of `term` (lower-case), made when the segment does not have it yet. */
  handle (term: string): number {
    return this.made(this.table.handleOf(term))
  }

  /** The handle of the term `text[start, end)` is once lower-cased (ASCII only), made when new. */
  handleOfAscii (text: string, start: number, end: number): number {
    return this.made(this.table.handleOfAscii(text, start, end))
  }

  /** An open segment holding what `frozen` holds (a checkpoint's last, partly filled segment), to add documents to. */
  static thaw (frozen: FrozenSegment): OpenSegment {
    const open = new OpenSegment()
    frozen.terms.forEach((term, i) => {
      const list = open.lists[open.handle(term)]
      frozen.postings(i, (doc, tf) => { list.docs.push(doc); list.tfs.push(tf) })
      list.df = frozen.df(i)
    })
    open.docCount = frozen.docCount
    return open
  }

  private made (at: number): number {
    if (at === this.lists.length) this.lists.push({ docs: [], tfs: [], df: [0, 0, 0] })
    return at
  }

  /** Adds the posting of document `doc` (not below any doc posted before) for the term at `at`, with its packed frequencies. */
  post (at: number, doc: number, tf: number): void {
    const list = this.lists[at]
    list.docs.push(doc)
    list.tfs.push(tf)
    if ((tf >> 4) > 0) list.df[0]++
    if (((tf >> 2) & 3) > 0) list.df[1]++
    if ((tf & 3) > 0) list.df[2]++
  }

  /** Counts a document whose postings are in. */
  endDoc (): void {
    this.docCount++
  }

  df (at: number): [number, number, number] { return this.lists[at].df }

  postings (at: number, fn: (doc: number, tf: number) => void): void {
    const { docs, tfs } = this.lists[at]
    for (let i = 0; i < docs.length; i++) fn(docs[i], tfs[i])
  }

  term (at: number): string { return this.terms[at] }

  find (term: string): number { return this.table.find(term) }

  withPrefix (prefix: string): number[] {
    const out: number[] = []
    this.terms.forEach((t, i) => { if (t.startsWith(prefix)) out.push(i) })
    return out
  }

  candidates (c: string, min: number, max: number): number[] {
    const out: number[] = []
    this.terms.forEach((t, i) => { if (t[0] === c && t.length >= min && t.length <= max) out.push(i) })
    return out
  }

  /**
   * The frozen form of this segment; with `limit`, of its documents below
   * `limit` only (`docCount` of them): the part a checkpoint up to document
   * `limit` keeps, without the terms left with no posting.
   */
  freeze (limit = Number.POSITIVE_INFINITY, docCount = this.docCount): FrozenSegment {
    const order = this.terms.map((_, i) => i).sort((x, y) => this.terms[x] < this.terms[y] ? -1 : this.terms[x] > this.terms[y] ? 1 : 0)
    let postings = 0
    for (const list of this.lists) postings += list.docs.length
    // a posting is a varint delta (at most 5 bytes) and a byte of frequencies
    const bytes = new Uint8Array(postings * 6)
    const terms: string[] = []
    const offsets: number[] = []
    const dfs: number[] = []
    let at = 0
    for (const i of order) {
      const { docs, tfs, df } = this.lists[i]
      let end = docs.length
      while (end > 0 && docs[end - 1] >= limit) end--
      if (end === 0) continue
      terms.push(this.terms[i])
      offsets.push(at)
      if (end === docs.length) dfs.push(...df)
      else {
        const cut = [0, 0, 0]
        for (let p = 0; p < end; p++) {
          const tf = tfs[p]
          if ((tf >> 4) > 0) cut[0]++
          if (((tf >> 2) & 3) > 0) cut[1]++
          if ((tf & 3) > 0) cut[2]++
        }
        dfs.push(...cut)
      }
      let last = 0
      for (let p = 0; p < end; p++) {
        let delta = docs[p] - last
        last = docs[p]
        while (delta >= 0x80) { bytes[at++] = (delta & 0x7f) | 0x80; delta = Math.floor(delta / 128) }
        bytes[at++] = delta
        bytes[at++] = tfs[p]
      }
    }
    offsets.push(at)
    return new FrozenSegment(terms, Uint32Array.from(offsets), Uint32Array.from(dfs), bytes.slice(0, at), docCount)
  }
}

/** A segment that no longer changes: sorted terms and packed postings. */
export class FrozenSegment implements Segment {
  constructor (
    readonly terms: string[],
    /** byte offset of each term's postings, and the end */
    readonly offsets: Uint32Array,
    /** documents per field holding each term: 3 per term */
    readonly dfs: Uint32Array,
    readonly bytes: Uint8Array,
    readonly docCount: number
  ) {}

  df (at: number): [number, number, number] {
    return [this.dfs[at * 3], this.dfs[at * 3 + 1], this.dfs[at * 3 + 2]]
  }

  postings (at: number, fn: (doc: number, tf: number) => void): void {
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

  term (at: number): string { return this.terms[at] }

  /**
   * This segment without the postings of documents `limit` and above (and
   * without the terms left with none), holding `docCount` documents: the part
   * of it a checkpoint up to document `limit` keeps.
   */
  below (limit: number, docCount: number): FrozenSegment {
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
        while (delta >= 0x80) { bytes.push((delta & 0x7f) | 0x80); delta = Math.floor(delta / 128) }
        bytes.push(delta, tf)
        if ((tf >> 4) > 0) df[0]++
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
  private lowerBound (term: string): number {
    let lo = 0
    let hi = this.terms.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.terms[mid] < term) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  find (term: string): number {
    const i = this.lowerBound(term)
    return i < this.terms.length && this.terms[i] === term ? i : -1
  }

  withPrefix (prefix: string): number[] {
    const out: number[] = []
    for (let i = this.lowerBound(prefix); i < this.terms.length && this.terms[i].startsWith(prefix); i++) out.push(i)
    return out
  }

  candidates (c: string, min: number, max: number): number[] {
    const out: number[] = []
    for (let i = this.lowerBound(c); i < this.terms.length && this.terms[i][0] === c; i++) {
      const n = this.terms[i].length
      if (n >= min && n <= max) out.push(i)
    }
    return out
  }
}
