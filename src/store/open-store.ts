// Opens a data dir's store: one LevelDB at <dataDir>/db, shared by the log,
// the direct-message boxes and the local state through sublevels.
import { componentLogger } from '../logger.js'
import { DataDirError } from './errors.js'
import { openLevelDb, levelPath, type LevelBatch, type LevelDb } from './level-db.js'
import { LogStore } from './log-store.js'
import { MessageStore } from './message-store.js'
import { StateStore } from './state-store.js'
import { latchWrites, type WriteLatch } from './write-latch.js'

/**
 * Bumped when the key layout changes; a newer store is refused rather than
 * misread, an older one is moved to this layout when opened. 2: the log is
 * one key per entry, by cursor (log-store.ts).
 */
export const STORE_SCHEMA = 2

export interface AgencyStore {
  readonly dataDir: string
  /** the LevelDB directory, <dataDir>/db */
  readonly path: string
  readonly db: LevelDb
  readonly log: LogStore
  readonly messages: MessageStore
  readonly state: StateStore
  /** closed by the first failed write: every later one is refused (write-latch.ts) */
  readonly writes: WriteLatch
  /** Flushes and releases the data dir lock. Safe to call twice. */
  close: () => Promise<void>
}

export interface OpenStoreOptions {
  /** LevelDB block cache in bytes (LevelDB default 8 MiB) */
  cacheSize?: number
  /** LevelDB write buffer in bytes (LevelDB default 4 MiB); larger speeds bulk sync */
  writeBufferSize?: number
}

const log = componentLogger('store')

/**
 * Opens (creating if missing) the store of a data dir.
 * @throws DataDirLockedError when another agentd holds the data dir
 * @throws DataDirError when the dir cannot be created or opened
 */
export async function openStore(dataDir: string, opts: OpenStoreOptions = {}): Promise<AgencyStore> {
  const db = await openLevelDb(dataDir, opts)
  const writes = latchWrites(db)
  try {
    await checkSchema(db, dataDir, STORE_SCHEMA)
    const [logStore, messages] = await Promise.all([LogStore.open(db), MessageStore.open(db)])
    const state = new StateStore(db)
    let closing: Promise<void> | undefined
    log.info({ dataDir, entries: logStore.count(), inbox: messages.inboxCount() }, 'store opened')
    return {
      dataDir,
      path: levelPath(dataDir),
      db,
      log: logStore,
      messages,
      state,
      writes,
      close: async () => {
        closing ??= db.close()
        await closing
      }
    }
  } catch (err) {
    await db.close().catch(() => undefined)
    throw err
  }
}

async function checkSchema(db: LevelDb, dataDir: string, schema: number): Promise<void> {
  const meta = db.sublevel<string, string>('meta', { keyEncoding: 'utf8', valueEncoding: 'utf8' })
  const stored = await meta.get('schema')
  if (stored == null) {
    const ops: LevelBatch = [{ type: 'put', sublevel: meta, key: 'schema', value: String(schema) }]
    await db.batch(ops, { sync: true })
    return
  }
  if (Number(stored) > schema) {
    throw new DataDirError(dataDir, `its store was written by a newer agentd (store schema ${stored}, this one reads ${schema})`)
  }
  if (Number(stored) === 1 && schema >= 2) {
    const moved = await LogStore.migrateFromSchema1(db)
    const ops: LevelBatch = [{ type: 'put', sublevel: meta, key: 'schema', value: String(schema) }]
    await db.batch(ops, { sync: true })
    log.info({ dataDir, entries: moved }, 'moved the log to store schema 2')
  }
}
