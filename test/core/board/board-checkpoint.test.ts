// A board taken from a checkpoint of its fold up to some entry, with the
// entries after it folded on top, answers every query as the fold of all the
// entries (whatever the cut, with faults found before or after it); a
// checkpoint that is corrupt, of another version, not a board's, or of
// another log is refused, and the board that refused it is unchanged.
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { Board } from '../../../src/core/board/board.js'
import {
  boardCheckpointFits,
  decodeBoardCheckpoint,
  encodeBoardCheckpoint,
  type BoardLog
} from '../../../src/core/board/board-checkpoint.js'
import type { BoardEntry } from '../../../src/core/board/types.js'
import { InvalidArgumentError } from '../../../src/core/errors.js'
import { TestRun } from '../../../src/gen/agency/v1/log.js'
import { AUTHORS, dead, entriesOf, op, type Op } from './board-ops.js'
import { EntryWriter, snapshot } from './helpers.js'

const ID = 'ab'.repeat(32)

/** The board ops, and test runs on the shared branch (passing or not). */
const anyOp: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: op },
  fc.tuple(fc.constantFrom(...AUTHORS), fc.integer({ min: 0, max: 2 }), fc.integer({ min: 1, max: 12 })).map(
    ([a, failed, l]) =>
      (w: EntryWriter) =>
        w.entry(a, 'test_run', TestRun.fromPartial({ commit: `c${l}`, branch: 'main', passed: 3, failed, total: 3 + failed }), l)
  )
)

/** Everything a board answers, the helpers' snapshot and the rest. */
function views(board: Board): unknown {
  return {
    all: snapshot(board, 0),
    met: board.goalMet(0),
    later: snapshot(board, 1e12),
    integrations: board.integrationResults(),
    landings: AUTHORS.map(a => board.landingsBy(a)),
    durations: board.doneDurations(),
    faulty: board.faultyAuthors(),
    handoffs: ['a', 'b', 'c', 'd'].map(t => [board.handoff(t), board.doneRecord(t), board.nextEpoch(t), board.claimTime(t)]),
    claimable: ['a', 'b', 'c', 'd'].map(t => {
      try {
        return board.checkClaimable(t, 'p2', 0)
      } catch (err) {
        return (err as Error).message
      }
    })
  }
}

function checkpointOf(board: Board): Uint8Array {
  return encodeBoardCheckpoint({ cursor: 7, lastId: ID, kinds: { claim: 3 }, state: board.foldState() })
}

/** A board from the checkpoint `bytes` of the fold of `earlier` (read back when a fault folds it again). */
function restored(bytes: Uint8Array, earlier: readonly BoardEntry[] = []): Board {
  const board = new Board({ liveness: dead })
  board.takeFoldState(decodeBoardCheckpoint(bytes).state, () => earlier)
  return board
}

describe('the board checkpoint', () => {
  it('taken in, with the entries after its cut folded on top, answers as the fold of every entry', () => {
    fc.assert(
      fc.property(
        fc.array(anyOp, { maxLength: 50 }),
        fc.nat(),
        fc.option(fc.tuple(fc.constantFrom(...AUTHORS), fc.integer({ min: 1, max: 8 }), fc.boolean())),
        (ops, at, fault) => {
          const entries = entriesOf(new EntryWriter(), ops)
          const cut = entries.length === 0 ? 0 : at % (entries.length + 1)
          const fold = (list: readonly BoardEntry[], board = new Board({ liveness: dead }), withFault = true): Board => {
            list.forEach(e => {
              board.apply(e)
            })
            if (withFault && fault !== null) board.markFaulty(fault[0], fault[1])
            return board
          }
          const whole = fold(entries)
          // the fault found before the checkpoint (it is in the state) or after it (it folds the board again)
          const before = fold(entries.slice(0, cut), undefined, fault?.[2] === true)
          const board = restored(checkpointOf(before), entries.slice(0, cut))
          expect(views(board)).toEqual(views(before))
          fold(entries.slice(cut), board, fault?.[2] !== true)
          expect(views(board)).toEqual(views(whole))
          // a duplicate of an entry the checkpoint covers changes nothing
          if (cut > 0) expect(board.apply(entries[0])).toBe(false)
        }
      ),
      { numRuns: 300 }
    )
  })

  it("refuses corrupt bytes, another version and states that are not a board's, and the board stays as it was", () => {
    const w = new EntryWriter()
    const source = new Board()
    for (const e of [w.goal('p1', 'ship it'), w.task('p1', { id: 'a' }), w.claim('p2', 'a', 1)]) source.apply(e)
    const bytes = checkpointOf(source)
    expect(views(restored(bytes))).toEqual(views(source))

    for (let i = 0; i < bytes.length; i += Math.max(1, Math.floor(bytes.length / 40))) {
      const bad = Uint8Array.from(bytes)
      bad[i] ^= 0x41
      expect(() => decodeBoardCheckpoint(bad)).toThrow(InvalidArgumentError)
    }
    expect(() => decodeBoardCheckpoint(bytes.subarray(0, bytes.length - 1))).toThrow(InvalidArgumentError)
    expect(() => decodeBoardCheckpoint(new Uint8Array(0))).toThrow(InvalidArgumentError)

    const board = new Board()
    const state = source.foldState() as unknown as Record<string, unknown>
    const notBoards: unknown[] = [
      null,
      7,
      {},
      { ...state, applied: [] },
      { ...state, goals: 3 },
      { ...state, runs: {} },
      { ...state, changes: 'x' },
      { ...state, catalog: { ...(state.catalog as object), specs: [] } },
      { ...state, ledger: { tasks: new Map(), extra: 1 } },
      { ...state, reviewBook: {} },
      // the shapes of a board's, not the contents: refused by the views it answers
      { ...state, ledger: { tasks: new Map([['a', { claimsByEpoch: 5 }]]) } }
    ]
    for (const s of notBoards) {
      expect(() => {
        board.takeFoldState(s, () => [])
      }, JSON.stringify(s)).toThrow(InvalidArgumentError)
      expect(views(board)).toEqual(views(new Board()))
    }
    // still a board that folds
    expect(board.apply(w.task('p3', { id: 'b' }))).toBe(true)
    expect(() => {
      board.takeFoldState(state, () => [])
    }).toThrow(/empty board/)
  })

  it('fits only a log that reaches its cursor with the same entry there and as many entries of each board kind', () => {
    const c = decodeBoardCheckpoint(
      encodeBoardCheckpoint({ cursor: 5, lastId: ID, kinds: { claim: 2, task: 1 }, state: new Board().foldState() })
    )
    const log = (o: Partial<BoardLog> = {}): BoardLog => ({
      cursor: 9,
      idAt: at => (at === 5 ? ID : undefined),
      countsUpTo: () =>
        new Map([
          ['claim', 2],
          ['task', 1]
        ]),
      ...o
    })
    const kinds = ['claim', 'task', 'done']
    expect(boardCheckpointFits(c, log(), kinds)).toBeUndefined()
    expect(boardCheckpointFits(c, log({ cursor: 4 }), kinds)).toMatch(/past the log/)
    expect(boardCheckpointFits(c, log({ idAt: () => 'cd'.repeat(32) }), kinds)).toMatch(/another entry/)
    expect(
      boardCheckpointFits(
        c,
        log({
          countsUpTo: () =>
            new Map([
              ['claim', 2],
              ['task', 1],
              ['done', 1]
            ])
        }),
        kinds
      )
    ).toMatch(/done/)
  })
})
