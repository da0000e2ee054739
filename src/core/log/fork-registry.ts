// Fork proofs and the authors they make faulty. Proofs are bounded per author:
// one proves the fault, a few help diagnosis, more would let a faulty author
// grow our memory without end. The ones kept are those at the lowest seqs,
// because the lowest is what views need: the fork point.
//
// The fork point of an author is the first seq at which two of its entries
// differ. Below it, every branch holds the same entries, so every replica,
// whichever branch it holds, can agree on them. A proof whose two entries have
// the same prev (both extend the same entry, or both are seq 1) shows the fork
// point exactly; any other proof bounds it from above.
import type { Entry } from '../../gen/agency/v1/log.js'
import type { ForkProof } from './fork.js'
import { MAX_FORK_PROOFS_PER_AUTHOR } from './limits.js'

/** Where an author's branches part, as far as this replica knows. */
export interface ForkPoint {
  /** the lowest seq of a proof held: the fork point, or (not exact) an upper bound of it */
  seq: number
  /** the proof at `seq` shows the fork point itself (its entries share a prev) */
  exact: boolean
}

/** True when the two entries of a proof extend the same entry: their seq is the fork point. */
export function isForkPointProof(p: ForkProof): boolean {
  return Buffer.compare(Buffer.from(p.a.prev), Buffer.from(p.b.prev)) === 0
}

export class ForkRegistry {
  /** per author, sorted by seq, at most MAX_FORK_PROOFS_PER_AUTHOR */
  private readonly proofs = new Map<string, ForkProof[]>()
  private readonly faulty = new Set<string>()

  /** Marks the author of `a` and `b` faulty; returns the proof when it is newly kept. */
  record(a: Entry, b: Entry): ForkProof | undefined {
    this.faulty.add(a.author)
    const list = this.proofs.get(a.author) ?? []
    if (list.some(p => p.seq === a.seq)) return undefined
    if (list.length >= MAX_FORK_PROOFS_PER_AUTHOR && a.seq > list[list.length - 1].seq) return undefined
    const proof: ForkProof = { author: a.author, seq: a.seq, a, b }
    list.push(proof)
    list.sort((x, y) => x.seq - y.seq)
    if (list.length > MAX_FORK_PROOFS_PER_AUTHOR) list.pop()
    this.proofs.set(a.author, list)
    return proof
  }

  all(): ForkProof[] {
    return [...this.proofs.values()].flat()
  }

  /** The proof at the author's lowest known fork seq. */
  lowest(author: string): ForkProof | undefined {
    return this.proofs.get(author)?.[0]
  }

  forkPoint(author: string): ForkPoint | undefined {
    const p = this.lowest(author)
    return p === undefined ? undefined : { seq: p.seq, exact: isForkPointProof(p) }
  }

  faultyAuthors(): Set<string> {
    return new Set(this.faulty)
  }

  isFaulty(author: string): boolean {
    return this.faulty.has(author)
  }
}
