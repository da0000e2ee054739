// Waiting between push attempts. Random jitter spreads agents that lost the
// same race, so the retry does not become the next collision. The window is
// scaled by how long one attempt (fetch, merge, verify, push) took: agents
// only collide when their attempts overlap, so spreading them over a few
// attempt-lengths is what separates them.

/** Milliseconds to wait before retry number `retry` (1-based), given the last attempt's duration. */
export type Jitter = (retry: number, lastAttemptMs: number) => number

export const MAX_JITTER_MS = 5_000

/** Full jitter over an exponential window of attempt-lengths: 0..min(5 s, attempt * 2^retry). */
export const defaultJitter: Jitter = (retry, lastAttemptMs) =>
  Math.random() * Math.min(MAX_JITTER_MS, Math.max(50, lastAttemptMs) * 2 ** retry)

export async function sleep(ms: number): Promise<void> {
  if (!(ms > 0)) return
  await new Promise<void>(resolve => setTimeout(resolve, ms))
}
