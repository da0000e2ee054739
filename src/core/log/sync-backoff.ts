// How often a replica starts an anti-entropy exchange. Gossip delivers nearly
// everything; anti-entropy repairs what it missed. While exchanges find the
// logs equal, each waits twice as long as the last, up to 8 × the configured
// interval; an exchange that moves entries (or an entry that arrives with a
// gap) brings the pace back. A swarm at rest then spends an eighth of the
// traffic on it, and one that is missing something repairs at full speed.

/** Quiet exchanges double the period at most this many times. */
export const MAX_SYNC_BACKOFF_DOUBLINGS = 3

export function syncPeriodMs(baseMs: number, quietRounds: number): number {
  return baseMs * 2 ** Math.min(Math.max(0, quietRounds), MAX_SYNC_BACKOFF_DOUBLINGS)
}
