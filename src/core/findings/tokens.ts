// How findings' text, paths and tags become search terms, and query words
// too: split on whitespace and punctuation (so `src/mesh/sync-protocol.ts` is
// src, mesh, sync, protocol, ts), lower-cased.

const SPACE_OR_PUNCTUATION = /[\n\r\p{Z}\p{P}]+/u

/** The terms of a text, in order, repeats kept. */
export function tokenize (text: string): string[] {
  const out: string[] = []
  for (const t of text.split(SPACE_OR_PUNCTUATION)) if (t !== '') out.push(t.toLowerCase())
  return out
}

/**
 * Levenshtein distance between `a` and `b` when it is at most `max`, else
 * max + 1 (stops at the first row of the table that is all over `max`).
 */
export function boundedDistance (a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1
  const n = b.length
  let prev = new Array<number>(n + 1)
  let cur = new Array<number>(n + 1)
  for (let j = 0; j <= n; j++) prev[j] = j
  for (let i = 1; i <= a.length; i++) {
    cur[0] = i
    let best = i
    const ca = a.charCodeAt(i - 1)
    for (let j = 1; j <= n; j++) {
      const v = Math.min(prev[j - 1] + (ca === b.charCodeAt(j - 1) ? 0 : 1), prev[j] + 1, cur[j - 1] + 1)
      cur[j] = v
      if (v < best) best = v
    }
    if (best > max) return max + 1
    const t = prev
    prev = cur
    cur = t
  }
  return Math.min(prev[n], max + 1)
}
