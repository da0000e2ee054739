// The accepted part of the log: every valid entry once, by id, by
// (author, seq) and by arrival cursor, with the deterministic total order.
// It checks nothing; LogState decides what comes in.
import type { PendingEntry, StoredEntry } from './ingest-result.js'
import type { PreparedRestore } from './restore.js'
import { compareStrings, type VersionVector } from './version-vector.js'

/** The deterministic total order: (lamport, author, seq). */
export function compareStored (x: StoredEntry, y: StoredEntry): number {
  return (x.entry.lamport - y.entry.lamport) ||
    compareStrings(x.entry.author, y.entry.author) ||
    (x.entry.seq - y.entry.seq)
}

export class AcceptedEntries {
  private readonly byId = new Map<string, StoredEntry>()
  /** each author's entries; index seq-1, always whole from seq 1 */
  private readonly feeds = new Map<string, StoredEntry[]>()
  /** in cursor order */
  private readonly arrivals: StoredEntry[] = []
  private readonly kindCounts = new Map<string, number>()
  private orderedCache: StoredEntry[] | null = []
  private maxLamport = 0
  private lastCursor = 0

  /** Appends `p` to its author's feed with the next cursor. */
  add (p: PendingEntry): StoredEntry {
    const stored: StoredEntry = { id: p.id, entry: p.entry, bytes: p.bytes, cursor: ++this.lastCursor }
    this.byId.set(stored.id, stored)
    const feed = this.feeds.get(stored.entry.author)
    if (feed == null) this.feeds.set(stored.entry.author, [stored])
    else feed.push(stored)
    this.arrivals.push(stored)
    this.count(stored)
    // keep the ordered view when the new entry sorts last, the common case
    const cache = this.orderedCache
    if (cache != null) {
      if (cache.length === 0 || compareStored(cache[cache.length - 1], stored) < 0) cache.push(stored)
      else this.orderedCache = null
    }
    return stored
  }

  /** Takes in a validated restore; only on an empty set. */
  load ({ arrivals, feeds }: PreparedRestore): void {
    for (const s of arrivals) {
      this.byId.set(s.id, s)
      this.arrivals.push(s)
      this.count(s)
    }
    for (const [author, feed] of feeds) this.feeds.set(author, feed)
    this.lastCursor = arrivals.at(-1)?.cursor ?? 0
    this.orderedCache = null
  }

  private count (s: StoredEntry): void {
    if (s.entry.lamport > this.maxLamport) this.maxLamport = s.entry.lamport
    this.kindCounts.set(s.entry.kind, (this.kindCounts.get(s.entry.kind) ?? 0) + 1)
  }

  has (id: string): boolean {
    return this.byId.has(id)
  }

  get (id: string): StoredEntry | undefined {
    return this.byId.get(id)
  }

  byAuthorSeq (author: string, seq: number): StoredEntry | undefined {
    return this.feeds.get(author)?.[seq - 1]
  }

  /** The author's last entry. */
  last (author: string): StoredEntry | undefined {
    return this.feeds.get(author)?.at(-1)
  }

  /** The author's highest seq held (0 for none). */
  held (author: string): number {
    return this.feeds.get(author)?.length ?? 0
  }

  vector (): Map<string, number> {
    const v = new Map<string, number>()
    for (const [author, feed] of this.feeds) v.set(author, feed.length)
    return v
  }

  entriesAfter (remote: VersionVector, limit: number): StoredEntry[] {
    const out: StoredEntry[] = []
    for (const author of this.authors()) {
      const feed = this.feeds.get(author) as StoredEntry[]
      for (let i = Math.max(0, remote.get(author) ?? 0); i < feed.length; i++) {
        if (out.length >= limit) return out
        out.push(feed[i])
      }
    }
    return out
  }

  afterCursor (cursor: number, limit: number): StoredEntry[] {
    let lo = 0
    let hi = this.arrivals.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.arrivals[mid].cursor <= cursor) lo = mid + 1
      else hi = mid
    }
    return this.arrivals.slice(lo, lo + Math.min(limit, this.arrivals.length))
  }

  ordered (): readonly StoredEntry[] {
    this.orderedCache ??= [...this.byId.values()].sort(compareStored)
    return this.orderedCache
  }

  authors (): string[] {
    return [...this.feeds.keys()].sort(compareStrings)
  }

  countsByKind (): Map<string, number> {
    return new Map(this.kindCounts)
  }

  /** Authors with at least one entry. */
  get authorCount (): number {
    return this.feeds.size
  }

  get size (): number {
    return this.byId.size
  }

  get lamport (): number {
    return this.maxLamport
  }

  get cursor (): number {
    return this.lastCursor
  }
}
