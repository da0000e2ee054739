// The swarm's spend as a fold over usage entries: in total, per agent, per
// model and per task, plus the largest run seen (what one run may cost, for
// the in-flight allowance). Sums of integers: any two replicas holding the
// same usage entries hold the same totals, whatever order they came in.
import type { Usage } from '../../gen/agency/v1/log.js'
import { addModel, addTotals, allTokens, copyTotals, zeroTotals, type SpendTotals } from './spend-totals.js'

export type SpendGrouping = 'agent' | 'model' | 'task'

export const SPEND_GROUPINGS: readonly SpendGrouping[] = ['agent', 'model', 'task']

/** The largest single run seen, in each dimension a cap counts. */
export interface RunSize {
  microUsd: number
  tokens: number
  wallMs: number
}

export class SpendBook {
  private readonly seen = new Set<string>()
  private readonly total = zeroTotals()
  private readonly groups: Record<SpendGrouping, Map<string, SpendTotals>> = { agent: new Map(), model: new Map(), task: new Map() }
  private readonly largest: RunSize = { microUsd: 0, tokens: 0, wallMs: 0 }

  /** Folds one usage entry in; false for one already folded. */
  add(entryId: string, author: string, u: Usage): boolean {
    if (this.seen.has(entryId)) return false
    this.seen.add(entryId)
    const run = zeroTotals()
    for (const m of u.models) {
      addModel(run, m)
      const byModel = this.group('model', m.model)
      addModel(byModel, m)
    }
    run.runs = 1
    run.wallMs = u.wallMs
    for (const m of new Set(u.models.map(m => m.model))) {
      const g = this.group('model', m)
      g.runs++
      g.wallMs += u.wallMs
    }
    for (const t of [this.total, this.group('agent', author), this.group('task', u.task)]) addTotals(t, run)
    this.largest.microUsd = Math.max(this.largest.microUsd, run.microUsd)
    this.largest.tokens = Math.max(this.largest.tokens, allTokens(run))
    this.largest.wallMs = Math.max(this.largest.wallMs, run.wallMs)
    return true
  }

  totals(): SpendTotals {
    return copyTotals(this.total)
  }

  /** One agent's totals (zero when it spent nothing). */
  agent(id: string): SpendTotals {
    return copyTotals(this.groups.agent.get(id) ?? zeroTotals())
  }

  /** Totals grouped, largest dollars first, then by key. '' is a run with no task (or model). */
  by(grouping: SpendGrouping): Array<{ key: string; totals: SpendTotals }> {
    return [...this.groups[grouping]]
      .map(([key, t]) => ({ key, totals: copyTotals(t) }))
      .sort(
        (a, b) =>
          b.totals.microUsd - a.totals.microUsd || allTokens(b.totals) - allTokens(a.totals) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)
      )
  }

  largestRun(): RunSize {
    return { ...this.largest }
  }

  /** Usage entries folded. */
  get entries(): number {
    return this.seen.size
  }

  private group(g: SpendGrouping, key: string): SpendTotals {
    let t = this.groups[g].get(key)
    if (t == null) {
      t = zeroTotals()
      this.groups[g].set(key, t)
    }
    return t
  }
}
