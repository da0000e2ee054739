// Who knows a path: peers ranked by the done tasks and merged integrations
// whose paths touch it. "Touch" uses scope semantics (see scopesOverlap): the
// query `src/core` matches work on `src/core/log/x.ts`, and the query
// `src/core/log/x.ts` matches a task scoped `src/core/**`.

import { scopesOverlap } from './glob-overlap.js'
import { validateGlob } from './glob-pattern.js'
import { compareText } from './order.js'

export interface Contribution {
  peer: string
  kind: 'task' | 'integration'
  paths: readonly string[]
}

export interface ExpertView {
  peer: string
  /** tasks + integrations */
  score: number
  tasks: number
  integrations: number
}

/** Throws InvalidArgumentError for a malformed path or glob. */
export function rankExperts(path: string, contributions: Iterable<Contribution>, limit = Infinity): ExpertView[] {
  const query = [validateGlob(path)]
  const byPeer = new Map<string, ExpertView>()
  for (const c of contributions) {
    if (scopesOverlap(query, c.paths).length === 0) continue
    let e = byPeer.get(c.peer)
    if (e === undefined) {
      e = { peer: c.peer, score: 0, tasks: 0, integrations: 0 }
      byPeer.set(c.peer, e)
    }
    if (c.kind === 'task') e.tasks++
    else e.integrations++
    e.score++
  }
  return [...byPeer.values()].sort((a, b) => b.score - a.score || b.tasks - a.tasks || compareText(a.peer, b.peer)).slice(0, limit)
}
