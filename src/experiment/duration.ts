// Durations as people write them on a command line: 6h, 20m, 90s, 1h30m, 500ms.
import { InvalidArgumentError } from '../core/errors.js'

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3600_000, d: 86_400_000 }

/** Milliseconds; `what` names the flag in the error. Refuses 0, negatives and bare numbers. */
export function parseDuration(text: string, what: string): number {
  const s = text.trim()
  if (/^\d+(\.\d+)?$/.test(s) && Number(s) === 0) throw new InvalidArgumentError(`${what} must be more than 0: give how long, e.g. 20m`)
  const parts = [...s.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g)]
  if (s === '' || parts.map(p => p[0]).join('') !== s) {
    throw new InvalidArgumentError(`${what} ${JSON.stringify(text)} is not a duration: write it with a unit, e.g. 6h, 20m, 90s or 1h30m`)
  }
  const ms = parts.reduce((sum, p) => sum + Number(p[1]) * UNITS[p[2]], 0)
  if (!(ms > 0)) throw new InvalidArgumentError(`${what} must be more than 0 (got ${JSON.stringify(text)}): give how long, e.g. 20m`)
  return Math.round(ms)
}

/** 90_000 -> "1m30s", 7_200_000 -> "2h" */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`
  let rest = Math.round(ms / 1000)
  const out: string[] = []
  for (const [unit, size] of [
    ['h', 3600],
    ['m', 60],
    ['s', 1]
  ] as const) {
    const n = Math.floor(rest / size)
    if (n > 0) out.push(`${n}${unit}`)
    rest -= n * size
  }
  return out.join('')
}
