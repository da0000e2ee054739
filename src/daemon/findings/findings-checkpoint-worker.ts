// A worker thread that reads and checks the findings checkpoint (its head
// and parts, findings-checkpoint-files) off the main thread (the digests over
// the files and the check of every posting cost most of a restart of a large
// log): it posts back the snapshot, its typed arrays transferred, or the
// error that made the checkpoint unusable.
import { parentPort, workerData } from 'node:worker_threads'
import { readFindingsCheckpointNow, type FindingsCheckpointRead } from './findings-checkpoint-files.js'

export type WorkerAnswer = FindingsCheckpointRead

function answer(): { message: WorkerAnswer; transfer: ArrayBuffer[] } {
  const message = readFindingsCheckpointNow((workerData as { dataDir: string }).dataDir)
  if (!('snapshot' in message)) return { message, transfer: [] }
  const s = message.snapshot
  const arrays = [
    s.docCursor,
    s.docTime,
    s.docKind,
    s.docAuthor,
    ...s.docLength,
    s.docIdHead,
    s.pathStarts,
    s.pathValues,
    s.tagStarts,
    s.tagValues,
    s.recency,
    ...s.segments.flatMap(g => [g.offsets, g.dfs, g.bytes])
  ]
  // each is a copy with a buffer of its own (checkpoint-sections' take, or joined)
  const transfer = [...new Set(arrays.map(a => a.buffer as ArrayBuffer))]
  return { message, transfer }
}

const { message, transfer } = answer()
parentPort?.postMessage(message, transfer)
