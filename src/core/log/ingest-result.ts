// What the log core hands back when entries come in: what was accepted (and
// must be stored), what waits, what was refused and why.
import type { Entry } from '../../gen/agency/v1/log.js'
import type { ForkProof } from './fork.js'

/** An accepted entry as the log holds it. */
export interface StoredEntry {
  /** hex sha256 of `bytes` */
  id: string
  entry: Entry
  /** the canonical encoding */
  bytes: Uint8Array
  /** position in this replica's arrival order, from 1; local, never on the wire */
  cursor: number
}

/** An entry that passed every check except that its predecessor is missing. */
export interface PendingEntry {
  id: string
  entry: Entry
  bytes: Uint8Array
  /** the id's 32 bytes, when the caller hashed to them (bulk sync): spares turning the hex back into bytes */
  digest?: Uint8Array
}

export type RejectReason =
  | 'bad_signature' // the key that `author` names did not sign these fields
  | 'too_large' // canonical encoding over MAX_ENTRY_BYTES
  | 'unknown_kind'
  | 'bad_body' // the body does not decode as its kind's message
  | 'bad_prev' // does not extend the author's feed: prev is not the id at seq-1, or lamport does not grow
  | 'fork' // a second, different entry at an (author, seq) already held
  | 'malformed' // bad bytes, seq 0, lamport 0, wrong prev length

export const REJECT_REASONS: readonly RejectReason[] = [
  'bad_signature',
  'too_large',
  'unknown_kind',
  'bad_body',
  'bad_prev',
  'fork',
  'malformed'
]

/**
 * Every result carries the pending-set changes it caused, so that a store can
 * mirror the pending set: `pendingRemoved` lists entries that left it
 * (accepted, refused once their gap filled, or dropped by the bounds).
 */
export type IngestResult =
  | { status: 'accepted'; id: string; accepted: StoredEntry[]; pendingRemoved: PendingEntry[] }
  | { status: 'duplicate'; id: string }
  | { status: 'pending'; id: string; pending: PendingEntry; pendingRemoved: PendingEntry[] }
  | { status: 'rejected'; id: string | null; reason: RejectReason; proof?: ForkProof }

export interface BatchResult {
  /** newly accepted entries, each author's in seq order */
  accepted: StoredEntry[]
  duplicates: number
  rejected: Partial<Record<RejectReason, number>>
  /** fork proofs first kept during this batch */
  forks: ForkProof[]
  /** entries that entered the pending set and are still in it */
  pendingAdded: PendingEntry[]
  /** entries that were in the pending set before the batch and left it */
  pendingRemoved: PendingEntry[]
}
