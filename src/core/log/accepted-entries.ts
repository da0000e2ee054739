// The accepted part of the log: every valid entry once, by id, by
// (author, seq) and by arrival cursor, with the deterministic total order.
// It checks nothing; LogState decides what comes in.
//
// It is an index, not a copy: per entry a row of a few typed columns (id,
// author, seq, lamport, kind, cursor) and a slot in a hash table, about 60
// bytes, while the entry's bytes are kept by an EntryArchive (an array here,
// the store in agentd). Entries are decoded from the archive when asked for,
// so a million of them cost tens of megabytes instead of gigabytes.
import { Entry } from '../../gen/agency/v1/log.js'
import { FailedPreconditionError } from '../errors.js'
import { float64Column, int32Column, RecordColumn, RowTable, uint8Column } from './columns.js'
import { toHex } from './crypto.js'
import type { PendingEntry, StoredEntry } from './ingest-result.js'
import { KNOWN_KINDS } from './kinds.js'
import { ENTRY_ID_BYTES } from './limits.js'
import type { CheckpointColumns, CheckpointRows } from './log-checkpoint.js'
import { idOfBytes } from './entry.js'
import { scanEntry } from './entry-scan.js'
import type { PreparedRestore } from './restore.js'
import { compareStrings, type VersionVector } from './version-vector.js'

/** The deterministic total order: (lamport, author, seq). */
export function compareStored(x: StoredEntry, y: StoredEntry): number {
  return x.entry.lamport - y.entry.lamport || compareStrings(x.entry.author, y.entry.author) || x.entry.seq - y.entry.seq
}

/** Where accepted entries' bytes are kept, by cursor. Synchronous: it is memory, or a store read that cannot wait. */
export interface EntryArchive {
  /** keeps the canonical bytes of the entry accepted at `cursor` */
  put: (cursor: number, bytes: Uint8Array) => void
  /** the bytes of the entry at `cursor`, or undefined when none was put there */
  get: (cursor: number) => Uint8Array | undefined
}

/** Entry bytes in memory: the default archive (tests, the simulator). */
export class MemoryArchive implements EntryArchive {
  private readonly byCursor = new Map<number, Uint8Array>()
  put(cursor: number, bytes: Uint8Array): void {
    this.byCursor.set(cursor, bytes)
  }
  get(cursor: number): Uint8Array | undefined {
    return this.byCursor.get(cursor)
  }
}

/** What the index knows of an entry without reading it. */
export interface EntryMeta {
  cursor: number
  author: string
  seq: number
  lamport: number
  kind: string
}

const KIND_INDEX = new Map<string, number>(KNOWN_KINDS.map((k, i) => [k, i]))
const UNKNOWN_KIND = 255

/** Hex entry id to bytes; undefined for anything that is not 64 hex digits. */
function idBytes(id: string): Uint8Array | undefined {
  if (id.length !== ENTRY_ID_BYTES * 2) return undefined
  const b = Buffer.from(id, 'hex')
  return b.byteLength === ENTRY_ID_BYTES ? b : undefined
}

export class AcceptedEntries {
  private readonly archive: EntryArchive
  // one row per entry, in arrival order; row r (from 1) is index r - 1 of each column
  private readonly ids = new RecordColumn(ENTRY_ID_BYTES)
  private readonly rowAuthor = int32Column()
  private readonly rowSeq = int32Column()
  private readonly rowLamport = float64Column()
  private readonly rowKind = uint8Column()
  private readonly rowCursor = float64Column()
  private readonly byId = new RowTable(this.ids)
  private readonly authorNames: string[] = []
  private readonly authorIndex = new Map<string, number>()
  /** per author index: the row of each seq (index seq - 1), always whole from seq 1 */
  private readonly feeds: Array<ReturnType<typeof int32Column>> = []
  /** per author index: its last entry, decoded (sync, staging and chain checks read it all the time) */
  private readonly lasts: StoredEntry[] = []
  private readonly kindCounts = new Map<string, number>()
  /** rows in the total order, or null when an entry arrived out of it */
  private orderedRows: number[] | null = []
  private maxLamport = 0
  private lastCursor = 0

  constructor(archive: EntryArchive = new MemoryArchive()) {
    this.archive = archive
  }

  /** Appends `p` to its author's feed with the next cursor. */
  add(p: PendingEntry): StoredEntry {
    const stored: StoredEntry = { id: p.id, entry: p.entry, bytes: p.bytes, cursor: this.lastCursor + 1 }
    this.archive.put(stored.cursor, p.bytes)
    const row = this.addRow(stored, p.digest)
    this.feeds[this.rowAuthor.at(row - 1)].push(row)
    this.lasts[this.rowAuthor.at(row - 1)] = stored
    // keep the ordered view when the new entry sorts last, the common case
    const ordered = this.orderedRows
    if (ordered != null) {
      if (ordered.length === 0 || this.compareRows(ordered[ordered.length - 1], row) < 0) ordered.push(row)
      else this.orderedRows = null
    }
    return stored
  }

  /**
   * Takes in a validated restore; only on an empty set. Its entries' bytes go
   * to the archive unless `archived` says the archive has them already (the
   * store they were read from).
   */
  load({ arrivals, feeds }: PreparedRestore, archived = false): void {
    if (this.size > 0) throw new FailedPreconditionError('load needs an empty index')
    const rows = new Map<string, number>()
    for (const s of arrivals) {
      if (!archived) this.archive.put(s.cursor, s.bytes)
      rows.set(s.id, this.addRow(s))
    }
    for (const [author, feed] of feeds) {
      const a = this.authorIndex.get(author) as number
      for (const s of feed) this.feeds[a].push(rows.get(s.id) as number)
      this.lasts[a] = feed[feed.length - 1]
    }
    this.orderedRows = null
  }

  /**
   * The rows of the entries with cursor up to `upTo` (those the archive has
   * on disk), for a checkpoint written at once: views of the columns' chunks
   * (no copy) but for the renumbered authors. Undefined when there are none.
   */
  checkpointRows(upTo: number): CheckpointColumns | undefined {
    const n = this.firstRowAfter(upTo) - 1
    if (n < 1) return undefined
    // authors in order of their first row, so every author named has a row
    const names: string[] = []
    const renumber = new Int32Array(this.authorNames.length).fill(-1)
    const author = new Int32Array(n)
    for (let r = 0; r < n; r++) {
      const a = this.rowAuthor.at(r)
      if (renumber[a] === -1) {
        renumber[a] = names.length
        names.push(this.authorNames[a])
      }
      author[r] = renumber[a]
    }
    return {
      cursor: this.rowCursor.at(n - 1),
      authors: names,
      ids: this.ids.views(n),
      author,
      seq: this.rowSeq.views(n),
      lamport: this.rowLamport.views(n),
      rowCursor: this.rowCursor.views(n),
      kind: this.rowKind.views(n)
    }
  }

  /**
   * An index of the checkpoint's rows (checked by decodeCheckpoint), whose
   * entries' bytes `archive` holds. Each author's last entry is read from
   * the archive and must hash to its row's id; throws
   * FailedPreconditionError when one is missing or differs (the checkpoint
   * is not of this log).
   */
  static fromCheckpoint(rows: CheckpointRows, archive: EntryArchive): AcceptedEntries {
    const out = new AcceptedEntries(archive)
    const n = rows.author.length
    for (const name of rows.authors) {
      out.authorIndex.set(name, out.authorNames.length)
      out.authorNames.push(name)
      out.feeds.push(int32Column())
    }
    // column by column: chunk copies, and a row table sized once (a row at a time, growing as it went, was most of a restart)
    out.ids.pushAll(rows.ids)
    out.rowAuthor.pushAll(rows.author)
    out.rowSeq.pushAll(rows.seq)
    out.rowLamport.pushAll(rows.lamport)
    out.rowKind.pushAll(rows.kind)
    out.rowCursor.pushAll(rows.rowCursor)
    out.byId.addRowsLater(1, n)
    const perAuthor = rows.authors.map(() => 0)
    for (let r = 0; r < n; r++) perAuthor[rows.author[r]]++
    const feedRows = perAuthor.map(c => new Int32Array(c))
    perAuthor.fill(0)
    const counts = new Array<number>(KNOWN_KINDS.length).fill(0)
    for (let r = 0; r < n; r++) {
      const a = rows.author[r]
      feedRows[a][perAuthor[a]++] = r + 1
      if (rows.lamport[r] > out.maxLamport) out.maxLamport = rows.lamport[r]
      counts[rows.kind[r]]++
    }
    feedRows.forEach((f, a) => {
      out.feeds[a].pushAll(f)
    })
    counts.forEach((c, k) => {
      if (c > 0) out.kindCounts.set(KNOWN_KINDS[k], c)
    })
    out.lastCursor = rows.cursor
    for (let a = 0; a < out.authorNames.length; a++) {
      const feed = out.feeds[a]
      const row = feed.at(feed.length - 1)
      const cursor = out.rowCursor.at(row - 1)
      const bytes = archive.get(cursor)
      const id = out.idOf(row)
      if (bytes === undefined || idOfBytes(bytes) !== id)
        throw new FailedPreconditionError(`the log has no entry ${id} at cursor ${cursor}, which the checkpoint names`)
      out.lasts[a] = { id, entry: Entry.decode(bytes), bytes, cursor }
    }
    out.orderedRows = null
    return out
  }

  /** Appends an entry read back from the archive (checked by the caller: it follows its feed, its cursor grows). */
  appendRestored(s: StoredEntry): void {
    const row = this.addRow(s)
    const a = this.rowAuthor.at(row - 1)
    this.feeds[a].push(row)
    this.lasts[a] = s
    this.orderedRows = null
  }

  /** Adds the entry's row (not yet to its feed); returns the row. */
  private addRow(s: StoredEntry, digest?: Uint8Array): number {
    const id = digest ?? idBytes(s.id)
    if (id === undefined) throw new FailedPreconditionError(`entry id ${s.id} is not 64 hex digits`)
    const { author, seq, lamport, kind } = s.entry
    let a = this.authorIndex.get(author)
    if (a === undefined) {
      a = this.authorNames.length
      this.authorNames.push(author)
      this.authorIndex.set(author, a)
      this.feeds.push(int32Column())
    }
    this.ids.push(id)
    this.rowAuthor.push(a)
    this.rowSeq.push(seq)
    this.rowLamport.push(lamport)
    this.rowKind.push(KIND_INDEX.get(kind) ?? UNKNOWN_KIND)
    this.rowCursor.push(s.cursor)
    const row = this.ids.length
    this.byId.add(row)
    if (s.cursor > this.lastCursor) this.lastCursor = s.cursor
    if (lamport > this.maxLamport) this.maxLamport = lamport
    this.kindCounts.set(kind, (this.kindCounts.get(kind) ?? 0) + 1)
    return row
  }

  // ---- rows ----

  private rowOf(id: string): number {
    const b = idBytes(id)
    return b === undefined ? 0 : this.byId.find(b)
  }

  private idOf(row: number): string {
    return toHex(this.ids.at(row - 1))
  }

  /** Reads and decodes the entry of `row` from the archive. */
  private materialize(row: number): StoredEntry {
    const cursor = this.rowCursor.at(row - 1)
    const a = this.rowAuthor.at(row - 1)
    const last = this.lasts[a]
    if (last.cursor === cursor) return last
    const bytes = this.archive.get(cursor)
    if (bytes === undefined) throw new FailedPreconditionError(`the archive has no entry at cursor ${cursor}`)
    // what the archive holds is canonical: read straight from the bytes (a fold over a large log reads every entry)
    return { id: this.idOf(row), entry: scanEntry(bytes) ?? Entry.decode(bytes), bytes, cursor }
  }

  private compareRows(x: number, y: number): number {
    return (
      this.rowLamport.at(x - 1) - this.rowLamport.at(y - 1) ||
      compareStrings(this.authorNames[this.rowAuthor.at(x - 1)], this.authorNames[this.rowAuthor.at(y - 1)]) ||
      this.rowSeq.at(x - 1) - this.rowSeq.at(y - 1)
    )
  }

  /** The first row whose cursor is greater than `cursor`. */
  private firstRowAfter(cursor: number): number {
    let lo = 1
    let hi = this.ids.length + 1
    // cursors are rows in a log built here; a restore may have left gaps
    if (
      cursor >= 0 &&
      cursor < hi - 1 &&
      this.rowCursor.at(cursor) === cursor + 1 &&
      (cursor === 0 || this.rowCursor.at(cursor - 1) === cursor)
    )
      return cursor + 1
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.rowCursor.at(mid - 1) <= cursor) lo = mid + 1
      else hi = mid
    }
    return lo
  }

  // ---- reading ----

  has(id: string): boolean {
    return this.rowOf(id) !== 0
  }

  /** has, for an id given as its 32 bytes */
  hasDigest(digest: Uint8Array): boolean {
    return digest.byteLength === ENTRY_ID_BYTES && this.byId.find(digest) !== 0
  }

  get(id: string): StoredEntry | undefined {
    const row = this.rowOf(id)
    return row === 0 ? undefined : this.materialize(row)
  }

  /** The entry at `cursor`, or undefined. */
  atCursor(cursor: number): StoredEntry | undefined {
    const row = this.firstRowAfter(cursor - 1)
    return row <= this.ids.length && this.rowCursor.at(row - 1) === cursor ? this.materialize(row) : undefined
  }

  /** How many entries of `kind` have a cursor up to `upTo`. */
  countOfKind(kind: string, upTo: number): number {
    if (this.firstRowAfter(upTo) - 1 >= this.ids.length) return this.kindCounts.get(kind) ?? 0
    const k = KIND_INDEX.get(kind) ?? UNKNOWN_KIND
    let n = 0
    for (let row = this.firstRowAfter(upTo) - 1; row >= 1; row--) if (this.rowKind.at(row - 1) === k) n++
    return n
  }

  /** How many entries of each kind have a cursor up to `upTo`, in one pass (none when it covers every row). */
  countsByKindUpTo(upTo: number): Map<string, number> {
    const last = this.firstRowAfter(upTo) - 1
    if (last >= this.ids.length) return this.countsByKind()
    const per = new Array<number>(256).fill(0)
    for (let row = 1; row <= last; row++) per[this.rowKind.at(row - 1)]++
    const out = new Map<string, number>()
    per.forEach((n, k) => {
      if (n > 0 && k < KNOWN_KINDS.length) out.set(KNOWN_KINDS[k], n)
    })
    return out
  }

  /** True when the entry at `cursor` is of `kind` and its id starts with the bytes of `idHead`. */
  holdsAt(cursor: number, kind: string, idHead: Uint8Array): boolean {
    const row = this.firstRowAfter(cursor - 1)
    if (
      row > this.ids.length ||
      this.rowCursor.at(row - 1) !== cursor ||
      this.rowKind.at(row - 1) !== (KIND_INDEX.get(kind) ?? UNKNOWN_KIND)
    )
      return false
    const id = this.ids.at(row - 1)
    for (let i = 0; i < idHead.length; i++) if (id[i] !== idHead[i]) return false
    return true
  }

  /** The cursor of entry `id`, or 0. */
  cursorOf(id: string): number {
    const row = this.rowOf(id)
    return row === 0 ? 0 : this.rowCursor.at(row - 1)
  }

  byAuthorSeq(author: string, seq: number): StoredEntry | undefined {
    const a = this.authorIndex.get(author)
    if (a === undefined || !(seq >= 1 && seq <= this.feeds[a].length)) return undefined
    return this.materialize(this.feeds[a].at(seq - 1))
  }

  /** The id of the author's entry at `seq`, without reading it. */
  idAt(author: string, seq: number): string | undefined {
    const a = this.authorIndex.get(author)
    if (a === undefined || !(seq >= 1 && seq <= this.feeds[a].length)) return undefined
    return this.idOf(this.feeds[a].at(seq - 1))
  }

  /** The author's last entry. */
  last(author: string): StoredEntry | undefined {
    const a = this.authorIndex.get(author)
    return a === undefined ? undefined : this.lasts[a]
  }

  /** The author's highest seq held (0 for none). */
  held(author: string): number {
    const a = this.authorIndex.get(author)
    return a === undefined ? 0 : this.feeds[a].length
  }

  vector(): Map<string, number> {
    const v = new Map<string, number>()
    this.authorNames.forEach((author, a) => {
      v.set(author, this.feeds[a].length)
    })
    return v
  }

  entriesAfter(remote: VersionVector, limit: number): StoredEntry[] {
    const out: StoredEntry[] = []
    for (const author of this.authors()) {
      const feed = this.feeds[this.authorIndex.get(author) as number]
      for (let i = Math.max(0, remote.get(author) ?? 0); i < feed.length; i++) {
        if (out.length >= limit) return out
        out.push(this.materialize(feed.at(i)))
      }
    }
    return out
  }

  afterCursor(cursor: number, limit: number): StoredEntry[] {
    const out: StoredEntry[] = []
    for (let row = this.firstRowAfter(cursor); row <= this.ids.length && out.length < limit; row++) out.push(this.materialize(row))
    return out
  }

  /** Entries with a cursor greater than `cursor`, in cursor order, read one at a time (for folds over a large log). */
  *iterateAfter(cursor: number, kinds?: ReadonlySet<string>): Generator<StoredEntry> {
    const wanted = kinds === undefined ? undefined : new Set([...kinds].map(k => KIND_INDEX.get(k) ?? UNKNOWN_KIND))
    for (let row = this.firstRowAfter(cursor); row <= this.ids.length; row++) {
      if (wanted !== undefined && !wanted.has(this.rowKind.at(row - 1))) continue
      yield this.materialize(row)
    }
  }

  /** What the index knows of the entries after `cursor`, in cursor order, without reading them. */
  *metaAfter(cursor: number): Generator<EntryMeta> {
    for (let row = this.firstRowAfter(cursor); row <= this.ids.length; row++) yield this.meta(row)
  }

  private meta(row: number): EntryMeta {
    const k = this.rowKind.at(row - 1)
    return {
      cursor: this.rowCursor.at(row - 1),
      author: this.authorNames[this.rowAuthor.at(row - 1)],
      seq: this.rowSeq.at(row - 1),
      lamport: this.rowLamport.at(row - 1),
      kind: k === UNKNOWN_KIND ? '' : KNOWN_KINDS[k]
    }
  }

  /** Cursors of the author's entries with seq in `from..to` (inclusive), in seq order. */
  feedCursors(author: string, from: number, to: number): number[] {
    const a = this.authorIndex.get(author)
    if (a === undefined) return []
    const out: number[] = []
    for (let seq = Math.max(1, from); seq <= Math.min(to, this.feeds[a].length); seq++)
      out.push(this.rowCursor.at(this.feeds[a].at(seq - 1) - 1))
    return out
  }

  ordered(kinds?: ReadonlySet<string>): StoredEntry[] {
    if (this.orderedRows == null) {
      const rows = Array.from({ length: this.ids.length }, (_, i) => i + 1)
      this.orderedRows = rows.sort((x, y) => this.compareRows(x, y))
    }
    const wanted = kinds === undefined ? undefined : new Set([...kinds].map(k => KIND_INDEX.get(k) ?? UNKNOWN_KIND))
    const out: StoredEntry[] = []
    for (const row of this.orderedRows) if (wanted === undefined || wanted.has(this.rowKind.at(row - 1))) out.push(this.materialize(row))
    return out
  }

  authors(): string[] {
    return [...this.authorNames].sort(compareStrings)
  }

  countsByKind(): Map<string, number> {
    return new Map(this.kindCounts)
  }

  /** Authors with at least one entry. */
  get authorCount(): number {
    return this.authorNames.length
  }

  get size(): number {
    return this.ids.length
  }

  get lamport(): number {
    return this.maxLamport
  }

  get cursor(): number {
    return this.lastCursor
  }
}
