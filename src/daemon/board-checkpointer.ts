// Keeps the board's checkpoint (core/board/board-checkpoint) on disk while
// the daemon runs, not only at a clean stop: a daemon killed with SIGKILL (a
// crash, an OOM kill) then starts from the last one and folds only the board
// entries after it.
//
// When: once enough board entries were folded since the last checkpoint
// (CHECKPOINT_MIN_NEW, or a quarter of those it covers if more: the write
// costs in proportion to the board, so a larger board is written less
// often), or some were and CHECKPOINT_MAX_AGE_MS passed, or there is none on
// disk. Never sooner than CHECKPOINT_SPACING_MS after the last, nor than
// CHECKPOINT_COST_FACTOR times what the last one held the event loop; only
// while the daemon is quiet (no claim waiting for its answer, no sync batch
// for CHECKPOINT_QUIET_MS), else a little later.
//
// What: the fold's state, taken in one turn of the event loop when every
// entry the board folded is on disk (the log's written cursor is the board's
// cursor), so the checkpoint names an entry the log holds. The file is
// replaced atomically (store/checkpoint-file): a crash mid-write leaves the
// old checkpoint, or none, never a torn one; one that does not fit the log at
// the next start is refused there and the log folded.
import { performance } from 'node:perf_hooks'
import { encodeBoardCheckpoint, type Board } from '../core/board/index.js'
import type { LogState } from '../core/log/log-state.js'
import { BOARD_CHECKPOINT_FILE, writeCheckpoint } from '../store/checkpoint-file.js'
import type { Logger } from '../logger.js'

/** board entries folded since the last checkpoint that make the next one due */
export const CHECKPOINT_MIN_NEW = 1000
/** with fewer new board entries (at least one), the age of the last checkpoint that makes the next one due */
export const CHECKPOINT_MAX_AGE_MS = 5 * 60_000
/** the least time between two checkpoints written while running */
const CHECKPOINT_SPACING_MS = 30_000
/** and, for a large board, this many times what the last one held the event loop */
const CHECKPOINT_COST_FACTOR = 50
/** the daemon counts as quiet once no sync batch came in for this long */
const CHECKPOINT_QUIET_MS = 2000

export interface BoardCheckpointerInit {
  dataDir: string
  board: () => Board
  state: LogState
  /** the last log cursor on disk */
  writtenCursor: () => number
  /** the board kinds, counted per kind in the checkpoint's header */
  kinds: ReadonlySet<string>
  /** true while the daemon is busy with something a checkpoint must not delay (a claim waiting for its answer) */
  busy: () => boolean
  /** ms since the last sync batch came in */
  sinceBatchMs: () => number
  logger: Logger
}

export class BoardCheckpointer {
  private readonly init: BoardCheckpointerInit
  /** the log cursor the checkpoint on disk covers (0: none) */
  private cursor = 0
  /** board entries folded in all, and when the checkpoint on disk was taken */
  private folded = 0
  private foldedAtCheckpoint = 0
  /** the last log cursor the board was told of (every accepted entry, board kind or not) */
  private seenCursor = 0
  private writtenAt = performance.now()
  /** ms the last checkpoint held the event loop (its state encoded) */
  private lastCostMs = 0
  private timer?: NodeJS.Timeout
  private writing?: Promise<void>
  private stopped = false

  constructor(init: BoardCheckpointerInit) {
    this.init = init
  }

  /**
   * After the start's fold: the checkpoint taken in covered `cursor` (0: none) with `covered` board entries; `folded` were folded after it.
   */
  started(cursor: number, covered: number, folded: number): void {
    this.cursor = cursor
    this.foldedAtCheckpoint = covered
    this.folded = covered + folded
    this.seenCursor = this.init.state.cursor
    this.writtenAt = performance.now()
    this.schedule()
  }

  /** An accepted entry reached the board (`board`: one of its kinds, folded). */
  accepted(cursor: number, board: boolean): void {
    if (cursor > this.seenCursor) this.seenCursor = cursor
    if (board) this.folded++
    this.schedule()
  }

  /** When the next checkpoint is due (performance.now() time), or undefined: nothing new to write. */
  private dueAt(): number | undefined {
    const fresh = this.folded - this.foldedAtCheckpoint
    if (this.cursor === 0 && this.init.state.cursor > 0) return 0
    if (fresh <= 0) return undefined
    if (fresh >= Math.max(CHECKPOINT_MIN_NEW, this.foldedAtCheckpoint / 4)) return 0
    return this.writtenAt + CHECKPOINT_MAX_AGE_MS
  }

  private schedule(): void {
    if (this.timer !== undefined || this.writing !== undefined || this.stopped) return
    const due = this.dueAt()
    if (due === undefined) return
    const spaced = this.cursor === 0 ? 0 : this.writtenAt + Math.max(CHECKPOINT_SPACING_MS, CHECKPOINT_COST_FACTOR * this.lastCostMs)
    const wait = Math.max(1000, due - performance.now(), spaced - performance.now())
    this.timer = setTimeout(() => {
      this.timer = undefined
      if (this.stopped) return
      // not while a claim waits for its answer or a sync streams batches in: a little later
      if (this.init.busy() || this.init.sinceBatchMs() < CHECKPOINT_QUIET_MS || !this.consistent()) {
        this.timer = setTimeout(() => {
          this.timer = undefined
          this.schedule()
        }, CHECKPOINT_QUIET_MS)
        this.timer.unref()
        return
      }
      void this.write()
    }, wait)
    this.timer.unref()
  }

  /** The board has folded every entry of the log, and each is on disk. */
  private consistent(): boolean {
    const cursor = this.init.state.cursor
    return cursor > 0 && this.seenCursor === cursor && this.init.writtenCursor() === cursor
  }

  /**
   * Writes the checkpoint now when it would cover more than the one on disk
   * and every folded entry is on disk (else nothing). Failures are logged,
   * never fatal: without it a start folds the log.
   */
  async write(): Promise<void> {
    while (this.writing !== undefined) await this.writing
    const { state } = this.init
    const cursor = state.cursor
    if (cursor <= this.cursor || !this.consistent()) return
    const last = state.atCursor(cursor)
    if (last === undefined) return
    const t0 = performance.now()
    let bytes: Uint8Array
    const folded = this.folded
    try {
      const counts = state.countsByKindUpTo(cursor)
      const kinds = Object.fromEntries([...this.init.kinds].map(k => [k, counts.get(k) ?? 0]))
      bytes = encodeBoardCheckpoint({ cursor, lastId: last.id, kinds, state: this.init.board().foldState() })
    } catch (err) {
      this.init.logger.warn({ err }, 'the board checkpoint was not written')
      return
    }
    this.lastCostMs = performance.now() - t0
    this.writing = (async () => {
      try {
        await writeCheckpoint(this.init.dataDir, bytes, BOARD_CHECKPOINT_FILE)
        this.cursor = cursor
        this.foldedAtCheckpoint = folded
        this.init.logger.info({ cursor, bytes: bytes.byteLength, encodeMs: Math.round(this.lastCostMs) }, 'board checkpoint written')
      } catch (err) {
        this.init.logger.warn({ err }, 'the board checkpoint was not written')
      } finally {
        this.writtenAt = performance.now()
        this.writing = undefined
      }
    })()
    await this.writing
    this.schedule()
  }

  /** No more checkpoints while running (the stop's own write still goes: write). */
  stop(): void {
    this.stopped = true
    clearTimeout(this.timer)
    this.timer = undefined
  }
}
