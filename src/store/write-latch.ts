// The first failed write to a data dir's LevelDB closes it to writes until
// the daemon restarts.
//
// A write that fails on a full disk can leave a torn record in LevelDB's
// write-ahead log: the log writer counts the whole record as written while
// only part of it reached the file. Later writes succeed once there is room
// again, and are synced and acknowledged, but they sit behind the torn record:
// on the next open LevelDB drops the rest of the log block, or more, as
// corrupt, and they are gone. So nothing written after a failed write can be
// trusted to survive a restart, and none may be acknowledged. The latch sits
// under every store (the log, the direct-message boxes, the local state),
// at the LevelDB's own write methods, so that no write path escapes it. The
// daemon stops at the log's next write (log-service.ts), which the latch
// refuses, so that write's caller is told why rather than finding no daemon.
import { UnavailableError } from '../core/errors.js'
import type { LevelDb } from './level-db.js'

/** A write refused because an earlier one failed. */
export class WritesClosedError extends UnavailableError {
  constructor(first: Error) {
    super(`an earlier write to the data dir failed (${first.message}): nothing more is written until agentd restarts`, { cause: first })
    this.name = 'WritesClosedError'
  }
}

export class WriteLatch {
  private first?: Error
  private readonly listeners = new Set<(err: Error) => void>()

  /** The first failed write, if any. */
  failure(): Error | undefined {
    return this.first
  }

  /** Calls back once, on the first failed write; returns the unsubscribe function. */
  onFailure(listener: (err: Error) => void): () => void {
    this.listeners.add(listener)
    return () => {
      this.listeners.delete(listener)
    }
  }

  /** Runs a write unless one has failed; a failure closes the latch. */
  async run<T>(write: () => Promise<T>): Promise<T> {
    if (this.first !== undefined) throw new WritesClosedError(this.first)
    try {
      return await write()
    } catch (err) {
      // A write raced with closing the db wrote nothing: not a failure of the disk.
      if ((err as { code?: unknown }).code === 'LEVEL_DATABASE_NOT_OPEN') throw err
      if (this.first === undefined) {
        this.first = err as Error
        for (const l of this.listeners) l(this.first)
      }
      throw err
    }
  }
}

type WriteMethod = (...args: unknown[]) => Promise<unknown>
interface WritableImpl {
  _put: WriteMethod
  _del: WriteMethod
  _batch: WriteMethod
  _chainedBatch: () => { _write: WriteMethod }
}

/**
 * Puts `db`'s writes behind a latch: the implementation's put, del, batch and
 * chained-batch write, where abstract-level, its sublevels and writeRaw all
 * end up. Call once, on the root db, before any write.
 */
export function latchWrites(db: LevelDb): WriteLatch {
  const latch = new WriteLatch()
  const impl = db as unknown as WritableImpl
  for (const name of ['_put', '_del', '_batch'] as const) {
    const write = impl[name].bind(db)
    impl[name] = async (...args) => await latch.run(async () => await write(...args))
  }
  const chained = impl._chainedBatch.bind(db)
  impl._chainedBatch = () => {
    const batch = chained()
    const write = batch._write.bind(batch)
    batch._write = async (...args) => await latch.run(async () => await write(...args))
    return batch
  }
  return latch
}
