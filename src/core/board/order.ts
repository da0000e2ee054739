// The fold order of the shared record: (lamport, author). Two entries of one
// author never share a lamport when the log rules hold, but the board must be
// deterministic for any set of entries, so seq and id break the last ties.

export interface Ordered {
  id: string
  author: string
  seq: number
  lamport: number
}

/** Compares by (lamport, author, seq, id); strings by code unit, never by locale. */
export function compareOrder(a: Ordered, b: Ordered): number {
  if (a.lamport !== b.lamport) return a.lamport < b.lamport ? -1 : 1
  if (a.author !== b.author) return a.author < b.author ? -1 : 1
  if (a.seq !== b.seq) return a.seq < b.seq ? -1 : 1
  if (a.id !== b.id) return a.id < b.id ? -1 : 1
  return 0
}

/** Inserts into a list kept sorted by compareOrder (binary search). */
export function insertOrdered<T extends Ordered>(list: T[], item: T): void {
  let lo = 0
  let hi = list.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (compareOrder(list[mid], item) <= 0) lo = mid + 1
    else hi = mid
  }
  list.splice(lo, 0, item)
}

/** Code-unit string comparison, for sorting views deterministically. */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
