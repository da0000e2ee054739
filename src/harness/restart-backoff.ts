// How long to wait before restarting a harness that exited: doubling from
// `minMs` with each quick exit in a row, capped at `maxMs`. A harness that
// crashes at once is not restarted in a tight loop; one that ran a long
// session and exited is restarted promptly (the caller resets `attempt`).

/** Delay before restart number `attempt` (1-based) of a run of quick exits. */
export function restartDelayMs(attempt: number, minMs: number, maxMs: number): number {
  if (attempt <= 1) return Math.min(minMs, maxMs)
  return Math.min(maxMs, minMs * 2 ** Math.min(attempt - 1, 52))
}
