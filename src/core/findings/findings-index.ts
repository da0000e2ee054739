// Full-text search over the findings in the log (BM25, as MiniSearch scores
// it): text, paths and tags, with prefix and fuzzy matching of words, and
// filters. Built from accepted entries.
//
// Compact: per finding a few typed columns (time, kind, author, field
// lengths, paths and tags as ids into small dictionaries) and its postings in
// term segments (term-segments.ts), about a hundred bytes, where MiniSearch
// took 2.3 KiB. Given a FindingSource (the log), the index keeps no entries:
// hits are read from the log when returned. Without one (tests, the
// simulator) it keeps the entries it was given.
//
// Two replicas holding the same findings return the same hits in the same
// order: ties break on time then id, and scores are rounded.
//
// Fuzzy matching differs from MiniSearch in one way: a misspelt word must
// keep its first letter (the candidates are the terms that start with it).
import { Finding } from '../../gen/agency/v1/log.js'
import { FailedPreconditionError, InvalidArgumentError } from '../errors.js'
import type { FindingsDocs, FindingsSnapshot, SegmentSnapshot } from './findings-checkpoint.js'
import { float64Column, int32Column, RecordColumn, uint16Column, uint8Column } from '../log/columns.js'
import type { StoredEntry } from '../log/ingest-result.js'
import { compareStrings } from '../log/version-vector.js'
import { decodeFinding } from '../log/finding-scan.js'
import { FrozenSegment, OpenSegment, packTf, SEGMENT_DOCS, type FieldIndex, type Segment, type TermRef } from './term-segments.js'
import { asciiTermBounds, boundedDistance, tokenize } from './tokens.js'

export const DEFAULT_SEARCH_LIMIT = 20
export const MAX_SEARCH_LIMIT = 1000
export const MAX_QUERY_CHARS = 1024

export interface FindingQuery {
  /** words to look for; empty or absent lists every finding that passes the filters, newest first */
  query?: string
  /** finding kind: discovery | failure | bug | decision | note */
  kind?: string
  /** at least one path starts with this */
  pathPrefix?: string
  tag?: string
  author?: string
  /** entry time (ms since the epoch), inclusive; 0 or absent means no bound */
  since?: number
  until?: number
  limit?: number
}

/** A page of hits, for lists longer than one search may return. */
export interface FindingPage {
  hits: FindingHit[]
  /** every hit that passes the query and filters */
  total: number
}

export interface FindingHit {
  id: string
  entry: StoredEntry
  finding: Finding
  /** relevance (BM25, rounded); 0 for a listing without query words */
  score: number
  /** a later finding names this one in `supersedes`; superseded hits rank after the others */
  superseded: boolean
}

/** Per-document arrays a ranked search works in. */
interface Scratch {
  scores: Float64Array
  matched: Uint8Array
  lastWord: Int32Array
  touched: Int32Array
}

interface IndexedFinding {
  entry: StoredEntry
  finding: Finding
}

/** Where an index given one reads the entries of its hits: the log, by cursor. */
export interface FindingSource {
  /** the accepted entry at `cursor` */
  entryAt: (cursor: number) => StoredEntry | undefined
  /** the cursor of entry `id`, 0 when the log has none */
  cursorOf: (id: string) => number
}

/** What a snapshot is checked against: the log it was taken of. */
export interface FindingsLog {
  /** the log's last cursor */
  cursor: number
  /** entries of `kind` with a cursor up to `upTo` */
  countOfKind: (kind: string, upTo: number) => number
  /** true when the entry at `cursor` is of `kind` and its id starts with `idHead` */
  holdsAt: (cursor: number, kind: string, idHead: Uint8Array) => boolean
}

export interface FindingsIndexInit {
  /** read hits from here instead of keeping the entries */
  source?: FindingSource
  /** documents per term segment (default SEGMENT_DOCS) */
  segmentDocs?: number
}

// MiniSearch's defaults, and the options agency has always searched with.
const BM25 = { k: 1.2, b: 0.7, d: 0.5 }
const BOOST: Record<FieldIndex, number> = { 0: 2, 1: 1, 2: 1.5 }
const PREFIX_WEIGHT = 0.375
const FUZZY_WEIGHT = 0.45
const MIN_PREFIX_CHARS = 3
const MIN_FUZZY_CHARS = 5
const FUZZY_FRACTION = 0.2
const MAX_FUZZY = 6

/** The value of each hex digit (ids are lower-case hex), by character code. */
const HEX_DIGIT = new Uint8Array(128)
for (let d = 0; d < 16; d++) HEX_DIGIT['0123456789abcdef'.charCodeAt(d)] = d

/** The filter of a query without filters. */
const PASS_ALL = (_doc: number): boolean => true

function roundScore(score: number): number {
  return Math.round(score * 1e6) / 1e6
}

function bound(name: string, value: number | undefined): number | undefined {
  if (value === undefined || value === 0) return undefined
  if (!Number.isSafeInteger(value) || value < 0) throw new InvalidArgumentError(`${name} must be a non-negative integer`)
  return value
}

function normalizePath(p: string): string {
  return p.startsWith('./') ? p.slice(2) : p
}

function segmentSnapshot(g: FrozenSegment): SegmentSnapshot {
  return { terms: g.terms, offsets: g.offsets, dfs: g.dfs, bytes: g.bytes, docCount: g.docCount }
}

/** A growing dictionary of strings, each with a small number. */
class Names {
  private readonly ids = new Map<string, number>()
  readonly names: string[] = []
  id(name: string): number {
    let id = this.ids.get(name)
    if (id === undefined) {
      id = this.names.length
      this.ids.set(name, id)
      this.names.push(name)
    }
    return id
  }

  find(name: string): number | undefined {
    return this.ids.get(name)
  }
}

/** A list of small numbers per document: offsets into one column. */
class DocLists {
  private readonly starts = int32Column()
  private readonly values = int32Column()

  /** The lists of the first `n` documents. */
  snapshot(n: number): { starts: Int32Array; values: Int32Array } {
    const end = n < this.starts.length ? this.starts.at(n) : this.values.length
    return { starts: this.starts.toArray(n), values: this.values.toArray(end) }
  }

  /** The lists of documents [from, to), their starts counted from the first one's. */
  slice(from: number, to: number): { starts: Int32Array; values: Int32Array } {
    const first = from < this.starts.length ? this.starts.at(from) : this.values.length
    const end = to < this.starts.length ? this.starts.at(to) : this.values.length
    const starts = new Int32Array(to - from)
    for (let d = from; d < to; d++) starts[d - from] = this.starts.at(d) - first
    const values = new Int32Array(end - first)
    for (let i = first; i < end; i++) values[i - first] = this.values.at(i)
    return { starts, values }
  }

  restore(starts: ArrayLike<number>, values: ArrayLike<number>): void {
    this.starts.pushAll(starts)
    this.values.pushAll(values)
  }
  /** Starts the list of the next document (then push its values). */
  start(): void {
    this.starts.push(this.values.length)
  }

  push(value: number): void {
    this.values.push(value)
  }

  has(doc: number, value: number): boolean {
    const end = doc + 1 < this.starts.length ? this.starts.at(doc + 1) : this.values.length
    for (let i = this.starts.at(doc); i < end; i++) if (this.values.at(i) === value) return true
    return false
  }

  some(doc: number, wanted: ReadonlySet<number>): boolean {
    const end = doc + 1 < this.starts.length ? this.starts.at(doc + 1) : this.values.length
    for (let i = this.starts.at(doc); i < end; i++) if (wanted.has(this.values.at(i))) return true
    return false
  }
}

export class FindingsIndex {
  private readonly source?: FindingSource
  // per document (a finding), numbered in the order added
  private readonly docCursor = float64Column()
  private readonly docTime = float64Column()
  private readonly docKind = uint8Column()
  private readonly docAuthor = int32Column()
  private readonly docLength = [uint16Column(), uint16Column(), uint16Column()] as const
  private readonly docSuperseded = uint8Column()
  /** the first 8 bytes of each document's id, for the tie-break on id without reading the entry */
  private readonly docIdHead = new RecordColumn(8)
  private readonly docPaths = new DocLists()
  private readonly docTags = new DocLists()
  private readonly kinds = new Names()
  private readonly authors = new Names()
  private readonly paths = new Names()
  private readonly tags = new Names()
  private readonly kindCounts = new Map<string, number>()
  private readonly lengthSums: [number, number, number] = [0, 0, 0]
  private readonly frozen: FrozenSegment[] = []
  private open = new OpenSegment()
  /** without a source: the entries added, by document, and documents by id */
  private readonly entries: StoredEntry[] = []
  private readonly docById = new Map<string, number>()
  /** with a source: documents by cursor, when cursors stop growing with documents */
  private docByCursor?: Map<number, number>
  /** finding id -> ids of the findings that supersede it */
  private readonly supersededBy = new Map<string, Set<string>>()
  /**
   * the document of each finding added here that supersedes another (a snapshot keeps the pairs whose superseding finding it holds; an
   * index without the log's look-up by id finds them here)
   */
  private readonly supersederDoc = new Map<string, number>()
  /** documents newest last (see byRecency) */
  private recency: number[] = []
  private recencySorted = true

  private readonly segmentDocs: number
  /** scratch of add: per term handle of the open segment, the document's packed counts, and the handles it touched */
  private termCounts = new Int32Array(1024)
  private readonly touchedTerms: number[] = []
  private readonly termBounds: number[] = []
  private readonly idHead = new Uint8Array(8)
  private norms?: { size: number; k: readonly [Float64Array, Float64Array, Float64Array] }
  private scratch: Scratch = {
    scores: new Float64Array(0),
    matched: new Uint8Array(0),
    lastWord: new Int32Array(0),
    touched: new Int32Array(0)
  }

  constructor(init: FindingsIndexInit = {}) {
    this.source = init.source
    this.segmentDocs = init.segmentDocs ?? SEGMENT_DOCS
  }

  /** An index of every finding among `entries` (in any order). */
  static fromEntries(entries: Iterable<StoredEntry>, init: FindingsIndexInit = {}): FindingsIndex {
    const index = new FindingsIndex(init)
    for (const e of entries) index.add(e)
    return index
  }

  /**
   * The index of the findings up to log cursor `upTo`, as plain arrays for a
   * checkpoint (see fromSnapshot); undefined when documents were not added
   * in cursor order (then a prefix is not the index of a log prefix). With
   * `fromSegment`, its documents and term segments are those from that
   * frozen segment on (firstDoc), the segments before it written apart (see
   * part); the names, the recency order and the supersedings are whole.
   */
  snapshot(upTo: number, fromSegment = 0): FindingsSnapshot | undefined {
    if (this.docByCursor !== undefined) return undefined
    let n = 0
    for (let hi = this.docCursor.length; n < hi;) {
      const mid = (n + hi) >>> 1
      if (this.docCursor.at(mid) <= upTo) n = mid + 1
      else hi = mid
    }
    const firstDoc = fromSegment * this.segmentDocs
    if (fromSegment > this.frozen.length || firstDoc > n) return undefined
    const segments: SegmentSnapshot[] = []
    let base = firstDoc
    for (const segment of [...this.frozen.slice(fromSegment), this.open]) {
      if (base >= n) break
      const whole = base + segment.docCount <= n
      // the segment the cut falls in keeps its documents below it
      const g =
        segment instanceof FrozenSegment
          ? whole
            ? segment
            : segment.below(n, n - base)
          : whole
            ? segment.freeze()
            : segment.freeze(n, n - base)
      segments.push(segmentSnapshot(g))
      base += g.docCount
    }
    const superseded: Array<[string, string]> = []
    for (const [target, by] of this.supersededBy) {
      for (const b of by) {
        const doc = this.supersederDoc.get(b) ?? this.docOf(b)
        if (doc !== undefined && doc < n) superseded.push([target, b])
      }
    }
    return {
      cursor: upTo,
      segmentDocs: this.segmentDocs,
      kinds: [...this.kinds.names],
      authors: [...this.authors.names],
      paths: [...this.paths.names],
      tags: [...this.tags.names],
      ...this.docsBetween(firstDoc, n),
      // every document (the usual cut: the log's end) needs no filter
      recency: n === this.docCursor.length ? Int32Array.from(this.byRecency()) : Int32Array.from(this.byRecency().filter(d => d < n)),
      superseded,
      segments
    }
  }

  /** Frozen term segments: full, their documents fixed for good. */
  get frozenSegments(): number {
    return this.frozen.length
  }

  /**
   * What stands for frozen segment `i` while its documents are the ones this
   * index was given: the same object for as long as it lasts, another in an
   * index built or restored anew (a checkpoint writer keeps it to know the
   * part it wrote is still this index's).
   */
  segmentToken(i: number): object | undefined {
    return this.frozen[i]
  }

  /** The documents of frozen segment `i` and its postings: a part of a checkpoint, the same for as long as the index lasts. */
  part(i: number): FindingsDocs {
    const g = this.frozen[i]
    if (g === undefined) throw new InvalidArgumentError(`the index has no frozen segment ${i}`)
    const from = i * this.segmentDocs
    return { ...this.docsBetween(from, from + g.docCount), segments: [segmentSnapshot(g)] }
  }

  /** The columns of documents [from, to), their path and tag lists starting at 0 in their values. */
  private docsBetween(from: number, to: number): Omit<FindingsDocs, 'segments'> {
    if (from === 0) {
      const paths = this.docPaths.snapshot(to)
      const tags = this.docTags.snapshot(to)
      return {
        firstDoc: 0,
        docCursor: this.docCursor.toArray(to),
        docTime: this.docTime.toArray(to),
        docKind: this.docKind.toArray(to),
        docAuthor: this.docAuthor.toArray(to),
        docLength: [this.docLength[0].toArray(to), this.docLength[1].toArray(to), this.docLength[2].toArray(to)],
        docIdHead: this.docIdHead.toBytes(to),
        pathStarts: paths.starts,
        pathValues: paths.values,
        tagStarts: tags.starts,
        tagValues: tags.values
      }
    }
    const n = to - from
    const docCursor = new Float64Array(n)
    const docTime = new Float64Array(n)
    const docKind = new Uint8Array(n)
    const docAuthor = new Int32Array(n)
    const docLength: [Uint16Array, Uint16Array, Uint16Array] = [new Uint16Array(n), new Uint16Array(n), new Uint16Array(n)]
    const docIdHead = new Uint8Array(n * 8)
    for (let d = from; d < to; d++) {
      const i = d - from
      docCursor[i] = this.docCursor.at(d)
      docTime[i] = this.docTime.at(d)
      docKind[i] = this.docKind.at(d)
      docAuthor[i] = this.docAuthor.at(d)
      for (let f = 0; f < 3; f++) docLength[f][i] = this.docLength[f as FieldIndex].at(d)
      docIdHead.set(this.docIdHead.at(d), i * 8)
    }
    const paths = this.docPaths.slice(from, to)
    const tags = this.docTags.slice(from, to)
    return {
      firstDoc: from,
      docCursor,
      docTime,
      docKind,
      docAuthor,
      docLength,
      docIdHead,
      pathStarts: paths.starts,
      pathValues: paths.values,
      tagStarts: tags.starts,
      tagValues: tags.values
    }
  }

  /**
   * The index a snapshot holds (checked by decodeFindingsCheckpoint), reading
   * hits from `init.source`. With `log`, the snapshot must be of that log:
   * its documents are the log's findings up to the snapshot's cursor, each
   * at its cursor with its id; throws FailedPreconditionError otherwise (then
   * index the log instead).
   */
  static fromSnapshot(snap: FindingsSnapshot, init: FindingsIndexInit, log?: FindingsLog): FindingsIndex {
    const n = snap.docCursor.length
    if (snap.firstDoc !== 0) throw new InvalidArgumentError('a findings snapshot without its first documents (its parts) is not an index')
    if (init.source === undefined)
      throw new FailedPreconditionError('a findings index is restored from a checkpoint only over a log to read its hits from')
    if (log !== undefined) {
      if (snap.cursor > log.cursor)
        throw new FailedPreconditionError(`the findings checkpoint covers cursor ${snap.cursor}, past the log's ${log.cursor}`)
      const held = log.countOfKind('finding', snap.cursor)
      if (held !== n)
        throw new FailedPreconditionError(`the findings checkpoint holds ${n} findings up to cursor ${snap.cursor}, the log ${held}`)
      for (let d = 0; d < n; d++) {
        if (!log.holdsAt(snap.docCursor[d], 'finding', snap.docIdHead.subarray(d * 8, d * 8 + 8)))
          throw new FailedPreconditionError(
            `the log has no finding at cursor ${snap.docCursor[d]} with the id the findings checkpoint names`
          )
      }
    }
    const index = new FindingsIndex({ ...init, segmentDocs: snap.segmentDocs })
    for (const name of snap.kinds) index.kinds.id(name)
    for (const name of snap.authors) index.authors.id(name)
    for (const name of snap.paths) index.paths.id(name)
    for (const name of snap.tags) index.tags.id(name)
    // a snapshot's arrays are its own (decoded or transferred): the columns keep them instead of copies
    index.docCursor.adopt(snap.docCursor)
    index.docTime.adopt(snap.docTime)
    index.docKind.adopt(snap.docKind)
    index.docAuthor.adopt(snap.docAuthor)
    for (let f = 0; f < 3; f++) {
      index.docLength[f as FieldIndex].adopt(snap.docLength[f])
      let sum = 0
      for (const len of snap.docLength[f]) sum += len
      index.lengthSums[f as FieldIndex] = sum
    }
    index.docIdHead.adopt(snap.docIdHead)
    index.docSuperseded.pushAll(new Uint8Array(n))
    const perKind = new Array<number>(snap.kinds.length).fill(0)
    for (const k of snap.docKind) perKind[k]++
    perKind.forEach((c, k) => {
      if (c > 0) index.kindCounts.set(snap.kinds[k], c)
    })
    index.docPaths.restore(snap.pathStarts, snap.pathValues)
    index.docTags.restore(snap.tagStarts, snap.tagValues)
    index.recency = Array.from(snap.recency)
    snap.segments.forEach((g, i) => {
      const frozen = new FrozenSegment(g.terms, g.offsets, g.dfs, g.bytes, g.docCount)
      if (i === snap.segments.length - 1 && g.docCount < snap.segmentDocs) index.open = OpenSegment.thaw(frozen)
      else index.frozen.push(frozen)
    })
    for (const [target, by] of snap.superseded) {
      let set = index.supersededBy.get(target)
      if (set === undefined) index.supersededBy.set(target, (set = new Set()))
      set.add(by)
      const doc = index.docOf(target)
      if (doc !== undefined) index.docSuperseded.set(doc, 1)
    }
    return index
  }

  /** Indexes an accepted entry; false for other kinds, duplicates and bodies that do not decode. */
  add(stored: StoredEntry): boolean {
    if (stored.entry.kind !== 'finding') return false
    // from a log, an entry past the last cursor indexed is new: no look-up
    const appended =
      this.source !== undefined &&
      this.docByCursor === undefined &&
      (this.docCursor.length === 0 || stored.cursor > this.docCursor.at(this.docCursor.length - 1))
    if (!appended && this.docOf(stored.id) !== undefined) return false
    let finding: Finding
    try {
      finding = decodeFinding(stored.entry.body)
    } catch {
      return false
    }
    const doc = this.docCursor.length
    if (this.source === undefined) {
      this.entries.push(stored)
      this.docById.set(stored.id, doc)
    } else if (this.docByCursor === undefined && doc > 0 && stored.cursor <= this.docCursor.at(doc - 1)) {
      // cursors no longer grow with documents: look documents up in a map from now on
      this.docByCursor = new Map()
      for (let d = 0; d < doc; d++) this.docByCursor.set(this.docCursor.at(d), d)
    }
    this.docByCursor?.set(stored.cursor, doc)
    this.docCursor.push(stored.cursor)
    this.docTime.push(stored.entry.time)
    this.docKind.push(this.kinds.id(finding.kind))
    this.docAuthor.push(this.authors.id(stored.entry.author))
    const head = this.idHead
    for (let i = 0; i < 8; i++) head[i] = (HEX_DIGIT[stored.id.charCodeAt(2 * i)] << 4) | HEX_DIGIT[stored.id.charCodeAt(2 * i + 1)]
    this.docIdHead.push(head)
    this.docPaths.start()
    for (const p of finding.paths) this.docPaths.push(this.paths.id(normalizePath(p)))
    this.docTags.start()
    for (const t of finding.tags) this.docTags.push(this.tags.id(t))
    this.kindCounts.set(finding.kind, (this.kindCounts.get(finding.kind) ?? 0) + 1)

    this.postTerms(doc, finding)
    if (this.open.docCount >= this.segmentDocs) {
      this.frozen.push(this.open.freeze())
      this.open = new OpenSegment()
    }

    this.docSuperseded.push(this.supersededBy.size > 0 && this.supersededBy.has(stored.id) ? 1 : 0)
    if (finding.supersedes !== '' && finding.supersedes !== stored.id) {
      let by = this.supersededBy.get(finding.supersedes)
      if (by == null) this.supersededBy.set(finding.supersedes, (by = new Set()))
      by.add(stored.id)
      this.supersederDoc.set(stored.id, doc)
      const target = this.docOf(finding.supersedes)
      if (target !== undefined) this.docSuperseded.set(target, 1)
    }

    const newest = this.recency.at(-1)
    this.recency.push(doc)
    if (newest !== undefined && this.newestFirst(doc, newest) > 0) this.recencySorted = false
    return true
  }

  /**
   * The postings of document `doc` in the open segment: per term its counts
   * in text, paths and tags, packed as text * 2^20 + paths * 2^10 + tags in a
   * scratch slot per term handle (each capped far above packTf's caps).
   */
  private postTerms(doc: number, finding: Finding): void {
    const touched = this.touchedTerms
    touched.length = 0
    // a field's terms are those of its parts one after the other (as if joined with spaces): no joined string is made
    this.countField(0, finding.text)
    for (let f = 1; f < 3; f++) {
      const parts = f === 1 ? finding.paths : finding.tags
      let count = 0
      for (let i = 0; i < parts.length; i++) count += this.countTerms(parts[i], f === 1 ? 10 : 0)
      this.docLength[f as FieldIndex].push(Math.min(count, 0xffff))
      this.lengthSums[f as FieldIndex] += count
    }
    const open = this.open
    const counts = this.termCounts
    for (let i = 0; i < touched.length; i++) {
      const at = touched[i]
      const c = counts[at]
      open.post(at, doc, packTf(c >> 20, (c >> 10) & 1023, c & 1023))
      counts[at] = 0
    }
    open.endDoc()
  }

  /** Counts the terms of field `f`'s one text (see countTerms) and records the field's length. */
  private countField(f: FieldIndex, text: string): void {
    const count = this.countTerms(text, f === 0 ? 20 : f === 1 ? 10 : 0)
    this.docLength[f].push(Math.min(count, 0xffff))
    this.lengthSums[f] += count
  }

  /**
   * Adds one to each term of `text` in the scratch counts (the field's count
   * is `shift` bits up, capped at 1023), noting the handles first touched;
   * returns how many terms `text` has.
   */
  private countTerms(text: string, shift: number): number {
    const open = this.open
    const touched = this.touchedTerms
    const bounds = this.termBounds
    // ASCII text is looked up slice by slice, without a string per word
    const ascii = asciiTermBounds(text, bounds)
    const terms = ascii ? undefined : tokenize(text)
    const count = ascii ? bounds.length >> 1 : (terms as string[]).length
    for (let k = 0; k < count; k++) {
      const at = terms === undefined ? open.handleOfAscii(text, bounds[2 * k], bounds[2 * k + 1]) : open.handle(terms[k])
      if (at >= this.termCounts.length) {
        const grown = new Int32Array(Math.max(1024, at * 2))
        grown.set(this.termCounts)
        this.termCounts = grown
      }
      const c = this.termCounts[at]
      if (c === 0) touched.push(at)
      if (((c >> shift) & 1023) < 1023) this.termCounts[at] = c + (1 << shift)
    }
    return count
  }

  get size(): number {
    return this.docCursor.length
  }

  has(id: string): boolean {
    return this.docOf(id) !== undefined
  }

  get(id: string): IndexedFinding | undefined {
    const doc = this.docOf(id)
    return doc === undefined ? undefined : this.read(doc)
  }

  isSuperseded(id: string): boolean {
    return this.supersededBy.has(id)
  }

  /** How many findings of each kind are indexed. */
  countsByKind(): Map<string, number> {
    return new Map(this.kindCounts)
  }

  /** Throws InvalidArgumentError on a bad limit, time bound or an overlong query. */
  search(q: FindingQuery = {}): FindingHit[] {
    const limit = checkLimit(q.limit)
    return this.page({ ...q, limit, offset: 0 }).hits
  }

  /**
   * The hits `search` would give, from `offset` on, and how many there are in
   * all: a reader pages through any number of findings. With `failuresFirst`
   * the failures come before the other kinds, each group in search order.
   */
  page(q: FindingQuery & { offset?: number }, opts: { failuresFirst?: boolean } = {}): FindingPage {
    const limit = checkLimit(q.limit)
    const offset = q.offset ?? 0
    if (!Number.isSafeInteger(offset) || offset < 0) throw new InvalidArgumentError('offset must be a non-negative integer')
    const words = (q.query ?? '').trim()
    if (words.length > MAX_QUERY_CHARS) throw new InvalidArgumentError(`query is over ${MAX_QUERY_CHARS} characters`)
    const passes = this.filterFor(q)
    const failure = this.kinds.find('failure')
    const group =
      opts.failuresFirst === true
        ? (doc: number): number => (this.docKind.at(doc) !== failure ? 2 : 0) + this.docSuperseded.at(doc)
        : (doc: number): number => this.docSuperseded.at(doc)
    if (words === '') return this.recentPage(passes, group, offset, limit)
    return this.rankedPage(words, passes, group, offset, limit)
  }

  // ---- documents ----

  private docOf(id: string): number | undefined {
    if (this.source === undefined) return this.docById.get(id)
    const cursor = this.source.cursorOf(id)
    if (cursor === 0) return undefined
    if (this.docByCursor !== undefined) return this.docByCursor.get(cursor)
    let lo = 0
    let hi = this.docCursor.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.docCursor.at(mid) < cursor) lo = mid + 1
      else hi = mid
    }
    return lo < this.docCursor.length && this.docCursor.at(lo) === cursor ? lo : undefined
  }

  private read(doc: number): IndexedFinding {
    const entry = this.source === undefined ? this.entries[doc] : this.source.entryAt(this.docCursor.at(doc))
    if (entry === undefined)
      throw new InvalidArgumentError(`the log has no entry at cursor ${this.docCursor.at(doc)} for an indexed finding`)
    return { entry, finding: decodeFinding(entry.entry.body) }
  }

  private idOf(doc: number): string {
    return this.source === undefined ? this.entries[doc].id : (this.source.entryAt(this.docCursor.at(doc))?.id ?? '')
  }

  private hit(doc: number, score: number): FindingHit {
    const { entry, finding } = this.read(doc)
    return { id: entry.id, entry, finding, score, superseded: this.docSuperseded.at(doc) === 1 }
  }

  /** Newest first, then id. */
  private newestFirst(x: number, y: number): number {
    return this.docTime.at(y) - this.docTime.at(x) || this.compareIds(x, y)
  }

  private compareIds(x: number, y: number): number {
    const a = this.docIdHead.at(x)
    const b = this.docIdHead.at(y)
    for (let i = 0; i < 8; i++) if (a[i] !== b[i]) return a[i] - b[i]
    return x === y ? 0 : compareStrings(this.idOf(x), this.idOf(y))
  }

  private filterFor(q: FindingQuery): (doc: number) => boolean {
    const since = bound('since', q.since)
    const until = bound('until', q.until)
    const none = (): boolean => false
    let kind: number | undefined
    if (q.kind != null && q.kind !== '') {
      kind = this.kinds.find(q.kind)
      if (kind === undefined) return none
    }
    let author: number | undefined
    if (q.author != null && q.author !== '') {
      author = this.authors.find(q.author)
      if (author === undefined) return none
    }
    let tag: number | undefined
    if (q.tag != null && q.tag !== '') {
      tag = this.tags.find(q.tag)
      if (tag === undefined) return none
    }
    let paths: Set<number> | undefined
    if (q.pathPrefix != null && q.pathPrefix !== '') {
      const prefix = normalizePath(q.pathPrefix)
      paths = new Set()
      this.paths.names.forEach((p, id) => {
        if (p.startsWith(prefix)) paths?.add(id)
      })
      if (paths.size === 0) return none
    }
    if (
      kind === undefined &&
      author === undefined &&
      tag === undefined &&
      paths === undefined &&
      since === undefined &&
      until === undefined
    )
      return PASS_ALL
    return (doc: number): boolean => {
      if (kind !== undefined && this.docKind.at(doc) !== kind) return false
      if (author !== undefined && this.docAuthor.at(doc) !== author) return false
      if (tag !== undefined && !this.docTags.has(doc, tag)) return false
      if (paths !== undefined && !this.docPaths.some(doc, paths)) return false
      if (since !== undefined && this.docTime.at(doc) < since) return false
      if (until !== undefined && this.docTime.at(doc) > until) return false
      return true
    }
  }

  // ---- ranking ----

  private segments(): Segment[] {
    return [...this.frozen, this.open]
  }

  /** The index terms a query word matches, with their weights: the word, longer words it starts, words a few edits away. */
  private derivedTerms(word: string): Map<string, { weight: number; refs: TermRef[] }> {
    const out = new Map<string, { weight: number; refs: TermRef[] }>()
    const add = (term: string, weight: number, ref: TermRef): void => {
      const d = out.get(term)
      if (d === undefined) out.set(term, { weight, refs: [ref] })
      else d.refs.push(ref)
    }
    const segments = this.segments()
    for (const segment of segments) {
      const at = segment.find(word)
      if (at >= 0) add(word, 1, { segment, at, term: word })
    }
    if (word.length >= MIN_PREFIX_CHARS) {
      for (const segment of segments) {
        for (const at of segment.withPrefix(word)) {
          const term = segment.term(at)
          if (term === word) continue
          add(term, (PREFIX_WEIGHT * term.length) / (term.length + 0.3 * (term.length - word.length)), { segment, at, term })
        }
      }
    }
    if (word.length >= MIN_FUZZY_CHARS) {
      const max = Math.min(MAX_FUZZY, Math.round(word.length * FUZZY_FRACTION))
      for (const segment of segments) {
        for (const at of segment.candidates(word[0], word.length - max, word.length + max)) {
          const term = segment.term(at)
          if (term === word || term.startsWith(word)) continue
          const known = out.get(term)
          if (known !== undefined) {
            if (!known.refs.some(r => r.segment === segment)) known.refs.push({ segment, at, term })
            continue
          }
          const distance = boundedDistance(word, term, max)
          if (distance >= 1 && distance <= max) add(term, (FUZZY_WEIGHT * term.length) / (term.length + distance), { segment, at, term })
        }
      }
    }
    return out
  }

  /** Per field, BM25's k * (1 - b + b * length / average length) of each document, kept while the index does not grow. */
  private lengthNorms(): readonly [Float64Array, Float64Array, Float64Array] {
    const n = this.size
    if (this.norms?.size === n) return this.norms.k
    const k = [0, 1, 2].map(f => {
      const avg = n === 0 ? 0 : this.lengthSums[f] / n
      const column = this.docLength[f as FieldIndex]
      const out = new Float64Array(n)
      for (let doc = 0; doc < n; doc++) {
        const norm = avg === 0 ? 1 : column.at(doc) / avg
        out[doc] = BM25.k * (1 - BM25.b + BM25.b * norm)
      }
      return out
    }) as unknown as [Float64Array, Float64Array, Float64Array]
    this.norms = { size: n, k }
    return k
  }

  /** Arrays of one slot per document, reused from query to query (every slot is back to its start value after each). */
  private scratchFor(n: number): Scratch {
    if (this.scratch.scores.length < n) {
      const size = Math.max(n, Math.ceil(this.scratch.scores.length * 1.5))
      this.scratch = {
        scores: new Float64Array(size),
        matched: new Uint8Array(size),
        lastWord: new Int32Array(size).fill(-1),
        touched: new Int32Array(size)
      }
    }
    return this.scratch
  }

  /**
   * BM25 scores of every document that matches a word of `words`, times the
   * number of words it matches, in the scratch arrays; returns how many
   * documents were touched (their numbers are the first slots of `touched`).
   * The postings of frozen segments are read in one tight loop: a query
   * whose words are in most of a million findings reads millions of them.
   */
  private score(words: string, sc: Scratch): number {
    const n = this.size
    const { scores, matched, lastWord, touched } = sc
    let count = 0
    const kn = this.lengthNorms()
    const [kn0, kn1, kn2] = kn
    const K1 = BM25.k + 1
    const D = BM25.d
    const queryWords = [...new Set(tokenize(words))]
    queryWords.forEach((word, w) => {
      for (const [, { weight, refs }] of this.derivedTerms(word)) {
        const df: [number, number, number] = [0, 0, 0]
        for (const r of refs) {
          const d = r.segment.df(r.at)
          df[0] += d[0]
          df[1] += d[1]
          df[2] += d[2]
        }
        const idf = df.map(m => Math.log(1 + (n - m + 0.5) / (m + 0.5)))
        const c0 = BOOST[0] * idf[0]
        const c1 = BOOST[1] * idf[1]
        const c2 = BOOST[2] * idf[2]
        const visit = (doc: number, tf: number): void => {
          const t0 = tf >> 4
          const t1 = (tf >> 2) & 3
          const t2 = tf & 3
          const s =
            (t0 > 0 ? c0 * (D + (t0 * K1) / (t0 + kn0[doc])) : 0) +
            (t1 > 0 ? c1 * (D + (t1 * K1) / (t1 + kn1[doc])) : 0) +
            (t2 > 0 ? c2 * (D + (t2 * K1) / (t2 + kn2[doc])) : 0)
          if (matched[doc] === 0) touched[count++] = doc
          if (lastWord[doc] !== w) {
            lastWord[doc] = w
            if (matched[doc] < 255) matched[doc]++
          }
          scores[doc] += weight * s
        }
        for (const r of refs) {
          if (!(r.segment instanceof FrozenSegment)) {
            r.segment.postings(r.at, visit)
            continue
          }
          const b = r.segment.bytes
          let doc = 0
          for (let i = r.segment.offsets[r.at], end = r.segment.offsets[r.at + 1]; i < end;) {
            let v = b[i++]
            let delta = v & 0x7f
            let mul = 128
            while (v >= 0x80) {
              v = b[i++]
              delta += (v & 0x7f) * mul
              mul *= 128
            }
            doc += delta
            visit(doc, b[i++])
          }
        }
      }
    })
    return count
  }

  private rankedPage(
    words: string,
    passes: (doc: number) => boolean,
    group: (doc: number) => number,
    offset: number,
    limit: number
  ): FindingPage {
    const sc = this.scratchFor(this.size)
    const { scores, matched, lastWord, touched } = sc
    let count = 0
    try {
      count = this.score(words, sc)
      // order: group (superseded last), score, newest, id
      const before = (x: number, sx: number, y: number, sy: number): boolean =>
        (group(x) - group(y) || sy - sx || this.newestFirst(x, y)) < 0
      const keep = offset + limit
      const best = new TopK(keep, before)
      let total = 0
      const all = passes === PASS_ALL
      // most documents of a common word fall below the worst kept: skipped on
      // the raw score, well below the worst's rounded one, before any rounding or comparison
      let cutoff = Number.NEGATIVE_INFINITY
      let cutoffGroup = 0
      for (let i = 0; i < count; i++) {
        const doc = touched[i]
        if (!all && !passes(doc)) continue
        total++
        const raw = scores[doc] * matched[doc]
        if (raw < cutoff && group(doc) >= cutoffGroup) continue
        best.offer(doc, roundScore(raw))
        const worst = best.worst
        if (worst !== undefined) {
          cutoff = worst[1] - 1e-6
          cutoffGroup = group(worst[0])
        }
      }
      const hits = best
        .sorted()
        .slice(offset)
        .map(([doc, score]) => this.hit(doc, score))
      return { hits, total }
    } finally {
      // back to the start values: scattered writes for a few documents, one sweep for many
      if (count > this.size >>> 4) {
        scores.fill(0)
        matched.fill(0)
        lastWord.fill(-1)
      } else {
        for (let i = 0; i < count; i++) {
          const doc = touched[i]
          scores[doc] = 0
          matched[doc] = 0
          lastWord[doc] = -1
        }
      }
    }
  }

  /**
   * A listing without words, in the order a search with every score 0 would
   * give (group, newest first, then id), without sorting all of them on every
   * call: documents are kept newest-last as they arrive, so one walk counts
   * the matches in each group and a second keeps the page.
   */
  private recentPage(passes: (doc: number) => boolean, group: (doc: number) => number, offset: number, limit: number): FindingPage {
    const list = this.byRecency()
    const counts = [0, 0, 0, 0]
    for (let i = list.length - 1; i >= 0; i--) if (passes(list[i])) counts[group(list[i])]++
    const starts = [0, counts[0], counts[0] + counts[1], counts[0] + counts[1] + counts[2]]
    const total = starts[3] + counts[3]
    const picked: number[][] = [[], [], [], []]
    const seen = [0, 0, 0, 0]
    const end = offset + limit
    for (let i = list.length - 1; i >= 0 && offset < total; i--) {
      const doc = list[i]
      if (!passes(doc)) continue
      const g = group(doc)
      const rank = starts[g] + seen[g]++
      if (rank >= offset && rank < end) picked[g].push(doc)
    }
    return { hits: picked.flat().map(doc => this.hit(doc, 0)), total }
  }

  /** Documents with the newest last (time, then id descending); sorted again only after one arrived out of order. */
  private byRecency(): number[] {
    if (!this.recencySorted) {
      this.recency.sort((x, y) => this.newestFirst(y, x))
      this.recencySorted = true
    }
    return this.recency
  }
}

/** The best `k` of the documents offered, by `before`. */
class TopK {
  private readonly heap: Array<[number, number]> = []
  constructor(
    private readonly k: number,
    private readonly before: (x: number, sx: number, y: number, sy: number) => boolean
  ) {}

  offer(doc: number, score: number): void {
    const h = this.heap
    if (h.length < this.k) {
      h.push([doc, score])
      this.up(h.length - 1)
    } else if (this.k > 0 && this.before(doc, score, h[0][0], h[0][1])) {
      h[0] = [doc, score]
      this.down(0)
    }
  }

  /** The worst document kept and its score, once k are kept. */
  get worst(): [number, number] | undefined {
    return this.heap.length >= this.k && this.k > 0 ? this.heap[0] : undefined
  }

  sorted(): Array<[number, number]> {
    return [...this.heap].sort((a, b) => (this.before(a[0], a[1], b[0], b[1]) ? -1 : 1))
  }

  // a heap whose root is the worst kept
  private worse(i: number, j: number): boolean {
    return this.before(this.heap[j][0], this.heap[j][1], this.heap[i][0], this.heap[i][1])
  }

  private up(i: number): void {
    while (i > 0) {
      const p = (i - 1) >> 1
      if (!this.worse(i, p)) return
      ;[this.heap[i], this.heap[p]] = [this.heap[p], this.heap[i]]
      i = p
    }
  }

  private down(i: number): void {
    const n = this.heap.length
    for (;;) {
      const l = 2 * i + 1
      const r = l + 1
      let w = i
      if (l < n && this.worse(l, w)) w = l
      if (r < n && this.worse(r, w)) w = r
      if (w === i) return
      ;[this.heap[i], this.heap[w]] = [this.heap[w], this.heap[i]]
      i = w
    }
  }
}

function checkLimit(value: number | undefined): number {
  const limit = value === undefined || value === 0 ? DEFAULT_SEARCH_LIMIT : value
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT) {
    throw new InvalidArgumentError(`limit must be between 1 and ${MAX_SEARCH_LIMIT}`)
  }
  return limit
}
