// A worker thread that builds the findings index of a late joiner's catch-up
// beside the main thread (findings-builder.ts): the main thread checks and
// stores the entries, this one indexes the findings among them, on the other
// core. It takes batches of accepted findings (their bytes, cursors and ids,
// in cursor order) and answers a snapshot of the index with its typed arrays
// transferred, which the main thread takes in (FindingsIndex.fromSnapshot).
import { parentPort } from 'node:worker_threads'
import { getHeapStatistics } from 'node:v8'
import { FindingsIndex } from '../../core/findings/findings-index.js'
import { decodeEntry } from '../../core/log/entry.js'
import { scanEntry } from '../../core/log/entry-scan.js'
import type { FindingsSnapshot } from '../../core/findings/findings-checkpoint.js'
import type { BuilderAnswer, BuilderRequest } from './findings-builder.js'

// Hits are never read here: only the main thread searches. Superseding
// findings' documents are kept by the index itself (supersederDoc).
const index = new FindingsIndex({ source: { entryAt: () => undefined, cursorOf: () => 0 } })

function take(m: Extract<BuilderRequest, { type: 'add' }>): void {
  const bytes = Buffer.from(m.bytes.buffer, m.bytes.byteOffset, m.bytes.byteLength)
  for (let i = 0; i < m.cursors.length; i++) {
    const raw = bytes.subarray(m.offsets[i], m.offsets[i + 1])
    // the main thread accepted these: they decode (plain form scanned, anything else decoded)
    const entry = scanEntry(raw) ?? decodeEntry(raw)
    index.add({ id: m.ids.slice(i * 64, i * 64 + 64), cursor: m.cursors[i], entry, bytes: raw })
  }
}

function transferables(s: FindingsSnapshot): ArrayBuffer[] {
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
  // a frozen segment shares no buffer with another array, but a snapshot's arrays may share one: each buffer once
  return [...new Set(arrays.map(a => a.buffer as ArrayBuffer))]
}

parentPort?.on('message', (m: BuilderRequest) => {
  try {
    if (m.type === 'add') {
      take(m)
      const done: BuilderAnswer = { added: m.bytes.byteLength }
      parentPort?.postMessage(done)
      return
    }
    const snapshot = index.snapshot(m.upTo)
    if (snapshot === undefined) throw new Error('the findings were not added in cursor order')
    const answer: BuilderAnswer = { snapshot, heapBytes: getHeapStatistics().used_heap_size }
    // the index is not used after its snapshot (the thread ends): its arrays may go with it
    parentPort?.postMessage(answer, transferables(snapshot))
  } catch (err) {
    const answer: BuilderAnswer = { error: (err as Error).message }
    parentPort?.postMessage(answer)
  }
})
