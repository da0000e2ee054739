// How often a daemon sends its heartbeat, and how long a receiver waits for
// the next one. Every heartbeat goes to the whole swarm, so with a fixed
// interval each daemon would receive N / interval heartbeats a second: 512 a
// second at 1024 daemons and 2 s. Instead the interval grows with the number
// of live peers so that each daemon receives at most `maxRatePerSecond`, and
// every heartbeat says when the next is due; the receiver scales its timeout
// for that peer by the same factor as its own timeout to its own interval.
// Liveness (and so every lease) then costs the same per daemon at any swarm
// size, and a lease takes longer to expire in a bigger swarm.

export interface HeartbeatPolicy {
  /** the shortest interval: the configured --heartbeat-ms */
  baseMs: number
  /** a peer silent this long is not live, at the base interval: the configured --live-timeout-ms */
  liveTimeoutMs: number
  /** heartbeats per second a daemon may receive from the whole swarm */
  maxRatePerSecond: number
  /** the interval never grows beyond this, however big the swarm */
  maxIntervalMs: number
}

export const HEARTBEAT_POLICY_DEFAULTS = { maxRatePerSecond: 16, maxIntervalMs: 120_000 } as const

/** The policy for agentd's --heartbeat-ms, --live-timeout-ms and --heartbeat-max-rate. */
export function heartbeatPolicy(baseMs: number, liveTimeoutMs: number, maxRatePerSecond?: number): HeartbeatPolicy {
  return {
    baseMs,
    liveTimeoutMs,
    maxRatePerSecond: maxRatePerSecond ?? HEARTBEAT_POLICY_DEFAULTS.maxRatePerSecond,
    maxIntervalMs: HEARTBEAT_POLICY_DEFAULTS.maxIntervalMs
  }
}

/** The interval to use with `livePeers` other live daemons. */
export function heartbeatIntervalMs(livePeers: number, p: HeartbeatPolicy): number {
  const wanted = Math.ceil((Math.max(0, livePeers) * 1000) / p.maxRatePerSecond)
  return Math.max(p.baseMs, Math.min(wanted, p.maxIntervalMs))
}

/**
 * How long to wait for a peer that announced `intervalMs` until its next
 * heartbeat. A peer that announces nothing (or less than the base) gets the
 * configured timeout; an announcement beyond the largest interval counts as
 * the largest, so no peer can make itself live for hours.
 */
export function liveTimeoutForMs(intervalMs: number, p: HeartbeatPolicy): number {
  if (!(intervalMs > p.baseMs)) return p.liveTimeoutMs
  const interval = Math.min(intervalMs, Math.max(p.baseMs, p.maxIntervalMs))
  return Math.ceil((p.liveTimeoutMs * interval) / p.baseMs)
}

/** A quiet daemon's interval doubles at most this many times (8 ×). */
export const MAX_QUIET_DOUBLINGS = 3

/**
 * The interval of a daemon that holds no claim and whose heartbeat has said
 * the same for `quietBeats` beats in a row: its interval for the swarm's
 * size, doubled per quiet beat up to 8 ×, never beyond the largest interval.
 * Its peers then hear from it an eighth as often and wait eight times as long
 * (liveTimeoutForMs scales with the interval it announces). A holder always
 * beats at the swarm's interval, since its heartbeats carry its leases, and a
 * daemon with something new to say beats at once.
 */
export function quietIntervalMs(intervalMs: number, quietBeats: number, p: HeartbeatPolicy): number {
  const doublings = Math.min(Math.max(0, Math.floor(quietBeats)), MAX_QUIET_DOUBLINGS)
  return Math.max(intervalMs, Math.min(intervalMs * 2 ** doublings, p.maxIntervalMs))
}
