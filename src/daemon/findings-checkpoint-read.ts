// Reads and checks the findings checkpoint of a data dir in a worker thread
// (findings-checkpoint-worker), so that a restart serves while the larger
// part of its findings index is still being read; where the worker's
// compiled file is not there (the sources run by a test runner), in this
// thread after a turn of the event loop.
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import { decodeFindingsCheckpoint } from '../core/findings/findings-checkpoint.js'
import { checkpointPath, FINDINGS_CHECKPOINT_FILE, readCheckpoint } from '../store/checkpoint-file.js'
import type { WorkerAnswer } from './findings-checkpoint-worker.js'

const WORKER = new URL('./findings-checkpoint-worker.js', import.meta.url)

export type FindingsCheckpointRead = WorkerAnswer

/** The data dir's findings checkpoint, decoded and checked, or why there is none to use. Never rejects. */
export async function readFindingsCheckpoint (dataDir: string): Promise<FindingsCheckpointRead> {
  try {
    const path = checkpointPath(dataDir, FINDINGS_CHECKPOINT_FILE)
    if (!existsSync(path)) return { missing: true }
    if (WORKER.protocol === 'file:' && existsSync(fileURLToPath(WORKER))) {
      try {
        return await inWorker(path)
      } catch {
        // no worker could be started (resources): read it here
      }
    }
    return await inThisThread(dataDir)
  } catch (err) {
    // unreadable (a directory, permissions): the log is indexed instead
    return { error: (err as Error).message }
  }
}

/** The same, in this thread, at once (for a caller that cannot wait). */
export function decodeFindingsCheckpointNow (bytes: Uint8Array | undefined): FindingsCheckpointRead {
  if (bytes === undefined) return { missing: true }
  try {
    return { snapshot: decodeFindingsCheckpoint(bytes) }
  } catch (err) {
    return { error: (err as Error).message }
  }
}

async function inThisThread (dataDir: string): Promise<FindingsCheckpointRead> {
  const bytes = await readCheckpoint(dataDir, FINDINGS_CHECKPOINT_FILE)
  return decodeFindingsCheckpointNow(bytes)
}

async function inWorker (path: string): Promise<FindingsCheckpointRead> {
  return await new Promise((resolve, reject) => {
    const worker = new Worker(WORKER, { workerData: { path } })
    // the daemon's exit does not wait for it
    worker.unref()
    let answered = false
    worker.once('message', (m: FindingsCheckpointRead) => { answered = true; resolve(m) })
    worker.once('error', err => { if (!answered) reject(err) })
    worker.once('exit', code => { if (!answered) reject(new Error(`the findings checkpoint worker exited with ${code}`)) })
  })
}
