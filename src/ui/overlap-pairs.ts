// The overlap graph's pairs for a whole board: core's overlaps() compares
// every pair of live claims glob by glob, which at a thousand live claims is
// half a million exact checks on every change. Two globs can only share a path
// if their leading literal segments agree as far as both have them
// (`src/parser/**` and `src/lexer/*.ts` part at the second segment), so pairs
// that fail that cheap test are skipped; the rest get core's exact check. The
// answer is the same as overlaps(): the test only ever skips pairs core would
// reject too (test/ui/overlap-pairs.test.ts compares them).
import { scopesOverlap, type ClaimOverlap, type HolderInfo } from '../core/board/index.js'

const LITERAL = /^[A-Za-z0-9_\-.]+$/

/** The glob's leading segments that are plain names (no pattern characters, not '.' or '..'). */
export function literalPrefix (glob: string): string[] {
  let s = glob
  while (s.startsWith('./')) s = s.slice(2)
  const out: string[] = []
  for (const seg of s.split('/')) {
    if (seg === '' || seg === '.' || seg === '..' || !LITERAL.test(seg)) break
    out.push(seg)
  }
  return out
}

function prefixesAgree (a: readonly string[], b: readonly string[]): boolean {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false
  return true
}

/** False only when no glob of one scope can share a path with any glob of the other. */
export function mayOverlap (a: ReadonlyArray<readonly string[]>, b: ReadonlyArray<readonly string[]>): boolean {
  return a.some(pa => b.some(pb => prefixesAgree(pa, pb)))
}

/** What overlaps(board, now) answers for `live` (the board's live claims), a.task < b.task order kept. */
export function overlapPairs (live: readonly HolderInfo[]): ClaimOverlap[] {
  const prefixes = live.map(c => c.scope.map(literalPrefix))
  const out: ClaimOverlap[] = []
  for (let i = 0; i < live.length; i++) {
    for (let j = i + 1; j < live.length; j++) {
      const a = live[i]
      const b = live[j]
      if (a.holder === b.holder || !mayOverlap(prefixes[i], prefixes[j])) continue
      const globs = scopesOverlap(a.scope, b.scope)
      if (globs.length > 0) out.push({ a, b, globs })
    }
  }
  return out
}
