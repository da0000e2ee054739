// Entries waiting for a gap in their author's seq to fill. Bounded per author,
// in total count and in total bytes; beyond a bound the oldest arrival goes
// first (anti-entropy fetches it again once the gap before it is filled).
import type { PendingEntry } from './ingest-result.js'

export interface PendingLimits {
  maxPerAuthor: number
  maxTotal: number
  maxBytes: number
}

export class PendingSet {
  private readonly limits: PendingLimits
  /** insertion order is arrival order: the first key is the oldest */
  private readonly byId = new Map<string, PendingEntry>()
  private readonly byAuthor = new Map<string, Map<number, PendingEntry>>()
  private bytes = 0
  /** entries dropped by the bounds, ever */
  dropped = 0

  constructor(limits: PendingLimits) {
    this.limits = limits
  }

  get size(): number {
    return this.byId.size
  }

  get totalBytes(): number {
    return this.bytes
  }

  has(id: string): boolean {
    return this.byId.has(id)
  }

  at(author: string, seq: number): PendingEntry | undefined {
    return this.byAuthor.get(author)?.get(seq)
  }

  countOf(author: string): number {
    return this.byAuthor.get(author)?.size ?? 0
  }

  /** All waiting entries, oldest arrival first. */
  entries(): PendingEntry[] {
    return [...this.byId.values()]
  }

  /**
   * Adds an entry (the caller has checked that its (author, seq) slot is free)
   * and returns the entries the bounds dropped to make room.
   */
  add(p: PendingEntry): PendingEntry[] {
    const { author, seq } = p.entry
    let feed = this.byAuthor.get(author)
    if (feed == null) {
      feed = new Map()
      this.byAuthor.set(author, feed)
    }
    feed.set(seq, p)
    this.byId.set(p.id, p)
    this.bytes += p.bytes.byteLength

    const dropped: PendingEntry[] = []
    while (feed.size > this.limits.maxPerAuthor) {
      dropped.push(this.dropOldestOf(author))
    }
    while (this.byId.size > this.limits.maxTotal || (this.bytes > this.limits.maxBytes && this.byId.size > 0)) {
      const oldest = this.byId.values().next().value as PendingEntry
      this.remove(oldest)
      dropped.push(oldest)
    }
    this.dropped += dropped.length
    return dropped
  }

  /** Removes and returns the entry at (author, seq). */
  take(author: string, seq: number): PendingEntry | undefined {
    const p = this.at(author, seq)
    if (p != null) this.remove(p)
    return p
  }

  private dropOldestOf(author: string): PendingEntry {
    // each author's map keeps insertion order too, so its first value is its oldest
    const oldest = this.byAuthor.get(author)?.values().next().value as PendingEntry
    this.remove(oldest)
    return oldest
  }

  private remove(p: PendingEntry): void {
    this.byId.delete(p.id)
    const feed = this.byAuthor.get(p.entry.author)
    feed?.delete(p.entry.seq)
    if (feed?.size === 0) this.byAuthor.delete(p.entry.author)
    this.bytes -= p.bytes.byteLength
  }
}
