// One FindingsIndex for the whole simulated swarm, searched through each
// replica's own holdings. For a query made only of filters (kind, tag, path,
// author, time), a replica's own index would return exactly the findings it
// holds that pass the filters, which is what this returns: the same answer
// without a thousand MiniSearch indexes (the memory and the indexing time of
// a thousand replicas would otherwise dominate a 1024-agent run). Free-text
// queries rank by corpus statistics that differ per replica, so they are
// refused here.

import { FindingsIndex, MAX_SEARCH_LIMIT, type FindingHit, type FindingQuery } from '../../core/findings/findings-index.js'
import { InvalidArgumentError } from '../../core/errors.js'
import type { StoredEntry } from '../../core/log/ingest-result.js'

export class SharedFindings {
  private readonly index = new FindingsIndex()
  private readonly poolIndex = new Map<string, number>()
  /** answers of the whole index by query, valid until the next add (agents repeat the same few queries thousands of times) */
  private readonly answers = new Map<string, FindingHit[]>()

  get size(): number {
    return this.index.size
  }

  add(stored: StoredEntry, poolIndex: number): void {
    if (!this.index.add(stored)) return
    this.poolIndex.set(stored.id, poolIndex)
    this.answers.clear()
  }

  /** The hits a replica that holds exactly the pool entries for which `holds` is true would get. */
  search(q: Omit<FindingQuery, 'query' | 'limit'>, holds: (poolIndex: number) => boolean): FindingHit[] {
    if ((q as FindingQuery).query !== undefined && (q as FindingQuery).query !== '')
      throw new InvalidArgumentError('the shared findings index answers filter-only queries')
    const key = JSON.stringify(q)
    let all = this.answers.get(key)
    if (all === undefined) {
      all = this.index.search({ ...q, limit: MAX_SEARCH_LIMIT })
      this.answers.set(key, all)
    }
    return all.filter(h => holds(this.poolIndex.get(h.id) as number))
  }
}
