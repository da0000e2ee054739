// The log core's bounds, in one place. They are part of validation, so every
// peer must use the same MAX_ENTRY_BYTES; the pending bounds are local policy.

/** Largest canonical encoding of one entry, signature included. */
export const MAX_ENTRY_BYTES = 64 * 1024

/** Entries of one author that may wait for a seq gap to fill. */
export const MAX_PENDING_PER_AUTHOR = 256

/** Entries of all authors that may wait for a gap to fill. */
export const MAX_PENDING_TOTAL = 4096

/** Bytes of all waiting entries together. */
export const MAX_PENDING_BYTES = 32 * 1024 * 1024

/** Fork proofs kept per author: one proves the fault, a few help diagnosis. */
export const MAX_FORK_PROOFS_PER_AUTHOR = 8

/** Length of an entry id (sha256). */
export const ENTRY_ID_BYTES = 32

/** Authors whose divergence one anti-entropy exchange works on, at most (a peer's heads cannot make us send more). */
export const MAX_DIVERGENT_AUTHORS_PER_EXCHANGE = 4

/** Entries of one author sent to narrow down a fork point in one exchange, at most. */
export const MAX_DIVERGENCE_RANGE = 1024

/** Fork proofs sent or taken in one anti-entropy exchange, at most. */
export const MAX_FORK_PROOFS_PER_EXCHANGE = 16
