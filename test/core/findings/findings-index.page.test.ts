// Paging through the findings index: what the dashboard lists, a page at a
// time, whatever the number of findings; failures first when asked.
import { beforeAll, describe, expect, it } from 'vitest'
import { LogState } from '../../../src/core/log/log-state.js'
import { FindingsIndex } from '../../../src/core/findings/findings-index.js'
import { InvalidArgumentError } from '../../../src/core/errors.js'
import { makeIdentities, type TestIdentity } from '../../helpers/identity.js'

let a: TestIdentity
let b: TestIdentity
beforeAll(async () => {
  ;[a, b] = await makeIdentities(2)
})

function fill(n: number): { index: FindingsIndex; ids: string[] } {
  const log = new LogState()
  const ids: string[] = []
  for (let i = 0; i < n; i++) {
    const who = i % 2 === 0 ? a : b
    const kind = i % 5 === 0 ? 'failure' : 'discovery'
    ids.push(
      log.append(
        who.signer,
        'finding',
        { kind, text: `finding number ${i} about the parser`, paths: [`src/p${i % 3}.ts`], tags: [], supersedes: '' },
        1000 + i
      ).id
    )
  }
  return { index: FindingsIndex.fromEntries(log.ordered()), ids }
}

describe('FindingsIndex.page', () => {
  it('walks every finding exactly once, past the single-search limit, with the total', () => {
    const { index, ids } = fill(2500)
    const seen: string[] = []
    for (let offset = 0; ; offset += 1000) {
      const page = index.page({ offset, limit: 1000 })
      expect(page.total).toBe(2500)
      seen.push(...page.hits.map(h => h.id))
      if (page.hits.length < 1000) break
    }
    expect(seen.length).toBe(2500)
    expect(new Set(seen)).toEqual(new Set(ids))
    // The same order search gives: newest first without query words.
    expect(index.page({ limit: 20 }).hits.map(h => h.id)).toEqual(index.search({ limit: 20 }).map(h => h.id))
  })

  it('puts failures before other kinds, each group in search order', () => {
    const { index } = fill(50)
    const page = index.page({ limit: 50 }, { failuresFirst: true })
    const kinds = page.hits.map(h => h.finding.kind)
    expect(kinds.slice(0, 10).every(k => k === 'failure')).toBe(true)
    expect(kinds.slice(10).every(k => k !== 'failure')).toBe(true)
    const times = page.hits.slice(0, 10).map(h => h.entry.entry.time)
    expect(times).toEqual([...times].sort((x, y) => y - x))
  })

  it('pages filtered and searched results, and counts findings by kind', () => {
    const { index } = fill(60)
    const byA = index.page({ author: a.signer.author, limit: 7, offset: 7 })
    expect(byA.total).toBe(30)
    expect(byA.hits.length).toBe(7)
    expect(byA.hits.every(h => h.entry.entry.author === a.signer.author)).toBe(true)
    expect(index.page({ query: 'parser', pathPrefix: 'src/p1', limit: 100 }).total).toBe(20)
    expect(Object.fromEntries(index.countsByKind())).toEqual({ failure: 12, discovery: 48 })
  })

  it('lists findings that arrive out of time order, superseded ones last, as one full sort would', () => {
    const log = new LogState()
    let x = 7
    const next = (): number => {
      x = (x * 1103515245 + 12345) % 2147483648
      return x
    }
    const ids: string[] = []
    for (let i = 0; i < 400; i++) {
      const supersedes = i > 10 && next() % 7 === 0 ? ids[next() % ids.length] : ''
      const kind = next() % 3 === 0 ? 'failure' : 'note'
      // Times collide and go backwards, as authors' clocks do.
      ids.push(
        log.append(
          i % 2 === 0 ? a.signer : b.signer,
          'finding',
          { kind, text: `entry ${i}`, paths: [], tags: [], supersedes },
          1000 + (next() % 50)
        ).id
      )
    }
    // Arrival order differs from time order: index them shuffled.
    const entries = [...log.ordered()].sort((p, q) => (p.id < q.id ? -1 : 1))
    const index = FindingsIndex.fromEntries(entries)
    const superseded = new Set(entries.map(e => index.get(e.id)?.finding.supersedes ?? '').filter(id => id !== ''))
    const newest = (p: (typeof entries)[number], q: (typeof entries)[number]): number =>
      q.entry.time - p.entry.time || (p.id < q.id ? -1 : p.id > q.id ? 1 : 0)
    const reference = [...entries]
      .sort((p, q) => Number(superseded.has(p.id)) - Number(superseded.has(q.id)) || newest(p, q))
      .map(e => e.id)
    const failures = new Set(entries.filter(e => index.get(e.id)?.finding.kind === 'failure').map(e => e.id))
    const referenceFailuresFirst = [...reference.filter(id => failures.has(id)), ...reference.filter(id => !failures.has(id))]
    for (const [offset, limit] of [
      [0, 400],
      [0, 17],
      [13, 50],
      [380, 50]
    ]) {
      expect(index.page({ offset, limit }).hits.map(h => h.id)).toEqual(reference.slice(offset, offset + limit))
      expect(index.page({ offset, limit }, { failuresFirst: true }).hits.map(h => h.id)).toEqual(
        referenceFailuresFirst.slice(offset, offset + limit)
      )
    }
    expect(index.search({ limit: 30 }).map(h => h.id)).toEqual(reference.slice(0, 30))
  })

  it('refuses a bad offset or limit', () => {
    const { index } = fill(3)
    expect(() => index.page({ offset: -1 })).toThrow(InvalidArgumentError)
    expect(() => index.page({ offset: 1.5 })).toThrow(InvalidArgumentError)
    expect(() => index.page({ limit: 1001 })).toThrow(InvalidArgumentError)
  })
})
