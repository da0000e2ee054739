// Growable columns of numbers and fixed-size byte records, in chunks of typed
// arrays: a million entries' index fields cost a few bytes each instead of an
// object apiece, and growing copies at most the first chunk (which starts
// small and doubles: a column per author, at a few entries each, would
// otherwise cost a whole chunk apiece, 256 KiB for an int32 column).

const CHUNK_BITS = 16
const CHUNK = 1 << CHUNK_BITS
const MASK = CHUNK - 1
/** the first chunk's size at first: it doubles up to CHUNK */
const FIRST = 16

type NumberArray = Int32Array | Float64Array | Uint8Array | Uint16Array

/** A column of numbers, indexed from 0, that only grows. */
export class NumberColumn<T extends NumberArray = NumberArray> {
  private readonly chunks: T[] = []
  private size = 0
  private readonly make: (n: number) => T

  constructor(make: (n: number) => T) {
    this.make = make
  }

  get length(): number {
    return this.size
  }

  push(value: number): void {
    const i = this.size
    this.room(i >>> CHUNK_BITS, (i & MASK) + 1)[i & MASK] = value
    this.size++
  }

  /** Chunk `c`, made or grown to hold at least `need` values (need <= CHUNK): only the first is ever smaller than CHUNK. */
  private room(c: number, need: number): T {
    const chunk = this.chunks[c]
    if (chunk !== undefined && chunk.length >= need) return chunk
    if (c > 0) {
      const full = this.make(CHUNK)
      this.chunks.push(full)
      return full
    }
    let size = Math.max(FIRST, (chunk?.length ?? 0) * 2)
    while (size < need) size *= 2
    const grown = this.make(Math.min(CHUNK, size))
    if (chunk !== undefined) grown.set(chunk)
    this.chunks[0] = grown
    return grown
  }

  /** The value at `i` (0 <= i < length; not checked). */
  at(i: number): number {
    return this.chunks[i >>> CHUNK_BITS][i & MASK]
  }

  /** Changes the value at `i` (0 <= i < length; not checked). */
  set(i: number, value: number): void {
    this.chunks[i >>> CHUNK_BITS][i & MASK] = value
  }

  /** The first `n` values as one array (for checkpoints). */
  toArray(n = this.size): T {
    const out = this.make(n)
    for (let c = 0; c * CHUNK < n; c++) {
      const take = Math.min(CHUNK, n - c * CHUNK)
      out.set(take === CHUNK ? this.chunks[c] : this.chunks[c].subarray(0, take), c * CHUNK)
    }
    return out
  }

  /** The first `n` values as views of the column's chunks, in order (no copy: for a checkpoint written from them at once). */
  views(n = this.size): T[] {
    const out: T[] = []
    for (let c = 0; c * CHUNK < n; c++) out.push(this.chunks[c].subarray(0, Math.min(CHUNK, n - c * CHUNK)) as T)
    return out
  }

  /** Appends every value of `values` (a chunk at a time when they are a typed array). */
  pushAll(values: ArrayLike<number>): void {
    if (!ArrayBuffer.isView(values)) {
      for (let i = 0; i < values.length; i++) this.push(values[i])
      return
    }
    const typed = values as unknown as T
    for (let from = 0; from < typed.length;) {
      const i = this.size
      const take = Math.min(CHUNK - (i & MASK), typed.length - from)
      this.room(i >>> CHUNK_BITS, (i & MASK) + take).set(typed.subarray(from, from + take), i & MASK)
      this.size += take
      from += take
    }
  }

  /**
   * Appends `values`, keeping its whole chunks as views instead of copying
   * them, when the column is empty and `values` is its kind of array (else as
   * pushAll). The column then owns `values`: the caller must not change it.
   */
  adopt(values: T): void {
    if (this.size !== 0 || values.constructor !== this.make(0).constructor) {
      this.pushAll(values)
      return
    }
    const whole = values.length - (values.length & MASK)
    for (let from = 0; from < whole; from += CHUNK) this.chunks.push(values.subarray(from, from + CHUNK) as T)
    this.size = whole
    this.pushAll(values.subarray(whole))
  }
}

export const int32Column = (): NumberColumn<Int32Array> => new NumberColumn(n => new Int32Array(n))
export const float64Column = (): NumberColumn<Float64Array> => new NumberColumn(n => new Float64Array(n))
export const uint8Column = (): NumberColumn<Uint8Array> => new NumberColumn(n => new Uint8Array(n))

/** A column of fixed-size byte records (entry ids), indexed from 0, that only grows. */
export class RecordColumn {
  readonly recordBytes: number
  private readonly chunks: Uint8Array[] = []
  private size = 0

  constructor(recordBytes: number) {
    this.recordBytes = recordBytes
  }

  get length(): number {
    return this.size
  }

  push(record: Uint8Array): void {
    if (record.byteLength !== this.recordBytes) throw new RangeError(`a record is ${this.recordBytes} bytes, got ${record.byteLength}`)
    const i = this.size
    if ((i & MASK) === 0) this.chunks.push(new Uint8Array(CHUNK * this.recordBytes))
    this.chunks[i >>> CHUNK_BITS].set(record, (i & MASK) * this.recordBytes)
    this.size++
  }

  /** Appends the records `bytes` holds, back to back. */
  pushAll(bytes: Uint8Array): void {
    if (bytes.byteLength % this.recordBytes !== 0)
      throw new RangeError(`records are ${this.recordBytes} bytes, got ${bytes.byteLength} bytes`)
    const n = bytes.byteLength / this.recordBytes
    for (let from = 0; from < n;) {
      const i = this.size
      if ((i & MASK) === 0) this.chunks.push(new Uint8Array(CHUNK * this.recordBytes))
      const take = Math.min(CHUNK - (i & MASK), n - from)
      this.chunks[i >>> CHUNK_BITS].set(
        bytes.subarray(from * this.recordBytes, (from + take) * this.recordBytes),
        (i & MASK) * this.recordBytes
      )
      this.size += take
      from += take
    }
  }

  /** Appends the records `bytes` holds, keeping its whole chunks as views when the column is empty (see NumberColumn.adopt). */
  adopt(bytes: Uint8Array): void {
    if (this.size !== 0 || bytes.byteLength % this.recordBytes !== 0) {
      this.pushAll(bytes)
      return
    }
    const n = bytes.byteLength / this.recordBytes
    const whole = n - (n & MASK)
    const chunkBytes = CHUNK * this.recordBytes
    for (let from = 0; from < whole; from += CHUNK)
      this.chunks.push(bytes.subarray(from * this.recordBytes, from * this.recordBytes + chunkBytes))
    this.size = whole
    this.pushAll(bytes.subarray(whole * this.recordBytes))
  }

  /** The record at `i`, as a view (do not mutate). */
  at(i: number): Uint8Array {
    const off = (i & MASK) * this.recordBytes
    return this.chunks[i >>> CHUNK_BITS].subarray(off, off + this.recordBytes)
  }

  /** True when the record at `i` equals `record`. */
  equals(i: number, record: Uint8Array): boolean {
    const chunk = this.chunks[i >>> CHUNK_BITS]
    const off = (i & MASK) * this.recordBytes
    for (let k = 0; k < this.recordBytes; k++) if (chunk[off + k] !== record[k]) return false
    return true
  }

  /** The first four bytes of record `i`, as an unsigned integer (a hash: records are sha256). */
  head32(i: number): number {
    const chunk = this.chunks[i >>> CHUNK_BITS]
    const off = (i & MASK) * this.recordBytes
    return ((chunk[off] << 24) | (chunk[off + 1] << 16) | (chunk[off + 2] << 8) | chunk[off + 3]) >>> 0
  }

  /** The first `n` records as views of the column's chunks, in order (see NumberColumn.views). */
  views(n = this.size): Uint8Array[] {
    const out: Uint8Array[] = []
    for (let c = 0; c * CHUNK < n; c++) out.push(this.chunks[c].subarray(0, Math.min(CHUNK, n - c * CHUNK) * this.recordBytes))
    return out
  }

  /** The first `n` records as one array (for checkpoints). */
  toBytes(n = this.size): Uint8Array {
    const out = new Uint8Array(n * this.recordBytes)
    for (let c = 0; c * CHUNK < n; c++) {
      const take = Math.min(CHUNK, n - c * CHUNK)
      out.set(this.chunks[c].subarray(0, take * this.recordBytes), c * CHUNK * this.recordBytes)
    }
    return out
  }
}

/**
 * A hash set of row numbers (from 1) keyed by a record column's rows: find a
 * row by its record without a Map entry per row. Open addressing, linear
 * probing, kept at most half full.
 */
export class RowTable {
  private slots = new Int32Array(1 << 10)
  private count = 0
  private readonly records: RecordColumn

  /** Rows are 1-based: row r is record r - 1 of `records`. */
  constructor(records: RecordColumn) {
    this.records = records
  }

  /** rows added by addRows and not yet put in the table: they are, at the first look-up or add */
  private later?: { from: number; to: number }

  add(row: number): void {
    if (this.later !== undefined) this.settle()
    if ((this.count + 1) * 2 > this.slots.length) this.grow()
    this.insert(this.slots, row)
    this.count++
  }

  /** The row whose record equals `record`, or 0. */
  find(record: Uint8Array): number {
    if (this.later !== undefined) this.settle()
    const mask = this.slots.length - 1
    const h = ((record[0] << 24) | (record[1] << 16) | (record[2] << 8) | record[3]) >>> 0
    for (let s = h & mask; ; s = (s + 1) & mask) {
      const row = this.slots[s]
      if (row === 0) return 0
      if (this.records.equals(row - 1, record)) return row
    }
  }

  /**
   * Adds rows `from` to `to` (inclusive), on an empty table, at the first
   * look-up or add (a restart from a checkpoint serves before it hashes a
   * million ids), then all at once, the table sized for them first.
   */
  addRowsLater(from: number, to: number): void {
    if (this.count > 0 || this.later !== undefined) throw new RangeError('addRowsLater is for an empty table')
    if (to >= from) this.later = { from, to }
  }

  private settle(): void {
    const later = this.later as { from: number; to: number }
    this.later = undefined
    this.addRows(later.from, later.to)
  }

  /** Adds rows `from` to `to` (inclusive) at once, the table sized for them first. */
  addRows(from: number, to: number): void {
    if (this.later !== undefined) this.settle()
    if (to < from) return
    const need = this.count + to - from + 1
    let size = this.slots.length
    while (need * 2 > size) size *= 2
    if (size !== this.slots.length) this.grow(size)
    for (let row = from; row <= to; row++) this.insert(this.slots, row)
    this.count = need
  }

  private insert(slots: Int32Array, row: number): void {
    const mask = slots.length - 1
    for (let s = this.records.head32(row - 1) & mask; ; s = (s + 1) & mask) {
      if (slots[s] === 0) {
        slots[s] = row
        return
      }
    }
  }

  private grow(size = this.slots.length * 2): void {
    const old = this.slots
    const slots = new Int32Array(size)
    for (const row of old) if (row !== 0) this.insert(slots, row)
    this.slots = slots
  }
}

export const uint16Column = (): NumberColumn<Uint16Array> => new NumberColumn(n => new Uint16Array(n))
