// Keeps the checkpoint of the log's index (core/log/log-checkpoint) on disk,
// beside the board's (board-checkpointer.ts): a restart takes the index from
// it and folds only the entries after it. Written once enough came in since
// the last (CHECKPOINT_MIN_NEW, or a quarter of what it covers if more), no
// sooner than CHECKPOINT_SPACING_MS after it, and only once no sync batch
// came in for CHECKPOINT_QUIET_MS (a catch-up would write ever larger
// checkpoints on its way); and at the stop. The findings index's checkpoint
// is written with it, up to the same cursor.
import type { LogState } from '../core/log/log-state.js'
import type { AgencyStore } from '../store/index.js'
import { readCheckpoint, removeCheckpoint, writeCheckpoint } from '../store/checkpoint-file.js'
import type { Logger } from '../logger.js'
import type { FindingsService } from './findings/findings-service.js'

/** A checkpoint of the log's index is written once this many entries (or a quarter of those it covers, if more) came in since the last. */
const CHECKPOINT_MIN_NEW = 10_000
/** and no sooner than this after the last one */
const CHECKPOINT_SPACING_MS = 30_000
/** and once no sync batch came in for this long */
const CHECKPOINT_QUIET_MS = 2000

export interface LogCheckpointerComponents {
  state: LogState
  store: Pick<AgencyStore, 'log' | 'dataDir'>
  findings: Pick<FindingsService, 'checkpointCursor' | 'checkpoint'>
  /** ms since the last sync batch came in */
  sinceBatchMs: () => number
  /** false once a write to the data dir failed: nothing more is written */
  writable: () => boolean
  logger: Logger
}

export class LogCheckpointer {
  /** the cursor the checkpoint on disk covers (0: none) */
  private covered = 0
  private writtenAt = 0
  private timer?: NodeJS.Timeout
  private writing?: Promise<void>
  private restoredCursor = 0
  private stopped = false

  constructor(private readonly c: LogCheckpointerComponents) {}

  /** the cursor the checkpoint on disk covers (0: none) */
  get cursor(): number {
    return this.covered
  }

  /** The cursor up to which the last restore took the log's index from its checkpoint (0: it folded the whole log). */
  get restoredFrom(): number {
    return this.restoredCursor
  }

  /**
   * Takes in the checkpoint of the log's index, when there is one that fits
   * the store, and returns the cursor it covers (0 otherwise: the whole log
   * is folded). One that does not fit (corrupt, of another log, or ahead of
   * a store that lost its last unsynced writes) is removed, so it cannot be
   * taken for a later store that has grown past it.
   */
  async restore(): Promise<number> {
    const { state, logger } = this.c
    const { log, dataDir } = this.c.store
    const saved = await readCheckpoint(dataDir)
    if (saved === undefined) return 0
    try {
      const from = state.restoreCheckpoint(saved, { lastCursor: log.lastCursor(), vector: log.loadVector() })
      this.covered = from
      this.restoredCursor = from
      logger.info({ cursor: from, entries: state.size }, 'log index restored from its checkpoint')
      return from
    } catch (err) {
      logger.warn({ err }, 'the log checkpoint does not fit the store: folding the whole log')
      await removeCheckpoint(dataDir).catch(() => {})
      return 0
    }
  }

  /** Schedules a checkpoint when enough came in since the last one. */
  maybeWrite(): void {
    if (this.timer !== undefined || this.writing !== undefined || this.stopped) return
    const fresh = this.c.store.log.lastCursor() - this.covered
    if (fresh < Math.max(CHECKPOINT_MIN_NEW, this.covered / 4)) return
    const wait = Math.max(1000, this.writtenAt + CHECKPOINT_SPACING_MS - Date.now())
    this.timer = setTimeout(() => {
      this.timer = undefined
      // not while a sync streams batches in: a catch-up would write ever larger checkpoints on its way
      if (this.c.sinceBatchMs() < CHECKPOINT_QUIET_MS) {
        this.maybeWrite()
        return
      }
      void this.write()
    }, wait)
    this.timer.unref()
  }

  /**
   * Writes a checkpoint of the log's index up to the last cursor the store
   * has written (the bytes it names are there), off the write path; failures
   * are logged, never fatal: without a checkpoint a restart folds the log.
   */
  async write(): Promise<void> {
    if (this.writing !== undefined) {
      await this.writing
      return
    }
    const { findings } = this.c
    const upTo = this.c.store.log.lastCursor()
    if ((upTo <= this.covered && upTo <= findings.checkpointCursor) || !this.c.writable()) return
    this.writing = (async () => {
      try {
        if (upTo > this.covered) {
          // written from views of the index's columns: no copy of a million rows in memory
          const bytes = this.c.state.checkpointParts(upTo)
          if (bytes === undefined) return
          await writeCheckpoint(this.c.store.dataDir, bytes)
          this.covered = upTo
        }
        if (upTo > findings.checkpointCursor) await findings.checkpoint(upTo)
      } catch (err) {
        this.c.logger.warn({ err }, 'the log checkpoint was not written')
      } finally {
        this.writtenAt = Date.now()
        this.writing = undefined
      }
    })()
    await this.writing
    this.maybeWrite()
  }

  /** No more scheduled checkpoints; write() still writes the last one. */
  stop(): void {
    this.stopped = true
    clearTimeout(this.timer)
    this.timer = undefined
  }
}
