// What one scope may cost. Scopes come from peers (claims and task hints are
// log entries anyone can write), and every overlap check compares them, so the
// part of a scope that counts is bounded where it is folded in, the same way
// on every peer:
//
// - at most MAX_SCOPE_GLOBS globs, each at most MAX_GLOB_LENGTH characters
//   (longer entries are dropped when a claim or task is folded in);
// - each glob at most MAX_GLOB_ALTERNATIVES brace alternatives (a glob with
//   more is malformed and matches nothing);
// - the alternatives of all its globs together at most MAX_SCOPE_UNITS
//   pattern units (a literal, '?', '*', a class or '**' is one unit): the
//   globs are compared in order until the next one would go over, and the
//   rest count for nothing.
//
// A local claim or task over any of these is refused with the cap it passes.

import { InvalidArgumentError } from '../errors.js'
import { MAX_GLOB_LENGTH, parseGlob, type ParsedGlob } from './glob-pattern.js'

export const MAX_SCOPE_GLOBS = 32
export const MAX_SCOPE_UNITS = 2048

/**
 * The entries of a peer's scope that are kept: the first MAX_SCOPE_GLOBS
 * strings no longer than MAX_GLOB_LENGTH. When that is every entry, the list
 * itself is returned (a board's records then share its folded body's list
 * instead of a copy each).
 */
export function capScope(scope: string[]): string[] {
  if (scope.length <= MAX_SCOPE_GLOBS && scope.every(g => typeof g === 'string' && g.length <= MAX_GLOB_LENGTH)) return scope
  const out: string[] = []
  for (const g of scope) {
    if (out.length >= MAX_SCOPE_GLOBS) break
    if (typeof g === 'string' && g.length <= MAX_GLOB_LENGTH) out.push(g)
  }
  return out
}

/** Pattern units of a parsed glob's alternatives: what comparing it costs. */
export function patternUnits(g: ParsedGlob): number {
  let n = 0
  for (const alt of g.alternatives) {
    for (const seg of alt) n += seg.kind === 'globstar' ? 1 : Math.max(1, seg.tokens.length)
  }
  return n
}

/**
 * Validates a scope given by the local agent: every glob (see validateGlob)
 * and the caps above. Returns the normalised globs; throws
 * InvalidArgumentError naming the cap, and changes nothing.
 */
export function validateScope(globs: readonly unknown[]): string[] {
  if (globs.length > MAX_SCOPE_GLOBS)
    throw new InvalidArgumentError(
      `a scope holds at most ${MAX_SCOPE_GLOBS} globs, got ${globs.length}: name a directory (src/x) instead of its files`
    )
  let units = 0
  return globs.map(g => {
    const parsed = parseGlob(g)
    units += patternUnits(parsed)
    if (units > MAX_SCOPE_UNITS)
      throw new InvalidArgumentError(
        `the scope expands to more than ${MAX_SCOPE_UNITS} pattern characters (brace alternatives count each): use fewer or shorter globs`
      )
    return parsed.source
  })
}
