// Folds the outcomes of one ingestBatch call into a BatchResult.
import type { ForkProof } from './fork.js'
import type { BatchResult, IngestResult, PendingEntry, RejectReason, StoredEntry } from './ingest-result.js'

export class BatchCollector {
  readonly accepted: StoredEntry[] = []
  readonly forks: ForkProof[] = []
  readonly pendingAdded: PendingEntry[] = []
  readonly pendingRemoved: PendingEntry[] = []
  private duplicates = 0
  private readonly rejected: Partial<Record<RejectReason, number>> = {}

  duplicate(): void {
    this.duplicates++
  }

  reject(reason: RejectReason, proof?: ForkProof): void {
    this.rejected[reason] = (this.rejected[reason] ?? 0) + 1
    if (proof != null) this.forks.push(proof)
  }

  add(r: IngestResult): void {
    switch (r.status) {
      case 'accepted':
        this.accepted.push(...r.accepted)
        this.pendingRemoved.push(...r.pendingRemoved)
        break
      case 'duplicate':
        this.duplicate()
        break
      case 'pending':
        this.pendingAdded.push(r.pending)
        this.pendingRemoved.push(...r.pendingRemoved)
        break
      case 'rejected':
        this.reject(r.reason, r.proof)
        break
    }
  }

  /** The net pending-set change: an entry that came and went within the batch is in neither list. */
  result(stillPending: (id: string) => boolean): BatchResult {
    const added = new Set(this.pendingAdded.map(p => p.id))
    return {
      accepted: this.accepted,
      duplicates: this.duplicates,
      rejected: this.rejected,
      forks: this.forks,
      pendingAdded: this.pendingAdded.filter(p => stillPending(p.id)),
      pendingRemoved: this.pendingRemoved.filter(p => !added.has(p.id))
    }
  }
}
