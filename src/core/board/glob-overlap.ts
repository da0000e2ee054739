// Do two globs share a path? Decided segment by segment over the parsed globs
// (see glob-pattern.ts): '**' may absorb any number of segments, and two
// segment patterns intersect when some string matches both (a product of the
// two patterns, with '*' absorbing characters). Exact for literals, '?', '*'
// and [ranges]; negated/POSIX classes and extglobs err towards "they overlap".

import type { CharToken, ParsedGlob, Segment } from './glob-pattern.js'
import { parseGlob } from './glob-pattern.js'
import { MAX_SCOPE_GLOBS, MAX_SCOPE_UNITS, patternUnits } from './scope-limits.js'

/**
 * True when some path matches both globs. Throws InvalidArgumentError when
 * either glob is malformed.
 */
export function globsIntersect(a: string, b: string): boolean {
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
 * peer may have written) match nothing here, and neither do the entries past
 * a scope's budget (scope-limits.ts).
 */
export function scopesOverlap(a: readonly string[], b: readonly string[]): Array<[string, string]> {
  const pairs: Array<[string, string]> = []
  const pb = compileScope(b)
  for (const x of compileScope(a)) {
    for (const y of pb) {
      if (scopeGlobsIntersect(x, y)) pairs.push([x.glob, y.glob])
    }
  }
  return pairs
}

/** One glob of a scope, compiled with scope semantics. */
export interface ScopeGlob {
  glob: string
  parsed: ParsedGlob
}

/**
 * The globs of a scope that count, compiled with scope semantics: the valid
 * ones, in order, until the next would take the scope past MAX_SCOPE_UNITS.
 */
export function compileScope(scope: readonly string[]): ScopeGlob[] {
  const out: ScopeGlob[] = []
  let units = 0
  for (const glob of scope) {
    if (out.length >= MAX_SCOPE_GLOBS) break
    const parsed = compileSafe(glob)
    if (parsed === undefined) continue
    units += parsed.units
    if (units > MAX_SCOPE_UNITS) break
    out.push({ glob, parsed: parsed.glob })
  }
  return out
}

const MAX_PAIR_CACHE = 16384
const pairCache = new Map<string, boolean>()

/** Whether two compiled scope globs share a path; remembered, as the same pairs are asked again on every claim. */
export function scopeGlobsIntersect(x: ScopeGlob, y: ScopeGlob): boolean {
  const key = `${x.glob}\u0000${y.glob}`
  const known = pairCache.get(key)
  if (known !== undefined) return known
  const result = parsedIntersect(x.parsed, y.parsed)
  if (pairCache.size >= MAX_PAIR_CACHE) pairCache.clear()
  pairCache.set(key, result)
  return result
}

const MAX_CACHE = 4096
const cache = new Map<string, ParsedGlob>()

function compile(glob: string, subtree: boolean): ParsedGlob {
  const key = (subtree ? 's:' : 'g:') + glob
  const hit = cache.get(key)
  if (hit !== undefined) return hit
  const parsed = parseGlob(glob)
  const result = subtree ? withSubtree(parsed, glob.endsWith('/')) : parsed
  if (cache.size >= MAX_CACHE) cache.clear()
  cache.set(key, result)
  return result
}

const unitsOf = new WeakMap<ParsedGlob, number>()

function compileSafe(glob: string): { glob: ParsedGlob; units: number } | undefined {
  let parsed: ParsedGlob
  try {
    parsed = compile(glob, true)
  } catch {
    return undefined
  }
  let units = unitsOf.get(parsed)
  if (units === undefined) {
    units = patternUnits(parsed)
    unitsOf.set(parsed, units)
  }
  return { glob: parsed, units }
}

function withSubtree(g: ParsedGlob, slash: boolean): ParsedGlob {
  return {
    source: g.source,
    alternatives: g.alternatives.map(segs => (slash || namesDirectory(segs.at(-1)) ? [...segs, { kind: 'globstar' }] : segs))
  }
}

const DOT = '.'.charCodeAt(0)

function namesDirectory(last: Segment | undefined): boolean {
  return last?.kind === 'part' && last.tokens.every(t => t.t === 'lit' && t.c !== DOT)
}

function parsedIntersect(a: ParsedGlob, b: ParsedGlob): boolean {
  return a.alternatives.some(sa => b.alternatives.some(sb => segmentsIntersect(sa, sb)))
}

/** The segment as plain text when it is all literals (no wildcard, class or '**'), else undefined. */
export function literalSegment(s: Segment | undefined): string | undefined {
  return s?.kind === 'part' ? s.literal : undefined
}

/**
 * A cheap exact refusal: two alternatives whose first (or last) segments are
 * both literal and differ cannot match one path, since that path segment must
 * equal both. Most pairs of scopes in a swarm end here.
 */
function literalEndsDiffer(a: readonly Segment[], b: readonly Segment[]): boolean {
  const fa = literalSegment(a[0])
  const fb = fa === undefined ? undefined : literalSegment(b[0])
  if (fa !== undefined && fb !== undefined && fa !== fb) return true
  const la = literalSegment(a.at(-1))
  const lb = la === undefined ? undefined : literalSegment(b.at(-1))
  return la !== undefined && lb !== undefined && la !== lb
}

/**
 * The shared shape of both products: `wild(x)` is a '*' (or '**') that may
 * absorb any number of the other side's units, `step(x, y)` says whether two
 * single units can match the same thing. Cell (i, j) = "A[i..] and B[j..]
 * share a match"; when both sides are wild at (i, j), one of them ends first,
 * so trying "A's ends here" and "B's ends here" is complete. Filled from the
 * end, one byte per cell: the cost is |A| x |B| steps at most, which the
 * scope budget bounds.
 */
function product<T>(a: readonly T[], b: readonly T[], wild: (x: T) => boolean, step: (x: T, y: T) => boolean): boolean {
  const n = a.length
  const m = b.length
  const width = m + 1
  const cell = new Uint8Array((n + 1) * width)
  const wa = a.map(wild)
  const wb = b.map(wild)
  for (let i = n; i >= 0; i--) {
    for (let j = m; j >= 0; j--) {
      let v: boolean
      if (i === n && j === m) v = true
      else if (i < n && wa[i]) v = cell[(i + 1) * width + j] === 1 || (j < m && cell[i * width + j + 1] === 1)
      else if (j < m && wb[j]) v = cell[i * width + j + 1] === 1 || (i < n && cell[(i + 1) * width + j] === 1)
      else if (i < n && j < m) v = cell[(i + 1) * width + j + 1] === 1 && step(a[i], b[j])
      else v = false
      if (v) cell[i * width + j] = 1
    }
  }
  return cell[0] === 1
}

export function segmentsIntersect(a: readonly Segment[], b: readonly Segment[]): boolean {
  if (literalEndsDiffer(a, b)) return false
  return product(
    a,
    b,
    s => s.kind === 'globstar',
    (x, y) => x.kind === 'part' && y.kind === 'part' && partsIntersect(x.tokens, y.tokens)
  )
}

function partsIntersect(a: readonly CharToken[], b: readonly CharToken[]): boolean {
  return product(a, b, t => t.t === 'star', charsIntersect)
}

function charsIntersect(x: CharToken, y: CharToken): boolean {
  if (x.t === 'any') return y.t !== 'class' || classNonEmpty(y)
  if (y.t === 'any') return x.t !== 'class' || classNonEmpty(x)
  if (x.t === 'lit' && y.t === 'lit') return x.c === y.c
  if (x.t === 'lit' && y.t === 'class') return classHas(y, x.c)
  if (x.t === 'class' && y.t === 'lit') return classHas(x, y.c)
  if (x.t === 'class' && y.t === 'class') return classesIntersect(x, y)
  return false
}

type ClassToken = Extract<CharToken, { t: 'class' }>

function classNonEmpty(k: ClassToken): boolean {
  return k.unsure || k.negated || k.ranges.some(([lo, hi]) => lo <= hi)
}

function classHas(k: ClassToken, c: number): boolean {
  if (k.unsure) return true
  const inRanges = k.ranges.some(([lo, hi]) => lo <= c && c <= hi)
  return k.negated ? !inRanges && c !== 0x2f : inRanges
}

function classesIntersect(x: ClassToken, y: ClassToken): boolean {
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
function escapesRanges(lo: number, hi: number, ranges: ReadonlyArray<[number, number]>): boolean {
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
