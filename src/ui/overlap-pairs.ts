// The overlap graph's pairs for a whole board. Core's overlaps() compares
// every pair of live claims glob by glob, which at a thousand live claims is
// half a million exact checks on every change; here the live claims' scopes
// go into core's ScopeIndex (globs filed by their literal prefixes) and each
// claim is looked up among those before it, so only pairs that could share a
// path are compared. The answer is overlaps()'s, in its order
// (test/ui/overlap-pairs.test.ts compares them).
import type { ClaimOverlap, HolderInfo } from '../core/board/index.js'
import { ScopeIndex } from '../core/board/scope-index.js'

/** What overlaps(board, now) answers when `live` is board.liveClaims(now). */
export function overlapPairs(live: readonly HolderInfo[]): ClaimOverlap[] {
  const position = new Map(live.map((c, i) => [c, i]))
  const index = new ScopeIndex<HolderInfo>()
  for (const c of live) index.add(c, c.scope)
  const out: Array<ClaimOverlap & { i: number; j: number }> = []
  live.forEach((b, j) => {
    const earlier = (a: HolderInfo): boolean => (position.get(a) ?? j) < j && a.holder !== b.holder
    for (const m of index.search(b.scope, earlier)) out.push({ a: m.item, b, globs: m.globs, i: position.get(m.item) ?? 0, j })
  })
  return out.sort((x, y) => x.i - y.i || x.j - y.j).map(({ a, b, globs }) => ({ a, b, globs }))
}
