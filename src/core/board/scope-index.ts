// An index of scopes for overlap checks: every alternative of every glob is
// filed under its literal prefix (its leading segments that are plain text)
// in a trie of path segments. An alternative can share a path with mine only
// if one literal prefix is a prefix of the other, so a search visits the trie
// nodes along my literal prefix and the subtree below it, and skips every
// branch that names other directories. Exact: the pairs it finds are the ones
// comparing every glob with every glob finds.

import { compileScope, literalSegment, scopeGlobsIntersect, type ScopeGlob } from './glob-overlap.js'
import type { Segment } from './glob-pattern.js'

interface Posting {
  item: number
  glob: number
  alternative: readonly Segment[]
}

interface TrieNode {
  children: Map<string, TrieNode>
  postings: Posting[]
}

export interface ScopeMatch<T> {
  item: T
  /** [their glob, my glob] pairs that share a path, in their scope's order, then mine */
  globs: Array<[string, string]>
}

const node = (): TrieNode => ({ children: new Map(), postings: [] })

/** An alternative's leading literal segments. */
function literalPrefix(alternative: readonly Segment[]): string[] {
  const out: string[] = []
  for (const s of alternative) {
    const text = literalSegment(s)
    if (text === undefined) break
    out.push(text)
  }
  return out
}

export class ScopeIndex<T> {
  private readonly items: Array<{ item: T; globs: ScopeGlob[] }> = []
  private readonly root = node()

  add(item: T, scope: readonly string[]): void {
    const index = this.items.length
    const globs = compileScope(scope)
    this.items.push({ item, globs })
    globs.forEach((g, glob) => {
      for (const alternative of g.parsed.alternatives) {
        let at = this.root
        for (const segment of literalPrefix(alternative)) {
          let next = at.children.get(segment)
          if (next === undefined) {
            next = node()
            at.children.set(segment, next)
          }
          at = next
        }
        at.postings.push({ item: index, glob, alternative })
      }
    })
  }

  /**
   * Indexed items with a glob that shares a path with a glob of `scope`, in
   * the order they were added; `accept` filters items before any comparison.
   */
  search(scope: readonly string[], accept: (item: T) => boolean = () => true): Array<ScopeMatch<T>> {
    const mine = compileScope(scope)
    const accepted = new Map<number, boolean>()
    // item -> keys of (their glob, my glob) pairs decided so far, and those that share a path
    const decided = new Map<number, Set<number>>()
    const found = new Map<number, Set<number>>()
    const visit = (p: Posting, _alternative: readonly Segment[], mineIndex: number): void => {
      const key = p.glob * mine.length + mineIndex
      let seen = decided.get(p.item)
      if (seen?.has(key) === true) return
      let ok = accepted.get(p.item)
      if (ok === undefined) {
        ok = accept(this.items[p.item].item)
        accepted.set(p.item, ok)
      }
      if (!ok) return
      if (seen === undefined) {
        seen = new Set()
        decided.set(p.item, seen)
      }
      seen.add(key)
      // The whole pair of globs, remembered across searches: most pairs were decided on an earlier claim.
      if (!scopeGlobsIntersect(this.items[p.item].globs[p.glob], mine[mineIndex])) return
      const pairs = found.get(p.item)
      if (pairs === undefined) found.set(p.item, new Set([key]))
      else pairs.add(key)
    }
    mine.forEach((m, mineIndex) => {
      for (const alternative of m.parsed.alternatives) {
        // Along my literal prefix: alternatives that turn wild (or end) before mine does.
        let at: TrieNode | undefined = this.root
        for (const segment of literalPrefix(alternative)) {
          for (const p of at.postings) visit(p, alternative, mineIndex)
          at = at.children.get(segment)
          if (at === undefined) break
        }
        // Below it: alternatives whose literal prefix extends mine.
        if (at !== undefined)
          this.walk(at, p => {
            visit(p, alternative, mineIndex)
          })
      }
    })
    const out: Array<ScopeMatch<T>> = []
    for (const item of [...found.keys()].sort((x, y) => x - y)) {
      const { item: value, globs } = this.items[item]
      const keys = [...(found.get(item) as Set<number>)].sort((x, y) => x - y)
      out.push({ item: value, globs: keys.map(k => [globs[Math.floor(k / mine.length)].glob, mine[k % mine.length].glob]) })
    }
    return out
  }

  private walk(at: TrieNode, fn: (p: Posting) => void): void {
    for (const p of at.postings) fn(p)
    for (const child of at.children.values()) this.walk(child, fn)
  }
}
