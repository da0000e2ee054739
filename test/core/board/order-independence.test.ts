import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { Board } from '../../../src/core/board/board.js'
import type { BoardEntry, Liveness } from '../../../src/core/board/types.js'
import { VerdictKind } from '../../../src/gen/agency/v1/log.js'
import { createRandom } from '../../../src/sim/random.js'
import { EntryWriter, snapshot } from './helpers.js'

// Random sets of entries from several authors, with colliding lamports,
// unknown tasks, invalid ids and malformed globs, folded in different orders
// (with duplicates, and with queries in between to exercise the caches) must
// answer every query the same.

const AUTHORS = ['p1', 'p2', 'p3', 'p4']
const TASKS = ['a', 'b', 'c', 'd']
const GLOBS = ['src/**', 'src/core/*.ts', 'src/core/log/x.ts', 'docs/**', 'src/{a,b}/**', 'bad[']
const dead: Liveness = { isLive: peer => peer !== 'p4' }

const author = fc.constantFrom(...AUTHORS)
const task = fc.constantFrom(...TASKS, 'Not A Slug')
const epoch = fc.integer({ min: 0, max: 3 })
const lamport = fc.integer({ min: 1, max: 12 })
const globs = fc.subarray(GLOBS, { maxLength: 2 })

/** Claims written so far, so releases and dones can name a real claim. */
type Claimed = Array<{ author: string, task: string, epoch: number }>
/** Integration requests written so far, so integrations can answer one (matching or not). */
type Requested = string[]
type Op = (w: EntryWriter, claimed: Claimed, requested: Requested) => BoardEntry

function ofClaim (claimed: Claimed, pick: number): { author: string, task: string, epoch: number } {
  return claimed.length > 0 ? claimed[pick % claimed.length] : { author: 'p1', task: 'a', epoch: 1 }
}

const op: fc.Arbitrary<Op> = fc.oneof(
  // claims, releases and dones are the interesting part: weigh them up
  fc.tuple(author, fc.constantFrom('ship it', 'make it fast'), lamport).map(([a, text, l]) => (w: EntryWriter) => w.goal(a, text, l)),
  { weight: 2, arbitrary: fc.tuple(author, task, fc.subarray(TASKS, { maxLength: 2 }), globs, fc.integer({ min: 0, max: 3 }), fc.constantFrom('', 'title'), lamport)
    .map(([a, id, deps, scope, priority, title, l]) => (w: EntryWriter) => w.task(a, { id, deps, scope, priority, title }, l)) },
  { weight: 4, arbitrary: fc.tuple(author, task, epoch, globs, lamport, fc.constantFrom('', 'p1', 'p2'), fc.constantFrom('', 'notes'))
    .map(([a, t, e, scope, l, takeoverOf, handoff]) => (w: EntryWriter, claimed: Claimed) => {
      claimed.push({ author: a, task: t, epoch: e })
      return w.claim(a, t, e, { scope, takeoverOf, handoff }, l)
    }) },
  // releases and dones of claims that exist, so winners do get released
  { weight: 3, arbitrary: fc.tuple(fc.nat(), fc.constantFrom('', 'handing over'), lamport).map(([pick, note, l]) => (w: EntryWriter, claimed: Claimed) => {
    const c = ofClaim(claimed, pick)
    return w.release(c.author, c.task, c.epoch, { note }, l)
  }) },
  { weight: 2, arbitrary: fc.tuple(fc.nat(), globs, lamport).map(([pick, paths, l]) => (w: EntryWriter, claimed: Claimed) => {
    const c = ofClaim(claimed, pick)
    return w.done(c.author, c.task, c.epoch, { paths }, l)
  }) },
  { weight: 2, arbitrary: fc.tuple(author, task, epoch, fc.constantFrom('', 'tried x'), lamport).map(([a, t, e, note, l]) => (w: EntryWriter) => w.release(a, t, e, { note, branch: note === '' ? '' : `br-${a}` }, l)) },
  { weight: 2, arbitrary: fc.tuple(author, task, epoch, globs, lamport).map(([a, t, e, paths, l]) => (w: EntryWriter) => w.done(a, t, e, { paths }, l)) },
  fc.tuple(author, fc.constantFrom('t1', 't2', 'a'), fc.subarray(AUTHORS), lamport).map(([a, t, r, l]) => (w: EntryWriter) => w.request(a, t, r, l)),
  fc.tuple(author, fc.constantFrom('t1', 't2', 'a'), fc.constantFrom(0, 1, 2, 3), lamport)
    .map(([a, t, v, l]) => (w: EntryWriter) => w.verdict(a, t, v as VerdictKind, l)),
  fc.tuple(author, task, globs, fc.constantFrom('merged', 'failed', ''), lamport).map(([a, t, paths, result, l]) => (w: EntryWriter) => w.integration(a, t, paths, result, l)),
  // integration requests, and integrators' answers to them (same or another task and epoch): what lands an assistant's done
  { weight: 2, arbitrary: fc.tuple(fc.nat(), lamport).map(([pick, l]) => (w: EntryWriter, claimed: Claimed, requested: Requested) => {
    const c = ofClaim(claimed, pick)
    const e = w.integrationRequest(AUTHORS[pick % AUTHORS.length], c.task, c.epoch, l)
    requested.push(e.id)
    return e
  }) },
  { weight: 2, arbitrary: fc.tuple(author, fc.nat(), task, epoch, fc.constantFrom('merged', 'merged', 'conflict'), lamport)
    .map(([a, pick, t, e, result, l]) => (w: EntryWriter, claimed: Claimed, requested: Requested) => {
      const id = requested.length > 0 ? requested[pick % requested.length] : 'nobody/1'
      const c = pick % 3 === 0 ? { task: t, epoch: e } : ofClaim(claimed, pick)
      return w.answer(a, id, c.task, c.epoch, result, l)
    }) }
)

function fold (entries: readonly BoardEntry[], queryEvery = 0): Board {
  const board = new Board({ liveness: dead })
  entries.forEach((e, i) => {
    board.apply(e)
    if (queryEvery > 0 && i % queryEvery === 0) snapshot(board, 0)
  })
  return board
}

describe('board fold is order independent', () => {
  it('any delivery order, with duplicates and interleaved queries, gives identical views', () => {
    fc.assert(fc.property(fc.array(op, { maxLength: 60 }), fc.integer(), fc.integer(), (ops, seedA, seedB) => {
      const w = new EntryWriter()
      const claimed: Claimed = []
      const requested: Requested = []
      const entries = ops.map(make => make(w, claimed, requested))
      const shuffledA = createRandom(seedA).shuffle([...entries])
      const rngB = createRandom(seedB)
      const shuffledB = rngB.shuffle([...entries, ...entries.filter(() => rngB.chance(0.3))])

      const expected = snapshot(fold(entries), 0)
      expect(snapshot(fold(shuffledA), 0)).toEqual(expected)
      expect(snapshot(fold(shuffledB, 2), 0)).toEqual(expected)
    }), { numRuns: 1000 })
  })

  it('a duplicate id is a no-op', () => {
    const w = new EntryWriter()
    const board = new Board()
    const t = w.task('p1', { id: 'a' })
    expect(board.apply(t)).toBe(true)
    const before = snapshot(board, 0)
    expect(board.apply(t)).toBe(false)
    expect(board.apply({ ...t, body: { id: 'a', title: 'changed' } })).toBe(false)
    expect(snapshot(board, 0)).toEqual(before)
  })

  it('ignores unknown kinds and malformed entries without changing anything', () => {
    const board = new Board()
    const w = new EntryWriter()
    board.apply(w.task('p1', { id: 'a' }))
    const before = snapshot(board, 0)
    expect(board.apply({ id: 'x/1', author: 'x', seq: 1, lamport: 9, time: 0, kind: 'finding', body: { text: 'hi' } })).toBe(false)
    expect(board.apply({ id: '', author: 'x', seq: 2, lamport: 9, time: 0, kind: 'goal', body: {} })).toBe(false)
    expect(board.apply({ id: 'x/3', author: 'x', seq: 3, lamport: Number.NaN, time: 0, kind: 'goal', body: {} })).toBe(false)
    expect(board.apply({ id: 'x/4', author: 'x', seq: 4, lamport: 9, time: 0, kind: 'claim', body: null })).toBe(false)
    expect(board.apply(w.task('p1', { id: '../etc' }))).toBe(false)
    expect(board.apply(w.claim('p1', 'a', 0))).toBe(false)
    expect(snapshot(board, 0)).toEqual(before)
  })
})
