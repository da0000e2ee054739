// The board's rule for a faulty author: one that signed two different entries
// at one seq (a fork). After the fork point, replicas may hold different
// branches of its feed, and nothing can tell which is the real one; so what it
// wrote from the fork point on counts for nothing, on every replica: claims
// there hold nothing (its tasks become claimable), and its releases, dones,
// tasks, goals, reviews, integrations and test runs there are ignored. Below
// the fork point every branch holds the same entries, so those count
// everywhere.
//
// The cutoff is the fork point when a proof shows it exactly, else the lowest
// fork seq known (an upper bound of it). It only moves down, as better proofs
// arrive, and every replica ends with the same one: then every replica shows
// the same board, whichever branch it holds.
//
// A member the operator removed (core/operator membershipView) is cut the
// same way from the seq after the one the removal names, with two
// differences: its goal and operator entries still count (whether a removal
// counts is judged from those alone, so the cut never undoes itself, and
// they count for nothing from a member anyway while an operator governs),
// and the cut follows the operators' actions, which the log can change, so
// the entries it keeps out are held back to be folded again should it move.

import type { AnyBoardEntry } from './types.js'

/** The kinds a removal does not cut: what decides whether the removal counts. */
const UNCUT_BY_REMOVAL: ReadonlySet<string> = new Set(['goal', 'operator'])

export class FaultyAuthors {
  /** author -> the first seq that does not count */
  private readonly cutoffs = new Map<string, number>()
  /** entries folded so far, to fold again when a cutoff moves below one of them */
  private folded: AnyBoardEntry[] = []
  /** removed member -> the first seq that does not count (goal and operator entries aside) */
  private removals = new Map<string, number>()
  /** entries kept out by a removal alone, by id: folded again when the removals change */
  private heldBack = new Map<string, AnyBoardEntry>()

  /** Whether an entry counts: its author is not faulty, or it is below the author's cutoff. */
  counts(e: { author: string; seq: number }): boolean {
    const cutoff = this.cutoffs.get(e.author)
    return cutoff === undefined || e.seq < cutoff
  }

  /** Whether a removal keeps the entry out (it is held back, to fold again should the removals change). */
  holdsBack(e: AnyBoardEntry): boolean {
    const cutoff = this.removals.get(e.author)
    if (cutoff === undefined || e.seq < cutoff || UNCUT_BY_REMOVAL.has(e.kind)) return false
    this.heldBack.set(e.id, e)
    return true
  }

  /** Whether the operators removed `author`. */
  isRemoved(author: string): boolean {
    return this.removals.has(author)
  }

  hasRemovals(): boolean {
    return this.removals.size > 0
  }

  /** Whether `next` (member -> first seq cut) differs from the removals in force. */
  removalsDiffer(next: ReadonlyMap<string, number>): boolean {
    return next.size !== this.removals.size || [...next].some(([m, seq]) => this.removals.get(m) !== seq)
  }

  /**
   * The removals become `next`. Returns every entry to fold again from
   * scratch (folded or held back, fork cuts applied) when they changed;
   * undefined when they did not.
   */
  setRemovals(next: ReadonlyMap<string, number>): AnyBoardEntry[] | undefined {
    if (!this.removalsDiffer(next)) return undefined
    this.removals = new Map(next)
    const again = [...this.folded, ...this.heldBack.values()].filter(e => this.counts(e))
    this.folded = []
    this.heldBack = new Map()
    return again
  }

  /** The first seq of `author` that does not count, if it is faulty. */
  cutoff(author: string): number | undefined {
    return this.cutoffs.get(author)
  }

  /** Faulty authors with their cutoffs, sorted by author. */
  all(): Array<{ author: string; fromSeq: number }> {
    return [...this.cutoffs].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([author, fromSeq]) => ({ author, fromSeq }))
  }

  /** Whether mark(author, fromSeq) would move the author's cutoff down. */
  moves(author: string, fromSeq: number): boolean {
    if (!Number.isSafeInteger(fromSeq) || fromSeq < 1) return false
    const current = this.cutoffs.get(author)
    return current === undefined || current > fromSeq
  }

  /** Keeps entries folded in before every one kept so far (read back from the log after a checkpoint that left them out). */
  rememberEarlier(entries: readonly AnyBoardEntry[]): void {
    this.folded = [...entries, ...this.folded]
  }

  /** Keeps an entry that was folded in. */
  remember(e: AnyBoardEntry): void {
    this.folded.push(e)
  }

  /**
   * Entries of `author` from `fromSeq` on stop counting. Returns the entries
   * to fold again from scratch (every folded entry that still counts) when
   * something folded stops counting; undefined when nothing folded changes.
   */
  mark(author: string, fromSeq: number): AnyBoardEntry[] | undefined {
    if (!Number.isSafeInteger(fromSeq) || fromSeq < 1) return undefined
    const current = this.cutoffs.get(author)
    if (current !== undefined && current <= fromSeq) return undefined
    this.cutoffs.set(author, fromSeq)
    if (!this.folded.some(e => e.author === author && e.seq >= fromSeq)) return undefined
    const again = this.folded.filter(e => this.counts(e))
    this.folded = []
    return again
  }
}
