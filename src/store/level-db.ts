// The one LevelDB handle of a data dir, and the error mapping for opening it.
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { inspect } from 'node:util'
import { Level, type BatchOperation } from 'level'
import { DataDirError, DataDirLockedError } from './errors.js'

/** Keys are utf8 strings; values are bytes unless a sublevel says otherwise. */
export type LevelDb = Level<string, Uint8Array>

export function levelPath(dataDir: string): string {
  return join(dataDir, 'db')
}

/** Opens `<dataDir>/db`, creating the dir (mode 0700: it also holds the identity key). */
export async function openLevelDb(dataDir: string, tuning: { cacheSize?: number; writeBufferSize?: number } = {}): Promise<LevelDb> {
  try {
    await mkdir(dataDir, { recursive: true, mode: 0o700 })
  } catch (err) {
    throw new DataDirError(dataDir, describeCause(err, dataDir), { cause: err })
  }
  const db: LevelDb = new Level<string, Uint8Array>(levelPath(dataDir), {
    keyEncoding: 'utf8',
    valueEncoding: 'view',
    ...(tuning.cacheSize != null ? { cacheSize: tuning.cacheSize } : {}),
    ...(tuning.writeBufferSize != null ? { writeBufferSize: tuning.writeBufferSize } : {})
  })
  try {
    await db.open()
  } catch (err) {
    if (findCode(err, 'LEVEL_LOCKED') != null) throw new DataDirLockedError(dataDir, { cause: err })
    throw new DataDirError(dataDir, describeCause(err, levelPath(dataDir)), { cause: err })
  }
  return db
}

interface CodedError {
  code?: unknown
  message?: unknown
  cause?: unknown
}

/** The first error in the cause chain with the given code. */
function findCode(err: unknown, code: string): CodedError | undefined {
  for (let e = err as CodedError | undefined, depth = 0; e != null && depth < 10; e = e.cause as CodedError | undefined, depth++) {
    if (e.code === code) return e
  }
  return undefined
}

/** The deepest error in the cause chain: the one that says what went wrong. */
function rootCause(err: unknown): CodedError {
  let e = err as CodedError
  for (let depth = 0; e.cause != null && depth < 10; depth++) e = e.cause
  return e
}

function describeCause(err: unknown, path: string): string {
  const root = rootCause(err)
  switch (root.code) {
    case 'ENOTDIR':
    case 'EEXIST':
      return `${path} (or a parent of it) is not a directory`
    case 'EACCES':
    case 'EPERM':
      return `permission denied on ${path}`
    case 'EROFS':
      return `${path} is on a read-only file system`
    case 'ENOSPC':
      return `no space left on device for ${path}`
    case 'LEVEL_CORRUPTION':
      return `the database in ${path} is corrupt (${String(root.message)})`
    default:
      return typeof root.message === 'string' ? root.message : inspect(root)
  }
}

/** Operations for one atomic batch across sublevels (each op names its sublevel). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each sublevel encodes its own value type
export type LevelBatch = Array<BatchOperation<LevelDb, string, any>>

/** A put or del of a whole key (its sublevel's prefix included): bytes or a string, as LevelDB stores it. */
export type RawOp = { type: 'put'; key: string; value: Uint8Array } | { type: 'del'; key: string }

/**
 * Writes `ops` in one atomic batch. abstract-level's batch() copies,
 * validates and re-encodes every op (about 8 µs each, most of the cost of
 * storing a bulk sync); these ops need none of that (whole keys, bytes), so
 * while the db is open they go straight to the implementation's batch, the
 * call abstract-level itself ends with. This db has no hooks and no write
 * listeners (nothing here adds them), so nothing is skipped that applies.
 * The native side defers a close until a batch in flight is done. Any other
 * state goes through batch(), which reports it.
 */
export async function writeRaw(db: LevelDb, ops: RawOp[], options: { sync: boolean }): Promise<void> {
  const direct = (db as unknown as { _batch?: (ops: RawOp[], options: { sync: boolean }) => Promise<void> })._batch
  if (db.status === 'open' && typeof direct === 'function' && (db.hooks.prewrite as unknown as { noop: boolean }).noop) {
    await direct.call(db, ops, options)
    return
  }
  await db.batch(ops, options)
}
