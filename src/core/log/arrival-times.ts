// When this replica took in its most recent entries, by cursor: the API's
// accepted_at (in `agency log --json`; the mesh benchmark's time at every
// peer), without a field on every held entry. A ring of the last `capacity`
// cursors; older ones, and those taken in before this start (restored from
// disk), are unknown.

export class ArrivalTimes {
  private readonly cursors: Float64Array
  private readonly times: Float64Array

  constructor(readonly capacity = 8192) {
    if (!Number.isSafeInteger(capacity) || capacity < 1) throw new RangeError('an arrival ring holds at least one entry')
    this.cursors = new Float64Array(capacity)
    this.times = new Float64Array(capacity)
  }

  /** Entries at these cursors were taken in at `at` (ms since the epoch). */
  note(cursors: Iterable<number>, at: number): void {
    for (const c of cursors) {
      const i = c % this.capacity
      this.cursors[i] = c
      this.times[i] = at
    }
  }

  /** When the entry at `cursor` was taken in (ms since the epoch), or 0 if that is not known. */
  at(cursor: number): number {
    const i = cursor % this.capacity
    return this.cursors[i] === cursor && cursor > 0 ? this.times[i] : 0
  }
}
