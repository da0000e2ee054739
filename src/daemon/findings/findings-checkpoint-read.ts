// Reads and checks the findings checkpoint of a data dir (its head and parts,
// findings-checkpoint-files) in a worker thread (findings-checkpoint-worker),
// so that a restart serves while the larger part of its findings index is
// still being read; where the worker's compiled file is not there (the
// sources run by a test runner), in this thread after a turn of the event loop.
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import { checkpointPath, FINDINGS_CHECKPOINT_FILE } from '../../store/checkpoint-file.js'
import { readFindingsCheckpointNow, type FindingsCheckpointRead } from './findings-checkpoint-files.js'

const WORKER = new URL('./findings-checkpoint-worker.js', import.meta.url)

export { readFindingsCheckpointNow, type FindingsCheckpointRead }

/** The data dir's findings checkpoint, decoded and checked, or why there is none to use. Never rejects. */
export async function readFindingsCheckpoint(dataDir: string): Promise<FindingsCheckpointRead> {
  try {
    if (!existsSync(checkpointPath(dataDir, FINDINGS_CHECKPOINT_FILE))) return { missing: true }
    if (WORKER.protocol === 'file:' && existsSync(fileURLToPath(WORKER))) {
      try {
        return await inWorker(dataDir)
      } catch {
        // no worker could be started (resources): read it here
      }
    }
    await new Promise(resolve => setImmediate(resolve))
    return readFindingsCheckpointNow(dataDir)
  } catch (err) {
    // unreadable (a directory, permissions): the log is indexed instead
    return { error: (err as Error).message }
  }
}

async function inWorker(dataDir: string): Promise<FindingsCheckpointRead> {
  return await new Promise((resolve, reject) => {
    const worker = new Worker(WORKER, { workerData: { dataDir } })
    // the daemon's exit does not wait for it
    worker.unref()
    let answered = false
    worker.once('message', (m: FindingsCheckpointRead) => {
      answered = true
      resolve(m)
    })
    worker.once('error', err => {
      if (!answered) reject(err)
    })
    worker.once('exit', code => {
      if (!answered) reject(new Error(`the findings checkpoint worker exited with ${code}`))
    })
  })
}
