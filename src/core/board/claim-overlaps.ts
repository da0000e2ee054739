// Live claims whose scopes share a path: both holders should hear about it
// (an event and a direct message naming the other, the paths and the tasks).

import type { Board, HolderInfo } from './board.js'
import { scopesOverlap } from './glob-overlap.js'
import { ScopeIndex } from './scope-index.js'

export interface ClaimOverlap {
  a: HolderInfo
  b: HolderInfo
  /** pairs of globs, [from a's scope, from b's scope], that share a path */
  globs: Array<[string, string]>
}

/** Every pair of live claims by different holders with overlapping scopes; a.task < b.task. */
export function overlaps(board: Board, now: number): ClaimOverlap[] {
  const live = board.liveClaims(now)
  const out: ClaimOverlap[] = []
  for (let i = 0; i < live.length; i++) {
    for (let j = i + 1; j < live.length; j++) {
      const a = live[i]
      const b = live[j]
      if (a.holder === b.holder) continue
      const globs = scopesOverlap(a.scope, b.scope)
      if (globs.length > 0) out.push({ a, b, globs })
    }
  }
  return out
}

/**
 * Live claims of other holders that overlap `mine` (a claim about to be made
 * or just made): what its claimant should be told. Each result has a = the
 * other claim, b = mine. The holders' scopes are indexed once per change of
 * the board (see ScopeIndex), so a check compares `mine` only with the
 * alternatives that could share a path with it.
 */
export function overlapsFor(board: Board, mine: HolderInfo, now: number): ClaimOverlap[] {
  const live = new Set(board.liveClaims(now).map(h => h.task))
  const accept = (other: HolderInfo): boolean => other.holder !== mine.holder && other.task !== mine.task && live.has(other.task)
  return holderIndex(board)
    .search(mine.scope, accept)
    .map(m => ({ a: m.item, b: mine, globs: m.globs }))
}

const indexes = new WeakMap<Board, { version: number; index: ScopeIndex<HolderInfo> }>()

function holderIndex(board: Board): ScopeIndex<HolderInfo> {
  const cached = indexes.get(board)
  if (cached?.version === board.version) return cached.index
  const index = new ScopeIndex<HolderInfo>()
  for (const h of board.holders().values()) index.add(h, h.scope)
  indexes.set(board, { version: board.version, index })
  return index
}
