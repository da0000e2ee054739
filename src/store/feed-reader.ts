// What a sync sender reads: the entries at given cursors, each author's in
// seq order, read from the store in windows of the cursor space instead of
// one look-up per entry (a LevelDB get per entry was most of a serving
// daemon's CPU in a bulk sync).
//
// The cursors come per author, ascending (LogState.cursorGroupsFor). A
// window is the next `window` cursors from the lowest one not sent yet;
// what the groups need in it is read at once (one range read where it is
// dense, else one multi-get), then sent author by author. Each author's
// entries stay in order (windows go up in cursor order), so the receiver
// never sees a gap; a batch mostly holds runs of few authors, so it checks
// few signatures (one per author per batch).
import { UnavailableError } from '../core/errors.js'

/** The reads the reader needs of the store. */
export interface CursorReads {
  /** the highest cursor on disk: what is above it is read from `unwritten` */
  lastWritten: () => number
  /** bytes of cursors from..to (inclusive, all on disk), in order */
  range: (from: number, to: number) => Promise<Uint8Array[]>
  /** bytes of each cursor (all on disk) */
  many: (cursors: readonly number[]) => Promise<Array<Uint8Array | undefined>>
  /** bytes of an entry accepted and maybe not written yet (read at once) */
  one: (cursor: number) => Uint8Array | undefined
}

/** Cursors in one window at most. */
export const READ_WINDOW = 8192
/** A window is read as one range when it needs at least one cursor in this many. */
const DENSE = 4

function ascending(cursors: readonly number[]): boolean {
  for (let i = 1; i < cursors.length; i++) if (cursors[i] <= cursors[i - 1]) return false
  return true
}

/**
 * The bytes at `groups`' cursors, each group's in its order, in chunks (an
 * author's entries in one window); throws UnavailableError for a cursor the
 * store does not hold.
 */
export async function* readFeeds(
  groups: ReadonlyArray<readonly number[]>,
  store: CursorReads,
  window = READ_WINDOW
): AsyncGenerator<Uint8Array[]> {
  const one = (c: number): Uint8Array => {
    const bytes = store.one(c)
    if (bytes === undefined) throw new UnavailableError(`the log has no entry at cursor ${c} on disk`)
    return bytes
  }
  // a group that is not ascending (none is, from LogState) is read entry by entry, at the end
  const odd = groups.filter(g => !ascending(g))
  const feeds = groups.filter(g => g.length > 0 && ascending(g))
  const pos = new Array<number>(feeds.length).fill(0)
  for (;;) {
    let lo = Number.POSITIVE_INFINITY
    for (let g = 0; g < feeds.length; g++) if (pos[g] < feeds[g].length && feeds[g][pos[g]] < lo) lo = feeds[g][pos[g]]
    if (lo === Number.POSITIVE_INFINITY) break
    const hi = lo + window
    const ends = new Array<number>(feeds.length)
    let needed = 0
    let max = lo
    for (let g = 0; g < feeds.length; g++) {
      const f = feeds[g]
      let e = pos[g]
      while (e < f.length && f[e] < hi) e++
      ends[g] = e
      needed += e - pos[g]
      if (e > pos[g] && f[e - 1] > max) max = f[e - 1]
    }
    const got = new Array<Uint8Array | undefined>(max - lo + 1)
    const onDisk = Math.min(max, store.lastWritten())
    if (onDisk >= lo) {
      if (needed * DENSE >= onDisk - lo + 1) {
        const bytes = await store.range(lo, onDisk)
        for (let i = 0; i < bytes.length; i++) got[i] = bytes[i]
      } else {
        const cursors: number[] = []
        for (let g = 0; g < feeds.length; g++) for (let i = pos[g]; i < ends[g] && feeds[g][i] <= onDisk; i++) cursors.push(feeds[g][i])
        const bytes = await store.many(cursors)
        for (let i = 0; i < cursors.length; i++) got[cursors[i] - lo] = bytes[i]
      }
    }
    for (let g = 0; g < feeds.length; g++) {
      const f = feeds[g]
      if (ends[g] === pos[g]) continue
      const chunk: Uint8Array[] = []
      for (let i = pos[g]; i < ends[g]; i++) chunk.push(got[f[i] - lo] ?? one(f[i]))
      pos[g] = ends[g]
      yield chunk
    }
  }
  for (const g of odd) yield g.map(one)
}
