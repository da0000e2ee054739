// A checkpoint kept as a file beside the LevelDB of a data dir: written to a
// temporary name, synced, and renamed over the old one, so a crash leaves
// either the old checkpoint or the new one whole, never half of one. What it
// holds is checked by whoever reads it (core/log/log-checkpoint): a file
// that does not check out is ignored, and the log is folded instead.
import { readFileSync } from 'node:fs'
import { open, readFile, rename, rm } from 'node:fs/promises'
import { join } from 'node:path'

export const LOG_CHECKPOINT_FILE = 'log-checkpoint'
/** the findings index's checkpoint, written with the log's */
export const FINDINGS_CHECKPOINT_FILE = 'findings-checkpoint'
/** the board's fold, written when the daemon stops */
export const BOARD_CHECKPOINT_FILE = 'board-checkpoint'

export function checkpointPath(dataDir: string, name = LOG_CHECKPOINT_FILE): string {
  return join(dataDir, name)
}

/** The checkpoint's bytes, or undefined when there is none (or it cannot be read). */
export async function readCheckpoint(dataDir: string, name = LOG_CHECKPOINT_FILE): Promise<Uint8Array | undefined> {
  try {
    return await readFile(checkpointPath(dataDir, name))
  } catch {
    return undefined
  }
}

/** The same, read at once (for a caller that cannot wait). */
export function readCheckpointSync(dataDir: string, name = LOG_CHECKPOINT_FILE): Uint8Array | undefined {
  try {
    return readFileSync(checkpointPath(dataDir, name))
  } catch {
    return undefined
  }
}

/** Replaces the checkpoint with `bytes` (or pieces of them, written in order), atomically and synced. */
export async function writeCheckpoint(
  dataDir: string,
  bytes: Uint8Array | readonly Uint8Array[],
  name = LOG_CHECKPOINT_FILE
): Promise<void> {
  const path = checkpointPath(dataDir, name)
  const tmp = `${path}.tmp`
  const fh = await open(tmp, 'w')
  try {
    if (bytes instanceof Uint8Array) await fh.writeFile(bytes)
    else for (const part of bytes) await fh.writeFile(part)
    await fh.sync()
  } finally {
    await fh.close()
  }
  await rename(tmp, path)
  // the rename is durable once the directory is synced
  const dir = await open(dataDir, 'r')
  try {
    await dir.sync()
  } catch {
    /* some file systems cannot sync a directory */
  } finally {
    await dir.close()
  }
}

/** Removes the checkpoint, if any. */
export async function removeCheckpoint(dataDir: string, name = LOG_CHECKPOINT_FILE): Promise<void> {
  await rm(checkpointPath(dataDir, name), { force: true })
}
