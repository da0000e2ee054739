// Durations on the command line: "90s", "30m", "6h", "1d", "500ms", or a bare number of milliseconds.
const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3600_000, d: 86_400_000 }

export function parseDuration(flag: string, text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(text)
  if (m == null) throw new Error(`${flag} must be a duration such as 90s, 30m or 6h, got "${text}"`)
  return Math.round(Number(m[1]) * UNITS[m[2] ?? 'ms'])
}

/** A commander argParser for a duration flag. */
export function durationFlag(flag: string): (text: string) => number {
  return (text: string) => parseDuration(flag, text)
}
