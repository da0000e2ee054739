// The byte format of a checkpoint of the board: the fold's state (Board.
// foldState) up to a log cursor, what a restart takes in instead of folding
// every task, claim, release, review and test run of the log again. The
// entries after its cursor are folded on top as usual (the board is a
// function of the set of entries it applied, so that gives the same board).
//
// In the container of core/log/checkpoint-sections.ts, under "AGBCKPT1":
//   header   JSON { version, cursor, lastId, kinds: { kind: count } }: the log
//            cursor it covers, the id of the entry there, and how many
//            entries of each board kind the log holds up to it
//   state    the fold's state in the structured-clone format of node:v8
//            (Maps, Sets and shared records kept as they are)
//
// decodeBoardCheckpoint checks the container's digest and the header, and
// that the state decodes; whether it is of this log is for the caller to
// check against the log (boardCheckpointFits), and whether it has a
// board's shape for Board.takeFoldState. Each throws InvalidArgumentError.
import { deserialize, serialize } from 'node:v8'
import { InvalidArgumentError } from '../errors.js'
import { decodeSections, encodeSections } from '../log/checkpoint-sections.js'
import type { BoardFoldState } from './board.js'

const MAGIC = new TextEncoder().encode('AGBCKPT1')
/** changes whenever a part of the board changes its fields: an older checkpoint is then refused, and the log folded */
export const BOARD_STATE_VERSION = 4

export interface BoardCheckpoint {
  /** the log cursor the fold has taken in every entry up to */
  cursor: number
  /** the id of the log's entry at that cursor */
  lastId: string
  /** per board kind, the log's entries of it up to the cursor */
  kinds: Record<string, number>
  state: unknown
}

export function encodeBoardCheckpoint(c: {
  cursor: number
  lastId: string
  kinds: Record<string, number>
  state: BoardFoldState
}): Uint8Array {
  const state = serialize(c.state)
  return encodeSections(
    MAGIC,
    { version: BOARD_STATE_VERSION, cursor: c.cursor, lastId: c.lastId, kinds: c.kinds, stateBytes: state.byteLength },
    [state]
  )
}

function bad(why: string): never {
  throw new InvalidArgumentError(`not a usable board checkpoint: ${why}`)
}

export function decodeBoardCheckpoint(bytes: Uint8Array): BoardCheckpoint {
  const { header: h, view, end } = decodeSections(bytes, MAGIC, 'board checkpoint')
  if (h.version !== BOARD_STATE_VERSION) bad(`version ${String(h.version)}, not ${BOARD_STATE_VERSION}`)
  const cursor = h.cursor
  if (typeof cursor !== 'number' || !Number.isSafeInteger(cursor) || cursor < 1) bad('cursor')
  if (typeof h.lastId !== 'string' || !/^[0-9a-f]{64}$/.test(h.lastId)) bad('last id')
  const kinds = h.kinds
  if (
    typeof kinds !== 'object' ||
    kinds === null ||
    Array.isArray(kinds) ||
    Object.values(kinds).some(n => typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0)
  )
    bad('kinds')
  const n = h.stateBytes
  if (typeof n !== 'number' || !Number.isSafeInteger(n)) bad('state length')
  const stateBytes = view(n)
  end()
  let state: unknown
  try {
    state = deserialize(stateBytes)
  } catch (err) {
    bad(`the state does not decode (${(err as Error).message})`)
  }
  return { cursor, lastId: h.lastId, kinds: kinds as Record<string, number>, state }
}

/** What a log answers for boardCheckpointFits. */
export interface BoardLog {
  /** the last cursor the log holds */
  cursor: number
  /** the id of the entry at `cursor`, if any */
  idAt: (cursor: number) => string | undefined
  /** how many entries of each kind the log holds up to a cursor */
  countsUpTo: (upTo: number) => ReadonlyMap<string, number>
}

/**
 * Whether the checkpoint is of this log: the log reaches its cursor, holds
 * the entry it names there, and as many entries of each board kind up to it.
 * (Cursors are this replica's arrival order: another log with that entry at
 * that cursor and the same counts is not one a data dir comes to hold.)
 */
export function boardCheckpointFits(c: BoardCheckpoint, log: BoardLog, boardKinds: Iterable<string>): string | undefined {
  if (c.cursor > log.cursor) return `it covers cursor ${c.cursor}, past the log's ${log.cursor}`
  if (log.idAt(c.cursor) !== c.lastId) return `the log has another entry at cursor ${c.cursor}`
  const counts = log.countsUpTo(c.cursor)
  for (const kind of boardKinds) {
    const held = counts.get(kind) ?? 0
    if (held !== (c.kinds[kind] ?? 0)) return `it counts ${c.kinds[kind] ?? 0} ${kind} entries up to cursor ${c.cursor}, the log ${held}`
  }
  return undefined
}
