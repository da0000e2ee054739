// Do two globs share a path? Decided segment by segment over the parsed globs
// (see glob-pattern.ts): '**' may absorb any number of segments, and two
// segment patterns intersect when some string matches both (a product of the
// two patterns, with '*' absorbing characters). Exact for literals, '?', '*'
// and [ranges]; negated/POSIX classes and extglobs err towards "they overlap".

import type { CharToken, ParsedGlob, Segment } from './glob-pattern.js'
import { parseGlob } from './glob-pattern.js'

/**
 * True when some path matches both globs. Throws InvalidArgumentError when
 * either glob is malformed.
 */
export function globsIntersect (a: string, b: string): boolean {
  return parsedIntersect(compile(a, false), compile(b, false))
}

/**
 * Scope semantics: an entry that names a directory covers everything under
 * it (`src/core` covers `src/core/log/x.ts`). An entry names a directory when
 * it ends with '/', or when its last segment is a literal without a '.'
 * (`src/core`, not `src/x.ts`, `src/*`, `Makefile.am`): a string alone cannot
 * tell a file from a directory, and treating every file as a directory would
 * make any '**'-then-'*.md' pattern overlap every file. Returns each pair of
 * entries, one from each side, that share a path. Malformed entries (which a
 * peer may have written) match nothing here.
 */
export function scopesOverlap (a: readonly string[], b: readonly string[]): Array<[string, string]> {
  const pairs: Array<[string, string]> = []
  for (const ga of a) {
    const pa = compileSafe(ga)
    if (pa === undefined) continue
    for (const gb of b) {
      const pb = compileSafe(gb)
      if (pb !== undefined && parsedIntersect(pa, pb)) pairs.push([ga, gb])
    }
  }
  return pairs
}

const MAX_CACHE = 4096
const cache = new Map<string, ParsedGlob>()

function compile (glob: string, subtree: boolean): ParsedGlob {
  const key = (subtree ? 's:' : 'g:') + glob
  const hit = cache.get(key)
  if (hit !== undefined) return hit
  const parsed = parseGlob(glob)
  const result = subtree ? withSubtree(parsed, glob.endsWith('/')) : parsed
  if (cache.size >= MAX_CACHE) cache.clear()
  cache.set(key, result)
  return result
}

function compileSafe (glob: string): ParsedGlob | undefined {
  try {
    return compile(glob, true)
  } catch {
    return undefined
  }
}

function withSubtree (g: ParsedGlob, slash: boolean): ParsedGlob {
  return {
    source: g.source,
    alternatives: g.alternatives.map(segs => slash || namesDirectory(segs.at(-1)) ? [...segs, { kind: 'globstar' }] : segs)
  }
}

const DOT = '.'.charCodeAt(0)

function namesDirectory (last: Segment | undefined): boolean {
  return last?.kind === 'part' && last.tokens.every(t => t.t === 'lit' && t.c !== DOT)
}

function parsedIntersect (a: ParsedGlob, b: ParsedGlob): boolean {
  return a.alternatives.some(sa => b.alternatives.some(sb => segmentsIntersect(sa, sb)))
}

/**
 * The shared shape of both products: `wild(x)` is a '*' (or '**') that may
 * absorb any number of the other side's units, `step(x, y)` says whether two
 * single units can match the same thing. State (i, j) = "A[i..] and B[j..]
 * share a match"; when both sides are wild at (i, j), one of them ends first,
 * so trying "A's ends here" and "B's ends here" is complete.
 */
function product<T> (a: readonly T[], b: readonly T[], wild: (x: T) => boolean, step: (x: T, y: T) => boolean): boolean {
  const memo = new Map<number, boolean>()
  const width = b.length + 1
  const go = (i: number, j: number): boolean => {
    if (i === a.length && j === b.length) return true
    const key = i * width + j
    const known = memo.get(key)
    if (known !== undefined) return known
    let result = false
    if (i < a.length && wild(a[i])) {
      result = go(i + 1, j) || (j < b.length && go(i, j + 1))
    } else if (j < b.length && wild(b[j])) {
      result = go(i, j + 1) || (i < a.length && go(i + 1, j))
    } else if (i < a.length && j < b.length) {
      result = step(a[i], b[j]) && go(i + 1, j + 1)
    }
    memo.set(key, result)
    return result
  }
  return go(0, 0)
}

function segmentsIntersect (a: readonly Segment[], b: readonly Segment[]): boolean {
  return product(a, b, s => s.kind === 'globstar', (x, y) =>
    x.kind === 'part' && y.kind === 'part' && partsIntersect(x.tokens, y.tokens))
}

function partsIntersect (a: readonly CharToken[], b: readonly CharToken[]): boolean {
  return product(a, b, t => t.t === 'star', charsIntersect)
}

function charsIntersect (x: CharToken, y: CharToken): boolean {
  if (x.t === 'any') return y.t !== 'class' || classNonEmpty(y)
  if (y.t === 'any') return x.t !== 'class' || classNonEmpty(x)
  if (x.t === 'lit' && y.t === 'lit') return x.c === y.c
  if (x.t === 'lit' && y.t === 'class') return classHas(y, x.c)
  if (x.t === 'class' && y.t === 'lit') return classHas(x, y.c)
  if (x.t === 'class' && y.t === 'class') return classesIntersect(x, y)
  return false
}

type ClassToken = Extract<CharToken, { t: 'class' }>

function classNonEmpty (k: ClassToken): boolean {
  return k.unsure || k.negated || k.ranges.some(([lo, hi]) => lo <= hi)
}

function classHas (k: ClassToken, c: number): boolean {
  if (k.unsure) return true
  const inRanges = k.ranges.some(([lo, hi]) => lo <= c && c <= hi)
  return k.negated ? !inRanges && c !== 0x2f : inRanges
}

function classesIntersect (x: ClassToken, y: ClassToken): boolean {
  if (x.unsure || y.unsure) return true
  if (x.negated && y.negated) return true // two finite exclusions leave plenty in common
  if (!x.negated && !y.negated) {
    return x.ranges.some(([a, b]) => y.ranges.some(([c, d]) => Math.max(a, c) <= Math.min(b, d)))
  }
  // one positive, one negated: does the positive set reach outside the exclusions?
  const [pos, neg] = x.negated ? [y, x] : [x, y]
  return pos.ranges.some(([lo, hi]) => escapesRanges(lo, hi, neg.ranges))
}

/** Is some c in [lo, hi] (other than '/') outside every range in `ranges`? */
function escapesRanges (lo: number, hi: number, ranges: ReadonlyArray<[number, number]>): boolean {
  const sorted = ranges.filter(([a, b]) => a <= b).sort((p, q) => p[0] - q[0])
  let c = lo
  for (const [a, b] of sorted) {
    if (c > hi) break
    if (b < c) continue
    if (a > c) {
      if (c !== 0x2f || c + 1 < a) return true
    }
    c = Math.max(c, b + 1)
  }
  if (c > hi) return false
  return c !== 0x2f || c + 1 <= hi
}
