// Fork proofs and the authors they make faulty. Proofs are bounded per author:
// one proves the fault, a few help diagnosis, more would let a faulty author
// grow our memory without end.
import type { Entry } from '../../gen/agency/v1/log.js'
import type { ForkProof } from './fork.js'
import { MAX_FORK_PROOFS_PER_AUTHOR } from './limits.js'

export class ForkRegistry {
  private readonly proofs = new Map<string, ForkProof>()
  private readonly keptPerAuthor = new Map<string, number>()
  private readonly faulty = new Set<string>()

  /** Marks the author of `a` and `b` faulty; returns the proof when it is newly kept. */
  record (a: Entry, b: Entry): ForkProof | undefined {
    this.faulty.add(a.author)
    const key = `${a.author}\n${a.seq}`
    const kept = this.keptPerAuthor.get(a.author) ?? 0
    if (this.proofs.has(key) || kept >= MAX_FORK_PROOFS_PER_AUTHOR) return undefined
    const proof: ForkProof = { author: a.author, seq: a.seq, a, b }
    this.proofs.set(key, proof)
    this.keptPerAuthor.set(a.author, kept + 1)
    return proof
  }

  all (): ForkProof[] {
    return [...this.proofs.values()]
  }

  faultyAuthors (): Set<string> {
    return new Set(this.faulty)
  }

  isFaulty (author: string): boolean {
    return this.faulty.has(author)
  }
}
