// A worker thread that reads and checks the findings checkpoint off the main
// thread (the digest over the file and the check of every posting cost most of
// a restart of a large log): it posts back the snapshot, its typed arrays
// transferred, or the error that made the file unusable.
import { parentPort, workerData } from 'node:worker_threads'
import { readFileSync } from 'node:fs'
import { decodeFindingsCheckpoint, type FindingsSnapshot } from '../core/findings/findings-checkpoint.js'

export type WorkerAnswer = { snapshot: FindingsSnapshot } | { missing: true } | { error: string }

function answer (): { message: WorkerAnswer, transfer: ArrayBuffer[] } {
  let bytes: Uint8Array
  try {
    bytes = readFileSync((workerData as { path: string }).path)
  } catch {
    return { message: { missing: true }, transfer: [] }
  }
  try {
    const s = decodeFindingsCheckpoint(bytes)
    const arrays = [s.docCursor, s.docTime, s.docKind, s.docAuthor, ...s.docLength, s.docIdHead, s.pathStarts, s.pathValues, s.tagStarts, s.tagValues, s.recency,
      ...s.segments.flatMap(g => [g.offsets, g.dfs, g.bytes])]
    // each is a copy with a buffer of its own (checkpoint-sections' take)
    const transfer = [...new Set(arrays.map(a => a.buffer as ArrayBuffer))]
    return { message: { snapshot: s }, transfer }
  } catch (err) {
    return { message: { error: (err as Error).message }, transfer: [] }
  }
}

const { message, transfer } = answer()
parentPort?.postMessage(message, transfer)
