// Full-text search over the findings in the log (minisearch, BM25): text,
// paths and tags, with filters. Built from accepted entries, so it is rebuilt
// from the log at start and never stored.
//
// Two replicas holding the same findings return the same hits in the same
// order: ties break on time then id, and scores are rounded, because
// minisearch keeps average field lengths as a running float whose last bits
// depend on insertion order.
import MiniSearch from 'minisearch'
import { Finding } from '../../gen/agency/v1/log.js'
import { InvalidArgumentError } from '../errors.js'
import type { StoredEntry } from '../log/ingest-result.js'
import { compareStrings } from '../log/version-vector.js'

export const DEFAULT_SEARCH_LIMIT = 20
export const MAX_SEARCH_LIMIT = 1000
export const MAX_QUERY_CHARS = 1024

export interface FindingQuery {
  /** words to look for; empty or absent lists every finding that passes the filters, newest first */
  query?: string
  /** finding kind: discovery | failure | bug | decision | note */
  kind?: string
  /** at least one path starts with this */
  pathPrefix?: string
  tag?: string
  author?: string
  /** entry time (ms since the epoch), inclusive; 0 or absent means no bound */
  since?: number
  until?: number
  limit?: number
}

/** A page of hits, for lists longer than one search may return. */
export interface FindingPage {
  hits: FindingHit[]
  /** every hit that passes the query and filters */
  total: number
}

export interface FindingHit {
  id: string
  entry: StoredEntry
  finding: Finding
  /** relevance (BM25, rounded); 0 for a listing without query words */
  score: number
  /** a later finding names this one in `supersedes`; superseded hits rank after the others */
  superseded: boolean
}

interface IndexedFinding {
  entry: StoredEntry
  finding: Finding
}

interface SearchDoc {
  id: string
  text: string
  paths: string
  tags: string
}

function roundScore (score: number): number {
  return Math.round(score * 1e6) / 1e6
}

function bound (name: string, value: number | undefined): number | undefined {
  if (value === undefined || value === 0) return undefined
  if (!Number.isSafeInteger(value) || value < 0) throw new InvalidArgumentError(`${name} must be a non-negative integer`)
  return value
}

function normalizePath (p: string): string {
  return p.startsWith('./') ? p.slice(2) : p
}

export class FindingsIndex {
  private readonly findings = new Map<string, IndexedFinding>()
  /** finding id -> ids of the findings that supersede it */
  private readonly supersededBy = new Map<string, Set<string>>()
  private readonly kindCounts = new Map<string, number>()
  /** every finding, the newest last (see byRecency) */
  private readonly recency: IndexedFinding[] = []
  private recencySorted = true
  private readonly text = new MiniSearch<SearchDoc>({ fields: ['text', 'paths', 'tags'], storeFields: [] })

  /** An index of every finding among `entries` (in any order). */
  static fromEntries (entries: Iterable<StoredEntry>): FindingsIndex {
    const index = new FindingsIndex()
    for (const e of entries) index.add(e)
    return index
  }

  /** Indexes an accepted entry; false for other kinds, duplicates and bodies that do not decode. */
  add (stored: StoredEntry): boolean {
    if (stored.entry.kind !== 'finding' || this.findings.has(stored.id)) return false
    let finding: Finding
    try {
      finding = Finding.decode(stored.entry.body)
    } catch {
      return false
    }
    const indexed: IndexedFinding = { entry: stored, finding }
    this.findings.set(stored.id, indexed)
    const newest = this.recency.at(-1)
    this.recency.push(indexed)
    if (newest !== undefined && newestFirst(indexed, newest) > 0) this.recencySorted = false
    this.kindCounts.set(finding.kind, (this.kindCounts.get(finding.kind) ?? 0) + 1)
    this.text.add({ id: stored.id, text: finding.text, paths: finding.paths.join(' '), tags: finding.tags.join(' ') })
    if (finding.supersedes !== '' && finding.supersedes !== stored.id) {
      let by = this.supersededBy.get(finding.supersedes)
      if (by == null) this.supersededBy.set(finding.supersedes, by = new Set())
      by.add(stored.id)
    }
    return true
  }

  get size (): number {
    return this.findings.size
  }

  has (id: string): boolean {
    return this.findings.has(id)
  }

  get (id: string): IndexedFinding | undefined {
    return this.findings.get(id)
  }

  isSuperseded (id: string): boolean {
    return this.supersededBy.has(id)
  }

  /** How many findings of each kind are indexed. */
  countsByKind (): Map<string, number> {
    return new Map(this.kindCounts)
  }

  /** Throws InvalidArgumentError on a bad limit, time bound or an overlong query. */
  search (q: FindingQuery = {}): FindingHit[] {
    const limit = checkLimit(q.limit)
    return this.page({ ...q, limit, offset: 0 }).hits
  }

  /**
   * The hits `search` would give, from `offset` on, and how many there are in
   * all: a reader pages through any number of findings. With `failuresFirst`
   * the failures come before the other kinds, each group in search order.
   */
  page (q: FindingQuery & { offset?: number }, opts: { failuresFirst?: boolean } = {}): FindingPage {
    const limit = checkLimit(q.limit)
    const offset = q.offset ?? 0
    if (!Number.isSafeInteger(offset) || offset < 0) throw new InvalidArgumentError('offset must be a non-negative integer')
    const words = (q.query ?? '').trim()
    if (words.length > MAX_QUERY_CHARS) throw new InvalidArgumentError(`query is over ${MAX_QUERY_CHARS} characters`)
    const passes = this.filterFor(q)
    const failuresFirst = opts.failuresFirst === true
    if (words === '') return this.recentPage(passes, offset, limit, failuresFirst)
    let hits = this.ranked(words, passes)
    if (failuresFirst) hits = [...hits.filter(h => h.finding.kind === 'failure'), ...hits.filter(h => h.finding.kind !== 'failure')]
    return { hits: hits.slice(offset, offset + limit), total: hits.length }
  }

  private filterFor (q: FindingQuery): (f: IndexedFinding) => boolean {
    const since = bound('since', q.since)
    const until = bound('until', q.until)
    const prefix = q.pathPrefix != null && q.pathPrefix !== '' ? normalizePath(q.pathPrefix) : undefined
    return (f: IndexedFinding): boolean => {
      const { entry, finding } = f
      if (q.kind != null && q.kind !== '' && finding.kind !== q.kind) return false
      if (q.author != null && q.author !== '' && entry.entry.author !== q.author) return false
      if (q.tag != null && q.tag !== '' && !finding.tags.includes(q.tag)) return false
      if (prefix != null && !finding.paths.some(p => normalizePath(p).startsWith(prefix))) return false
      if (since != null && entry.entry.time < since) return false
      if (until != null && entry.entry.time > until) return false
      return true
    }
  }

  /** Every match for the words that passes the filters: superseded last, then by score, newest first, then id. */
  private ranked (words: string, passes: (f: IndexedFinding) => boolean): FindingHit[] {
    const filter = (r: { id: string }): boolean => passes(this.findings.get(r.id) as IndexedFinding)
    const results = this.text.search(words, {
      filter,
      boost: { text: 2, tags: 1.5, paths: 1 },
      prefix: term => term.length >= 3,
      fuzzy: term => (term.length >= 5 ? 0.2 : false),
      combineWith: 'OR'
    }).map(r => ({ id: r.id as string, score: roundScore(r.score) }))
    const hits: FindingHit[] = results.map(({ id, score }) => {
      const { entry, finding } = this.findings.get(id) as IndexedFinding
      return { id, entry, finding, score, superseded: this.isSuperseded(id) }
    })
    hits.sort((x, y) =>
      (Number(x.superseded) - Number(y.superseded)) ||
      (y.score - x.score) ||
      (y.entry.entry.time - x.entry.entry.time) ||
      compareStrings(x.id, y.id))
    return hits
  }

  /**
   * A listing without words, in the order `ranked` would give with every
   * score 0 (superseded last, newest first, then id), without sorting all of
   * them on every call: findings are kept newest-last as they arrive, so one
   * walk counts the matches in each group and a second keeps the page.
   */
  private recentPage (passes: (f: IndexedFinding) => boolean, offset: number, limit: number, failuresFirst: boolean): FindingPage {
    const list = this.byRecency()
    const group = (f: IndexedFinding): number => (failuresFirst && f.finding.kind !== 'failure' ? 2 : 0) + (this.supersededBy.has(f.entry.id) ? 1 : 0)
    const counts = [0, 0, 0, 0]
    for (let i = list.length - 1; i >= 0; i--) if (passes(list[i])) counts[group(list[i])]++
    const starts = [0, counts[0], counts[0] + counts[1], counts[0] + counts[1] + counts[2]]
    const total = starts[3] + counts[3]
    const picked: IndexedFinding[][] = [[], [], [], []]
    const seen = [0, 0, 0, 0]
    const end = offset + limit
    for (let i = list.length - 1; i >= 0 && offset < total; i--) {
      const f = list[i]
      if (!passes(f)) continue
      const g = group(f)
      const rank = starts[g] + seen[g]++
      if (rank >= offset && rank < end) picked[g].push(f)
    }
    const hits = picked.flat().map(({ entry, finding }) => ({ id: entry.id, entry, finding, score: 0, superseded: this.isSuperseded(entry.id) }))
    return { hits, total }
  }

  /** Findings with the newest last (time, then id descending); sorted again only after one arrived out of order. */
  private byRecency (): IndexedFinding[] {
    if (!this.recencySorted) {
      this.recency.sort((x, y) => newestFirst(y, x))
      this.recencySorted = true
    }
    return this.recency
  }
}

/** Listing order without words: newest first, then id. */
function newestFirst (x: IndexedFinding, y: IndexedFinding): number {
  return (y.entry.entry.time - x.entry.entry.time) || compareStrings(x.entry.id, y.entry.id)
}

function checkLimit (value: number | undefined): number {
  const limit = value === undefined || value === 0 ? DEFAULT_SEARCH_LIMIT : value
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT) {
    throw new InvalidArgumentError(`limit must be between 1 and ${MAX_SEARCH_LIMIT}`)
  }
  return limit
}
