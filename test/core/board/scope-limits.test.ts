// What a peer's scope may cost: the caps apply when a claim or task is folded
// in (and a local claim over them is refused), and the indexed overlap search
// finds exactly what comparing every pair would.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Board } from '../../../src/core/board/board.js'
import { overlapsFor } from '../../../src/core/board/claim-overlaps.js'
import { scopesOverlap } from '../../../src/core/board/glob-overlap.js'
import { MAX_GLOB_ALTERNATIVES, MAX_GLOB_LENGTH, parseGlob, validateGlob } from '../../../src/core/board/glob-pattern.js'
import { MAX_SCOPE_GLOBS, MAX_SCOPE_UNITS, patternUnits } from '../../../src/core/board/scope-limits.js'
import { EntryWriter } from './helpers.js'

function boardWith(...entries: ReturnType<EntryWriter['entry']>[]): Board {
  const b = new Board()
  for (const e of entries) b.apply(e)
  return b
}

describe('scope caps', () => {
  it("keeps the first MAX_SCOPE_GLOBS globs of a peer's claim and of a task's scope hints", () => {
    const w = new EntryWriter()
    const many = Array.from({ length: MAX_SCOPE_GLOBS * 4 }, (_, i) => `src/m${i}/**`)
    const b = boardWith(
      w.task('p', { id: 't', scope: many }),
      w.task('p', { id: 'u' }),
      w.claim('eve', 'u', 1, { scope: many }),
      w.claim('amy', 't', 1)
    )
    expect(b.task('u', 0)?.claimScope).toEqual(many.slice(0, MAX_SCOPE_GLOBS))
    expect(b.task('t', 0)?.scope).toEqual(many.slice(0, MAX_SCOPE_GLOBS))
    expect(b.holder('t')?.scope).toEqual(many.slice(0, MAX_SCOPE_GLOBS))
    // A glob past the cap overlaps nothing: the board never holds it.
    const mine = { task: 'mine', holder: 'me', epoch: 1, scope: [many.at(-1) as string] }
    expect(overlapsFor(b, mine, 0)).toEqual([])
  })

  it('drops globs longer than MAX_GLOB_LENGTH when folding, and counts a glob with too many brace alternatives for nothing', () => {
    const w = new EntryWriter()
    const long = `src/${'x'.repeat(MAX_GLOB_LENGTH)}`
    const braces = `src/{${Array.from({ length: MAX_GLOB_ALTERNATIVES + 1 }, (_, i) => `f${i}`).join(',')}}.ts`
    const b = boardWith(w.task('p', { id: 'u' }), w.claim('eve', 'u', 1, { scope: [long, braces, 'docs/**'] }))
    expect(b.task('u', 0)?.claimScope).toEqual([braces, 'docs/**'])
    expect(overlapsFor(b, { task: 'mine', holder: 'me', epoch: 1, scope: ['src/f1.ts'] }, 0)).toEqual([])
    expect(overlapsFor(b, { task: 'mine', holder: 'me', epoch: 1, scope: ['docs/a.md'] }, 0).map(o => o.globs)).toEqual([
      [['docs/**', 'docs/a.md']]
    ])
    expect(() => validateGlob(braces)).toThrow(/more than 64 alternatives/)
  })

  it("compares at most MAX_SCOPE_UNITS of a scope's expanded alternatives: the globs after that count for nothing", () => {
    // Each glob expands to 32 alternatives of about 20 characters: a few fill the budget.
    const big = (i: number): string => `lib${i}/{${Array.from({ length: 32 }, (_, k) => `part${k}`).join(',')}}/${'y'.repeat(10)}.ts`
    const scope = [...Array.from({ length: 8 }, (_, i) => big(i)), 'docs/**']
    const units = scope.slice(0, 8).map(g => patternUnits(parseGlob(g)))
    expect(units[0]).toBeLessThan(MAX_SCOPE_UNITS)
    expect(units.reduce((x, y) => x + y, 0)).toBeGreaterThan(MAX_SCOPE_UNITS)
    const w = new EntryWriter()
    const b = boardWith(w.task('p', { id: 'u' }), w.claim('eve', 'u', 1, { scope }))
    expect(overlapsFor(b, { task: 'mine', holder: 'me', epoch: 1, scope: ['lib0/part3/**'] }, 0)).toHaveLength(1)
    expect(overlapsFor(b, { task: 'mine', holder: 'me', epoch: 1, scope: ['docs/a.md'] }, 0)).toEqual([])
    expect(scopesOverlap(scope, ['docs/a.md'])).toEqual([])
  })

  it('refuses a local claim over the caps, naming the cap, and changes nothing', () => {
    const w = new EntryWriter()
    const b = boardWith(w.task('p', { id: 't' }))
    const many = Array.from({ length: MAX_SCOPE_GLOBS + 1 }, (_, i) => `src/m${i}/**`)
    expect(() => b.checkClaimable('t', 'me', 0, many)).toThrow(new RegExp(`at most ${MAX_SCOPE_GLOBS} globs`))
    const heavy = Array.from(
      { length: 8 },
      (_, i) => `lib${i}/{${Array.from({ length: 32 }, (_, k) => `part${k}`).join(',')}}/${'y'.repeat(10)}.ts`
    )
    expect(() => b.checkClaimable('t', 'me', 0, heavy)).toThrow(/expands to more than/)
    expect(b.checkClaimable('t', 'me', 0, many.slice(0, MAX_SCOPE_GLOBS)).scope).toHaveLength(MAX_SCOPE_GLOBS)
  })
})

describe('the indexed overlap search', () => {
  const segment = fc.constantFrom('src', 'test', 'docs', 'core', 'a', 'b', '*', '**', '*.ts', 'x?', '{a,b}', '[ab]', 'core.ts')
  const glob = fc.array(segment, { minLength: 1, maxLength: 4 }).map(s => s.join('/'))
  const scope = fc.array(glob, { minLength: 1, maxLength: 3 })

  it('reports exactly the pairs that comparing every glob with every glob reports', () => {
    fc.assert(
      fc.property(fc.array(scope, { minLength: 1, maxLength: 8 }), scope, (others, mine) => {
        const w = new EntryWriter()
        const entries = others.flatMap((s, i) => [w.task('p', { id: `t${i}` }), w.claim(`peer${i}`, `t${i}`, 1, { scope: s })])
        const b = boardWith(...entries, w.task('p', { id: 'mine' }))
        const me = { task: 'mine', holder: 'me', epoch: 1, scope: mine }
        const expected = others.map((s, i) => ({ task: `t${i}`, globs: scopesOverlap(s, mine) })).filter(x => x.globs.length > 0)
        expect(overlapsFor(b, me, 0).map(o => ({ task: o.a.task, globs: o.globs }))).toEqual(expected)
      }),
      { numRuns: 300 }
    )
  })
})
