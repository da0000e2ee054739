// This daemon's own entries reach the log only once they are on disk. Each
// is signed and staged (the log core holds it back from every read), written
// to the pending sublevel with a synced write, and only then placed in the
// log, where sync, gossip and the API can see it; its accepted record follows.
// A crash before the synced write loses an entry nobody has seen; a crash
// after it loses nothing: a restart takes the staged entry in from the
// pending sublevel, since it follows its feed.
//
// So no peer can hold an own entry that this daemon's disk lacks, and a
// restarted daemon never signs a second entry at a seq a peer already holds
// (a fork, which its peers would answer by refusing that entry and every
// later one as a bad prev). `ready` lets the daemon hold the first own entry
// after a restart until it has asked a peer for its own feed's head, for the
// case where the disk lost what the peers have (a restored backup, a lost
// volume).
import { OwnFeedConflictError, type LogState } from '../core/log/log-state.js'
import type { Signer } from '../core/log/crypto.js'
import type { StoredEntry } from '../core/log/ingest-result.js'
import type { EntryKind, KindBodies } from '../core/log/kinds.js'
import type { DeepPartial } from '../gen/agency/v1/log.js'
import type { LogStore } from './log-store.js'

export interface OwnFeedInit {
  state: LogState
  store: Pick<LogStore, 'putPending' | 'putAccepted' | 'removePending'>
  signer: Signer
  /** runs a store write in order with every other write of the log (the daemon's one persist queue) */
  write: (fn: () => Promise<void>) => Promise<void>
  /**
   * runs the write of a placed entry's accepted record, in the same order
   * (default: `write`). That entry is on disk already, in the pending set, so
   * a failure here loses nothing a restart will not take back in.
   */
  writeRecord?: (fn: () => Promise<void>) => Promise<void>
  /** resolves when own entries may be signed (after a restart: once the feed's head is learned) */
  ready?: () => Promise<void>
  /** wall clock, ms since the epoch */
  now?: () => number
}

export interface OwnAppend {
  /** the new entry, placed */
  entry: StoredEntry
  /**
   * what this call placed, in order: the new entry, and earlier own entries
   * whose synced write finished with it (their own calls then place nothing)
   */
  placed: StoredEntry[]
  /** resolves once `placed` are stored as accepted entries */
  stored: Promise<void>
}

export class OwnFeed {
  private readonly init: OwnFeedInit
  /** staged entries dropped by a conflict, and why: their appends fail with it */
  private readonly conflicts = new Map<string, Error>()

  constructor(init: OwnFeedInit) {
    this.init = init
  }

  /**
   * Appends an own entry: staged, on disk (synced), placed. Throws what
   * staging throws (bad input), a write failure (then every staged entry is
   * dropped), or OwnFeedConflictError when entries of this author came back
   * from a peer meanwhile (nothing was placed: append again).
   */
  async append<K extends EntryKind>(kind: K, body: DeepPartial<KindBodies[K]> | Uint8Array): Promise<OwnAppend> {
    const { state, store, write, signer } = this.init
    await this.init.ready?.()
    const staged = state.stage(signer, kind, body, (this.init.now ?? Date.now)())
    try {
      await write(async () => {
        await store.putPending([staged], { sync: true })
      })
    } catch (err) {
      state.dropStaged()
      throw err
    }
    const conflict = this.conflicts.get(staged.id)
    if (conflict != null) {
      this.conflicts.delete(staged.id)
      throw conflict
    }
    let placed: StoredEntry[]
    try {
      placed = state.commitStaged(staged.id)
    } catch (err) {
      if (!(err instanceof OwnFeedConflictError)) throw err
      // Off the disk too, or a restart would take them in and fork the feed.
      for (const id of err.dropped) if (id !== staged.id) this.conflicts.set(id, err)
      await write(async () => {
        await store.removePending(err.dropped)
      })
      throw err
    }
    // Queued before the caller tells anyone: an entry appended in answer is stored after these.
    const writeRecord = this.init.writeRecord ?? write
    const stored =
      placed.length === 0
        ? Promise.resolve()
        : writeRecord(async () => {
            await store.putAccepted(placed, { sync: false })
          })
    return { entry: state.get(staged.id) as StoredEntry, placed, stored }
  }
}
