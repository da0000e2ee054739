// Random board entries for property tests: several authors, colliding
// lamports, unknown tasks, invalid ids and malformed globs, releases and dones
// of claims that exist, integration requests and the integrations answering
// them. Each op writes one entry with an EntryWriter.
import fc from 'fast-check'
import type { BoardEntry, Liveness } from '../../../src/core/board/types.js'
import type { EntryWriter } from './helpers.js'

export const AUTHORS = ['p1', 'p2', 'p3', 'p4']
const TASKS = ['a', 'b', 'c', 'd']
const GLOBS = ['src/**', 'src/core/*.ts', 'src/core/log/x.ts', 'docs/**', 'src/{a,b}/**', 'bad[']
export const dead: Liveness = { isLive: peer => peer !== 'p4' }

const author = fc.constantFrom(...AUTHORS)
const task = fc.constantFrom(...TASKS, 'Not A Slug')
const epoch = fc.integer({ min: 0, max: 3 })
const lamport = fc.integer({ min: 1, max: 12 })
const globs = fc.subarray(GLOBS, { maxLength: 2 })

/** Claims written so far, so releases and dones can name a real claim. */
export type Claimed = Array<{ author: string; task: string; epoch: number }>
/** Integration requests written so far, so integrations can answer one (matching or not). */
export type Requested = string[]
export type Op = (w: EntryWriter, claimed: Claimed, requested: Requested) => BoardEntry

function ofClaim(claimed: Claimed, pick: number): { author: string; task: string; epoch: number } {
  return claimed.length > 0 ? claimed[pick % claimed.length] : { author: 'p1', task: 'a', epoch: 1 }
}

export const op: fc.Arbitrary<Op> = fc.oneof(
  // claims, releases and dones are the interesting part: weigh them up
  fc.tuple(author, fc.constantFrom('ship it', 'make it fast'), lamport).map(
    ([a, text, l]) =>
      (w: EntryWriter) =>
        w.goal(a, text, l)
  ),
  {
    weight: 2,
    arbitrary: fc
      .tuple(
        author,
        task,
        fc.subarray(TASKS, { maxLength: 2 }),
        globs,
        fc.integer({ min: 0, max: 3 }),
        fc.constantFrom('', 'title'),
        lamport
      )
      .map(
        ([a, id, deps, scope, priority, title, l]) =>
          (w: EntryWriter) =>
            w.task(a, { id, deps, scope, priority, title }, l)
      )
  },
  {
    weight: 4,
    arbitrary: fc
      .tuple(author, task, epoch, globs, lamport, fc.constantFrom('', 'p1', 'p2'), fc.constantFrom('', 'notes'))
      .map(([a, t, e, scope, l, takeoverOf, handoff]) => (w: EntryWriter, claimed: Claimed) => {
        claimed.push({ author: a, task: t, epoch: e })
        return w.claim(a, t, e, { scope, takeoverOf, handoff }, l)
      })
  },
  // releases and dones of claims that exist, so winners do get released
  // a release may hand the task to a named peer (hand-off by speed: Release.to)
  {
    weight: 3,
    arbitrary: fc
      .tuple(fc.nat(), fc.constantFrom('', 'handing over'), fc.constantFrom('', ...AUTHORS), lamport)
      .map(([pick, note, to, l]) => (w: EntryWriter, claimed: Claimed) => {
        const c = ofClaim(claimed, pick)
        return w.release(c.author, c.task, c.epoch, { note, to }, l)
      })
  },
  {
    weight: 2,
    arbitrary: fc.tuple(fc.nat(), globs, lamport).map(([pick, paths, l]) => (w: EntryWriter, claimed: Claimed) => {
      const c = ofClaim(claimed, pick)
      return w.done(c.author, c.task, c.epoch, { paths }, l)
    })
  },
  {
    weight: 2,
    arbitrary: fc.tuple(author, task, epoch, fc.constantFrom('', 'tried x'), lamport).map(
      ([a, t, e, note, l]) =>
        (w: EntryWriter) =>
          w.release(a, t, e, { note, branch: note === '' ? '' : `br-${a}` }, l)
    )
  },
  {
    weight: 2,
    arbitrary: fc.tuple(author, task, epoch, globs, lamport).map(
      ([a, t, e, paths, l]) =>
        (w: EntryWriter) =>
          w.done(a, t, e, { paths }, l)
    )
  },
  fc.tuple(author, fc.constantFrom('t1', 't2', 'a'), fc.subarray(AUTHORS), lamport).map(
    ([a, t, r, l]) =>
      (w: EntryWriter) =>
        w.request(a, t, r, l)
  ),
  fc.tuple(author, fc.constantFrom('t1', 't2', 'a'), fc.constantFrom(0, 1, 2, 3), lamport).map(
    ([a, t, v, l]) =>
      (w: EntryWriter) =>
        w.verdict(a, t, v, l)
  ),
  fc.tuple(author, task, globs, fc.constantFrom('merged', 'failed', ''), lamport).map(
    ([a, t, paths, result, l]) =>
      (w: EntryWriter) =>
        w.integration(a, t, paths, result, l)
  ),
  // integration requests, and integrators' answers to them (same or another task and epoch): what lands an assistant's done
  {
    weight: 2,
    arbitrary: fc.tuple(fc.nat(), lamport).map(([pick, l]) => (w: EntryWriter, claimed: Claimed, requested: Requested) => {
      const c = ofClaim(claimed, pick)
      const e = w.integrationRequest(AUTHORS[pick % AUTHORS.length], c.task, c.epoch, l)
      requested.push(e.id)
      return e
    })
  },
  {
    weight: 2,
    arbitrary: fc
      .tuple(author, fc.nat(), task, epoch, fc.constantFrom('merged', 'merged', 'conflict'), lamport)
      .map(([a, pick, t, e, result, l]) => (w: EntryWriter, claimed: Claimed, requested: Requested) => {
        const id = requested.length > 0 ? requested[pick % requested.length] : 'nobody/1'
        const c = pick % 3 === 0 ? { task: t, epoch: e } : ofClaim(claimed, pick)
        return w.answer(a, id, c.task, c.epoch, result, l)
      })
  }
)

/** The entries a list of ops writes, in order. */
export function entriesOf(w: EntryWriter, ops: readonly Op[]): BoardEntry[] {
  const claimed: Claimed = []
  const requested: Requested = []
  return ops.map(make => make(w, claimed, requested))
}
