// Persistence of the replicated log. The log core decides what is accepted,
// pending or a fork; this store keeps it so that a restarted daemon has its
// whole log back, and checks the invariants its layout relies on.
//
// Layout (sublevels of the one LevelDB), schema 2:
//   log-c       <cursor padded>       -> canonical entry bytes (arrival order)
//   log-vector  author                -> highest contiguous seq (decimal)
//   log-pending id                    -> entry bytes (waiting for a gap to fill, or an own entry not placed yet)
//   log-fork    author/<seq padded>/<id of b> -> both entries' bytes
// One key per accepted entry: the index by id and by (author, seq) is the log
// core's, in memory (and in its checkpoint), so a bulk sync writes an entry
// with one put instead of four. Schema 1 kept log-entry (id -> bytes),
// log-seq and log-cursor (-> id) as well; `migrateFromSchema1` moves such a
// store to this layout.
import { Entry } from '../gen/agency/v1/log.js'
import { InvalidArgumentError } from '../core/errors.js'
import { sha256, toHex } from '../core/log/crypto.js'
import { idOfBytes } from '../core/log/entry.js'
import type { EntryArchive } from '../core/log/accepted-entries.js'
import { StoreCorruptError } from './errors.js'
import { writeRaw, type LevelBatch, type LevelDb, type RawOp } from './level-db.js'
import { assertNonNegativeInteger, assertPositiveInteger, assertNonEmptyString, padNumber, parsePadded } from './keys.js'
import { SerialQueue } from './serial-queue.js'

/** An entry with its id (hex) and canonical bytes, as the log core hands it over. */
export interface EntryRecord {
  id: string
  entry: Entry
  bytes: Uint8Array
}

/** An accepted entry: `cursor` is its position in this daemon's arrival order, from 1. */
export interface StoredEntryRecord extends EntryRecord {
  cursor: number
}

/**
 * Two different entries by one author at one seq: the proof that the author
 * forked its feed. Same shape as the log core's ForkProof.
 */
export interface StoredForkProof {
  author: string
  seq: number
  /** the entry held first */
  a: Entry
  /** the conflicting entry */
  b: Entry
}

export interface AcceptedWriteOptions {
  /** true for writes acknowledged to the local agent: on disk before the call returns */
  sync: boolean
  /** ids to remove from the pending set in the same batch; default: every record's (an own entry is pending until placed) */
  pendingIds?: readonly string[]
}

const READ_BATCH = 512
const HEX_ID = /^[0-9a-f]+$/

/**
 * The log core's archive of entry bytes (core/log/accepted-entries), kept by
 * this store: an entry the core accepted waits in memory until its write is
 * done, then is read back from LevelDB when asked for (synchronously: the
 * core's reads do not wait).
 */
class StoreArchive implements EntryArchive {
  private readonly unwritten = new Map<number, Uint8Array>()
  constructor(private readonly read: (cursor: number) => Uint8Array | undefined) {}
  put(cursor: number, bytes: Uint8Array): void {
    this.unwritten.set(cursor, bytes)
  }
  get(cursor: number): Uint8Array | undefined {
    return this.unwritten.get(cursor) ?? this.read(cursor)
  }
  written(cursors: Iterable<number>): void {
    for (const c of cursors) this.unwritten.delete(c)
  }
  /** entries accepted and not yet written */
  get waiting(): number {
    return this.unwritten.size
  }
}

export class LogStore {
  /** hand this to the log core (LogState's `archive`): it reads entries from here */
  readonly archive: StoreArchive = new StoreArchive(cursor => this.bytesAtSync(cursor))
  private readonly db: LevelDb
  private readonly byCursor
  private readonly vectorLevel
  private readonly pending
  private readonly forks
  private readonly queue = new SerialQueue()
  private readonly vector: Map<string, number>
  private last: number
  private total: number

  private constructor(db: LevelDb, vector: Map<string, number>, last: number, total: number) {
    this.db = db
    const s = LogStore.sublevels(db)
    this.byCursor = s.byCursor
    this.vectorLevel = s.vector
    this.pending = s.pending
    this.forks = s.forks
    this.vector = vector
    this.last = last
    this.total = total
  }

  private static sublevels(db: LevelDb) {
    return {
      byCursor: db.sublevel<string, Uint8Array>('log-c', { keyEncoding: 'utf8', valueEncoding: 'view' }),
      vector: db.sublevel<string, string>('log-vector', { keyEncoding: 'utf8', valueEncoding: 'utf8' }),
      pending: db.sublevel<string, Uint8Array>('log-pending', { keyEncoding: 'utf8', valueEncoding: 'view' }),
      forks: db.sublevel<string, Uint8Array>('log-fork', { keyEncoding: 'utf8', valueEncoding: 'view' })
    }
  }

  /**
   * Loads the version vector and the last cursor kept in memory. Cursors are
   * stored without gaps from 1, so the last is also the number of entries:
   * opening reads one key, not the whole log.
   */
  static async open(db: LevelDb): Promise<LogStore> {
    const s = LogStore.sublevels(db)
    const vector = new Map<string, number>()
    for await (const [author, seq] of s.vector.iterator()) vector.set(author, Number(seq))
    const lastKeys = await s.byCursor.keys({ reverse: true, limit: 1 }).all()
    const last = lastKeys.length > 0 ? parsePadded(lastKeys[0]) : 0
    return new LogStore(db, vector, last, last)
  }

  /**
   * Moves a schema-1 log (entries by id, indexes by seq and by cursor) to
   * this layout, in batches, and returns how many entries it moved. Safe to
   * run again after a crash: the old keys go only once every entry is copied.
   */
  static async migrateFromSchema1(db: LevelDb): Promise<number> {
    const s = LogStore.sublevels(db)
    const oldEntries = db.sublevel<string, Uint8Array>('log-entry', { keyEncoding: 'utf8', valueEncoding: 'view' })
    const oldBySeq = db.sublevel<string, string>('log-seq', { keyEncoding: 'utf8', valueEncoding: 'utf8' })
    const oldByCursor = db.sublevel<string, string>('log-cursor', { keyEncoding: 'utf8', valueEncoding: 'utf8' })
    let moved = 0
    const it = oldByCursor.iterator()
    try {
      for (;;) {
        const page = await it.nextv(READ_BATCH * 4)
        if (page.length === 0) break
        const values = await oldEntries.getMany(page.map(([, id]) => id))
        const ops: LevelBatch = page.map(([cursor, id], i) => {
          const bytes = values[i]
          if (bytes == null) throw new StoreCorruptError(`the schema-1 log index names entry ${id}, which is not stored`)
          return { type: 'put', sublevel: s.byCursor, key: cursor, value: bytes }
        })
        await db.batch(ops, { sync: false })
        moved += page.length
      }
    } finally {
      await it.close()
    }
    await Promise.all([oldEntries.clear(), oldBySeq.clear(), oldByCursor.clear()])
    return moved
  }

  /**
   * Stores accepted entries in one atomic batch: each under its cursor, the
   * version vector, and removal from the pending set of `pendingIds` (by
   * default every record's id: an own entry is pending until placed).
   * Refuses (and writes nothing) a batch whose cursors do not follow the last
   * stored one without a gap, or that would leave a gap or a duplicate in an
   * author's feed.
   */
  async putAccepted(records: readonly StoredEntryRecord[], opts: AcceptedWriteOptions): Promise<void> {
    if (records.length === 0) return
    for (const r of records) assertRecord(r, true)
    const pendingIds = opts.pendingIds ?? records.map(r => r.id)
    for (const id of pendingIds) assertId(id)
    await this.queue.run(async () => {
      const seqsByAuthor = new Map<string, number[]>()
      let expectedCursor = this.last + 1
      for (const r of records) {
        if (r.cursor !== expectedCursor) {
          throw new InvalidArgumentError(
            `entry ${r.id}: cursor ${r.cursor} does not follow cursor ${expectedCursor - 1} (stored cursors run from 1 without a gap)`
          )
        }
        expectedCursor++
        const seqs = seqsByAuthor.get(r.entry.author)
        if (seqs === undefined) seqsByAuthor.set(r.entry.author, [r.entry.seq])
        else seqs.push(r.entry.seq)
      }
      const newVector = new Map<string, number>()
      for (const [author, seqs] of seqsByAuthor) {
        seqs.sort((a, b) => a - b)
        let expected = (this.vector.get(author) ?? 0) + 1
        for (const seq of seqs) {
          if (seq !== expected) {
            throw new InvalidArgumentError(
              seq < expected
                ? `author ${author} seq ${seq} is already stored or repeats in the batch`
                : `author ${author} seq ${seq} leaves a gap: the feed ends at seq ${expected - 1}`
            )
          }
          expected++
        }
        newVector.set(author, expected - 1)
      }

      // Keys carry their sublevel's prefix and every value is bytes (the
      // vector's decimal seqs too): a bulk sync writes thousands of entries
      // per batch, written as they are (level-db.ts writeRaw).
      const ops: RawOp[] = []
      const cursorPrefix = this.byCursor.prefix
      const pendingPrefix = this.pending.prefix
      const vectorPrefix = this.vectorLevel.prefix
      for (const r of records) ops.push({ type: 'put', key: cursorPrefix + padNumber(r.cursor), value: r.bytes })
      for (const id of pendingIds) ops.push({ type: 'del', key: pendingPrefix + id })
      for (const [author, seq] of newVector) ops.push({ type: 'put', key: vectorPrefix + author, value: Buffer.from(String(seq)) })
      await writeRaw(this.db, ops, { sync: opts.sync })
      this.archive.written(records.map(r => r.cursor))

      for (const [author, seq] of newVector) this.vector.set(author, seq)
      this.last = expectedCursor - 1
      this.total += records.length
    })
  }

  /**
   * Keeps entries that wait for a gap in their author's feed to be filled, or
   * (synced) this daemon's own entries before they are placed: a restart takes
   * in whichever of those follow their feed.
   */
  async putPending(records: readonly EntryRecord[], opts: { sync?: boolean } = {}): Promise<void> {
    if (records.length === 0) return
    for (const r of records) assertRecord(r, false)
    const ops: LevelBatch = records.map(r => ({ type: 'put', sublevel: this.pending, key: r.id, value: r.bytes }))
    await this.queue.run(async () => {
      await this.db.batch(ops, { sync: opts.sync === true })
    })
  }

  async removePending(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return
    for (const id of ids) assertId(id)
    const ops: LevelBatch = ids.map(id => ({ type: 'del', sublevel: this.pending, key: id }))
    await this.queue.run(async () => {
      await this.db.batch(ops)
    })
  }

  async loadPending(): Promise<EntryRecord[]> {
    const out: EntryRecord[] = []
    for await (const [id, bytes] of this.pending.iterator()) out.push(decodeRecord(id, bytes))
    return out
  }

  /** Keeps a fork proof. Storing the same proof twice keeps one copy. */
  async putFork(proof: StoredForkProof): Promise<void> {
    assertAuthor(proof.author)
    assertPositiveInteger('fork seq', proof.seq)
    if (proof.a == null || proof.b == null) throw new InvalidArgumentError('a fork proof needs both entries')
    const a = Entry.encode(proof.a).finish()
    const b = Entry.encode(proof.b).finish()
    const key = `${seqKey(proof.author, proof.seq)}/${toHex(sha256(b))}`
    await this.queue.run(async () => {
      const ops: LevelBatch = [{ type: 'put', sublevel: this.forks, key, value: encodeForkValue(a, b) }]
      await this.db.batch(ops, { sync: true })
    })
  }

  async loadForks(): Promise<StoredForkProof[]> {
    const out: StoredForkProof[] = []
    for await (const [key, value] of this.forks.iterator()) {
      const [author, seq] = key.split('/')
      const { a, b } = decodeForkValue(key, value)
      out.push({ author, seq: parsePadded(seq), a: decodeRecord(key, a).entry, b: decodeRecord(key, b).entry })
    }
    return out
  }

  /** Every accepted entry, in cursor (arrival) order, decoded and hashed. */
  async *loadAll(): AsyncGenerator<StoredEntryRecord> {
    yield* this.recordsAfter(0)
  }

  /** Up to `limit` accepted entries with cursor > `after`, in cursor order, decoded and hashed. */
  async readAfter(after: number, limit: number): Promise<StoredEntryRecord[]> {
    assertNonNegativeInteger('cursor', after)
    assertPositiveInteger('limit', limit)
    const out: StoredEntryRecord[] = []
    for await (const r of this.recordsAfter(after, limit)) out.push(r)
    return out
  }

  /** The bytes of the entries with cursor > `after`, in cursor order, as stored (not decoded): pages of at most `page`. */
  async *bytesAfter(after: number, page = READ_BATCH * 4): AsyncGenerator<Array<{ cursor: number; bytes: Uint8Array }>> {
    const it = this.byCursor.iterator({ gt: padNumber(after) })
    try {
      for (;;) {
        const got = await it.nextv(page)
        if (got.length === 0) return
        yield got.map(([key, bytes]) => ({ cursor: parsePadded(key), bytes }))
      }
    } finally {
      await it.close()
    }
  }

  /**
   * The stored bytes of the entries at cursors `from..to` (inclusive), in
   * cursor order, read as one range (a sender's bulk read: one iterator
   * instead of a look-up per entry). Every cursor up to lastCursor() is
   * stored (cursors run from 1 without a gap), so `to` must not pass it.
   */
  async bytesInRange(from: number, to: number): Promise<Uint8Array[]> {
    assertPositiveInteger('cursor', from)
    assertPositiveInteger('cursor', to)
    if (to > this.last) throw new InvalidArgumentError(`cursor ${to} is past the last stored cursor ${this.last}`)
    if (to < from) return []
    const it = this.byCursor.values({ gte: padNumber(from), lte: padNumber(to) })
    try {
      const out: Uint8Array[] = []
      // nextv answers a page at a time (as many as fit its byte budget)
      for (;;) {
        const page = await it.nextv(to - from + 1 - out.length)
        if (page.length === 0) break
        for (const b of page) out.push(b)
        if (out.length >= to - from + 1) break
      }
      if (out.length !== to - from + 1)
        throw new StoreCorruptError(`the log holds ${out.length} entries at cursors ${from} to ${to}, not ${to - from + 1}`)
      return out
    } finally {
      await it.close()
    }
  }

  /** The stored bytes of the entries at `cursors` (one multi-get), undefined where none is stored. */
  async bytesAtMany(cursors: readonly number[]): Promise<Array<Uint8Array | undefined>> {
    const got = await this.byCursor.getMany(cursors.map(padNumber))
    return got.map(b => b ?? undefined)
  }

  /** The stored bytes of the entry at `cursor`, read at once (blocking: for reads that cannot wait), or undefined. */
  bytesAtSync(cursor: number): Uint8Array | undefined {
    return this.byCursor.getSync(padNumber(cursor)) ?? undefined
  }

  /** The stored bytes of the entry at `cursor`, or undefined. */
  async bytesAt(cursor: number): Promise<Uint8Array | undefined> {
    assertPositiveInteger('cursor', cursor)
    return (await this.byCursor.get(padNumber(cursor))) ?? undefined
  }

  /** A copy of the version vector: author -> highest contiguous seq. */
  loadVector(): Map<string, number> {
    return new Map(this.vector)
  }

  /** The highest cursor stored; 0 when the log is empty. */
  lastCursor(): number {
    return this.last
  }

  /** Number of accepted entries. */
  count(): number {
    return this.total
  }

  private async *recordsAfter(after: number, limit = Infinity): AsyncGenerator<StoredEntryRecord> {
    const it = this.byCursor.iterator({ gt: padNumber(after) })
    try {
      let left = limit
      while (left > 0) {
        const page = await it.nextv(Math.min(READ_BATCH, left))
        if (page.length === 0) return
        left -= page.length
        for (const [key, bytes] of page) yield { ...decodeRecord(idOfBytes(bytes), bytes), cursor: parsePadded(key) }
      }
    } finally {
      await it.close()
    }
  }
}

function seqKey(author: string, seq: number): string {
  return `${author}/${padNumber(seq)}`
}

function decodeRecord(id: string, bytes: Uint8Array): EntryRecord {
  try {
    return { id, entry: Entry.decode(bytes), bytes }
  } catch (err) {
    throw new StoreCorruptError(`stored entry ${id} cannot be decoded`, { cause: err })
  }
}

// A fork value is [u32 length of a][a][b], a and b canonical entry bytes.
function encodeForkValue(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(4 + a.length + b.length)
  new DataView(out.buffer).setUint32(0, a.length)
  out.set(a, 4)
  out.set(b, 4 + a.length)
  return out
}

function decodeForkValue(key: string, value: Uint8Array): { a: Uint8Array; b: Uint8Array } {
  const view = new DataView(value.buffer, value.byteOffset, value.byteLength)
  const n = value.length >= 4 ? view.getUint32(0) : -1
  if (n < 0 || 4 + n > value.length) throw new StoreCorruptError(`fork proof ${key} is malformed`)
  return { a: value.subarray(4, 4 + n), b: value.subarray(4 + n) }
}

function assertId(id: unknown): asserts id is string {
  if (typeof id !== 'string' || !HEX_ID.test(id)) {
    throw new InvalidArgumentError(`entry id must be lowercase hex, got ${JSON.stringify(id)}`)
  }
}

// '/' separates author from seq in index keys; peer ids never contain it.
function assertAuthor(author: unknown): asserts author is string {
  assertNonEmptyString('author', author)
  if (author.includes('/')) throw new InvalidArgumentError(`author ${JSON.stringify(author)} must not contain '/'`)
}

function assertBytes(what: string, bytes: unknown): asserts bytes is Uint8Array {
  if (!(bytes instanceof Uint8Array) || bytes.length === 0) throw new InvalidArgumentError(`${what} must be non-empty bytes`)
}

function assertRecord(r: StoredEntryRecord | EntryRecord, accepted: boolean): void {
  // checked for every entry of a bulk sync: the messages are made only for a record that fails
  assertId(r.id)
  if (!(r.bytes instanceof Uint8Array) || r.bytes.length === 0) assertBytes(`entry ${r.id} bytes`, r.bytes)
  if (r.entry == null) throw new InvalidArgumentError(`entry ${r.id} has no decoded entry`)
  assertAuthor(r.entry.author)
  if (!isPositiveInteger(r.entry.seq)) assertPositiveInteger(`entry ${r.id} seq`, r.entry.seq)
  if (accepted && !isPositiveInteger((r as StoredEntryRecord).cursor))
    assertPositiveInteger(`entry ${r.id} cursor`, (r as StoredEntryRecord).cursor)
}

function isPositiveInteger(n: unknown): boolean {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 1
}
