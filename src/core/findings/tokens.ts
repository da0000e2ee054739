// How findings' text, paths and tags become search terms, and query words
// too: split on whitespace and punctuation (so `src/mesh/sync-protocol.ts` is
// src, mesh, sync, protocol, ts), lower-cased.

const SPACE_OR_PUNCTUATION = /[\n\r\p{Z}\p{P}]+/u

/** Per ASCII code: 1 where SPACE_OR_PUNCTUATION matches it (\n, \r, space and the ASCII punctuation of \p{P}). */
const ASCII_SEPARATOR = new Uint8Array(128)
for (let c = 0; c < 128; c++) if (SPACE_OR_PUNCTUATION.test(String.fromCharCode(c))) ASCII_SEPARATOR[c] = 1

/** The terms of a text, in order, repeats kept. */
export function tokenize(text: string): string[] {
  const out: string[] = []
  // ASCII text (most of it) without the regular expression; the same terms
  let start = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c >= 128) return tokenizeUnicode(text)
    if (ASCII_SEPARATOR[c] === 1) {
      if (i > start) out.push(text.slice(start, i).toLowerCase())
      start = i + 1
    }
  }
  if (text.length > start) out.push(text.slice(start).toLowerCase())
  return out
}

/**
 * The terms of an ASCII text as [start, end) pairs into `out` (cleared
 * first), the terms `tokenize` gives once lower-cased; false, with `out`
 * undefined, when the text is not all ASCII (then use tokenize).
 */
export function asciiTermBounds(text: string, out: number[]): boolean {
  out.length = 0
  let start = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c >= 128) return false
    if (ASCII_SEPARATOR[c] === 1) {
      if (i > start) out.push(start, i)
      start = i + 1
    }
  }
  if (text.length > start) out.push(start, text.length)
  return true
}

function tokenizeUnicode(text: string): string[] {
  const out: string[] = []
  for (const t of text.split(SPACE_OR_PUNCTUATION)) if (t !== '') out.push(t.toLowerCase())
  return out
}

/**
 * Levenshtein distance between `a` and `b` when it is at most `max`, else
 * max + 1 (stops at the first row of the table that is all over `max`).
 */
export function boundedDistance(a: string, b: string, max: number): number {
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
