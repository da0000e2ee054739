// A run that ended on a provider's limit rather than on its own fault. Two
// kinds: a transient limit (HTTP 429 "too many requests", 529 or 503
// "overloaded"), over in seconds or minutes, and an exhausted quota (a plan's
// usage window, a billing quota), over only at its reset time or when someone
// pays: the operator is told of the second.
//
// Each CLI words its own limits (see its reader); the wordings below are the
// ones they share, from the providers' own error bodies.

export type RateLimitKind = 'transient' | 'quota'

export interface RateLimitSignal {
  kind: RateLimitKind
  /** when the limit ends, ms since the epoch, when the output said (Retry-After, "resets at"); else null */
  until: number | null
  /** the line that said so, for the operator */
  message: string
}

/** How long a hold lasts when the output gave no time: a transient limit, an exhausted quota. */
export const DEFAULT_HOLD_MS: Readonly<Record<RateLimitKind, number>> = { transient: 60_000, quota: 60 * 60_000 }

const QUOTA = [
  /insufficient_quota/i,
  /quota exceeded/i,
  /exceeded your current quota/i,
  /you'?ve (hit|reached) your (\w+ )*limit/i,
  /usage limit (reached|exceeded)/i,
  /out of (usage )?credits/i,
  /monthly spend limit/i,
  /RESOURCE_EXHAUSTED.*quota/i,
  /quota.*(exhausted|exceeded)/i
]

const TRANSIENT = [
  /\b429\b/,
  /too many requests/i,
  /rate[_ -]?limit/i,
  /\b529\b/,
  /overloaded/i,
  /temporarily limiting requests/i,
  /RESOURCE_EXHAUSTED/,
  /\b503\b.*unavailable/i
]

/**
 * The limit a line of output names, if any. `now` is the reader's clock (ms),
 * to turn "retry after 7s" into a time.
 */
export function rateLimitInLine(line: string, now: number): RateLimitSignal | null {
  const text = line.trim()
  if (text === '' || text.length > 4000) return null
  const kind: RateLimitKind | null = QUOTA.some(r => r.test(text)) ? 'quota' : TRANSIENT.some(r => r.test(text)) ? 'transient' : null
  if (kind == null) return null
  return { kind, until: untilIn(text, now), message: text.slice(0, 300) }
}

/** The last limit named anywhere in `lines` (a run's last word on it is the one that ended it). */
export function lastRateLimit(lines: readonly string[], now: number): RateLimitSignal | null {
  for (let i = lines.length - 1; i >= 0; i--) {
    const s = rateLimitInLine(lines[i], now)
    if (s != null) return s
  }
  return null
}

/**
 * A time in a limit message: "Retry-After: 7", "retry after 7s", "try again in
 * 1m30s", "retryDelay": "12s", "resets at <ISO time>" or a Unix time after a "|".
 */
export function untilIn(text: string, now: number): number | null {
  const after =
    /retry[- ]?after["':\s]*(\d+(?:\.\d+)?)\s*(ms|s|sec|seconds?)?\b/i.exec(text) ??
    /try again in\s+((?:\d+(?:\.\d+)?\s*[hms]\s*)+)/i.exec(text) ??
    /retryDelay["':\s]*"?(\d+(?:\.\d+)?)s/i.exec(text)
  if (after != null) {
    const ms = durationMs(after[1], after[2])
    if (ms != null) return now + ms
  }
  const iso = /resets?(?: at)?:?\s+(\d{4}-\d\d-\d\dT[\d:.]+Z)/i.exec(text)
  if (iso != null) {
    const t = Date.parse(iso[1])
    if (Number.isFinite(t)) return t
  }
  const unix = /\|(\d{10})\b/.exec(text)
  if (unix != null) return Number(unix[1]) * 1000
  return null
}

function durationMs(amount: string, unit: string | undefined): number | null {
  if (/^[\d.]+$/.test(amount.trim())) {
    const n = Number(amount)
    if (!Number.isFinite(n)) return null
    return Math.round(unit === 'ms' ? n : n * 1000)
  }
  let total = 0
  for (const m of amount.matchAll(/(\d+(?:\.\d+)?)\s*([hms])/g))
    total += Number(m[1]) * (m[2] === 'h' ? 3_600_000 : m[2] === 'm' ? 60_000 : 1000)
  return total > 0 ? Math.round(total) : null
}
