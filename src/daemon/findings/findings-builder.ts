// Builds the findings index of a bulk catch-up in a worker thread
// (findings-index-worker.ts) while the main thread checks and stores the
// entries: indexing was about a quarter of a late joiner's CPU, on the one
// thread that also verifies, hashes and writes. The log service hands it the
// accepted findings in cursor order and, when the catch-up goes quiet or a
// search asks, takes the index back (a snapshot, its arrays transferred).
// Where the worker's compiled file is not there (the sources run by a test
// runner) or no worker starts, there is no builder: the main thread indexes.
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import type { FindingsSnapshot } from '../../core/findings/findings-checkpoint.js'
import type { StoredEntry } from '../../core/log/ingest-result.js'

const WORKER = new URL('./findings-index-worker.js', import.meta.url)

/** What the main thread sends: accepted findings (entry bytes end to end, with their cursors and hex ids), or a request for the index. */
export type BuilderRequest =
  { type: 'add'; cursors: Float64Array; offsets: Int32Array; bytes: Uint8Array; ids: string } | { type: 'snapshot'; upTo: number }

/** A batch indexed (`added`: its bytes), the index (with the worker's heap then, for the log), or why not. */
export type BuilderAnswer = { added: number } | { snapshot: FindingsSnapshot; heapBytes: number } | { error: string }

/**
 * Bytes of findings handed over and not indexed yet, past which the log service waits (bounds the memory of a worker that falls behind).
 */
export const BUILDER_MAX_QUEUED_BYTES = 8 * 1024 * 1024

export class FindingsBuilder {
  private readonly worker: Worker
  private failure?: Error
  private answer?: { resolve: (s: { snapshot: FindingsSnapshot; heapBytes: number }) => void; reject: (err: Error) => void }
  /** bytes handed over and not indexed yet */
  private queued = 0
  private drained: Array<() => void> = []
  /** the highest cursor handed over (every accepted entry up to it was seen) */
  private last: number

  private constructor(worker: Worker, from: number) {
    this.worker = worker
    this.last = from
    worker.on('message', (m: BuilderAnswer) => {
      if ('added' in m) {
        this.queued -= m.added
        if (this.queued <= BUILDER_MAX_QUEUED_BYTES) this.wake()
        return
      }
      const waiting = this.answer
      this.answer = undefined
      if ('snapshot' in m) waiting?.resolve(m)
      else waiting?.reject(new Error(m.error))
    })
    worker.on('error', err => {
      this.fail(err)
    })
    worker.on('exit', code => {
      this.fail(new Error(`the findings index worker exited with ${code}`))
    })
    // the daemon's exit does not wait for it
    worker.unref()
  }

  /** A builder whose index starts empty, after cursor `from`; undefined when no worker can run here. */
  static start(from: number): FindingsBuilder | undefined {
    if (WORKER.protocol !== 'file:' || !existsSync(fileURLToPath(WORKER))) return undefined
    try {
      return new FindingsBuilder(new Worker(WORKER), from)
    } catch {
      return undefined
    }
  }

  /** The highest cursor handed over. */
  get cursor(): number {
    return this.last
  }

  /** Why the builder cannot go on (its worker failed or ended), if it cannot. */
  get failed(): Error | undefined {
    return this.failure
  }

  /**
   * Hands over the entries accepted after `cursor`, in cursor order (each
   * must follow the last: false, and nothing sent, when one does not); only
   * the findings among them cross to the worker.
   */
  add(accepted: readonly StoredEntry[]): boolean {
    if (this.failure !== undefined) return false
    let n = 0
    let size = 0
    let next = this.last + 1
    for (const e of accepted) {
      if (e.cursor !== next++) return false
      if (e.entry.kind === 'finding') {
        n++
        size += e.bytes.byteLength
      }
    }
    this.last = next - 1
    if (n === 0) return true
    const cursors = new Float64Array(n)
    const offsets = new Int32Array(n + 1)
    const bytes = new Uint8Array(size)
    const ids: string[] = []
    let i = 0
    for (const e of accepted) {
      if (e.entry.kind !== 'finding') continue
      cursors[i] = e.cursor
      bytes.set(e.bytes, offsets[i])
      offsets[i + 1] = offsets[i] + e.bytes.byteLength
      ids.push(e.id)
      i++
    }
    const request: BuilderRequest = { type: 'add', cursors, offsets, bytes, ids: ids.join('') }
    this.queued += size
    this.worker.postMessage(request, [cursors.buffer, offsets.buffer, bytes.buffer])
    return true
  }

  /** Resolves once the worker is within BUILDER_MAX_QUEUED_BYTES of what it was handed (at once when it is, or it failed). */
  async caughtUp(): Promise<void> {
    if (this.queued <= BUILDER_MAX_QUEUED_BYTES || this.failure !== undefined) return
    await new Promise<void>(resolve => {
      this.drained.push(resolve)
    })
  }

  private wake(): void {
    const waiting = this.drained
    this.drained = []
    for (const w of waiting) w()
  }

  /** The index of everything handed over; the builder is done after it (its worker ends). Rejects when the worker failed. */
  async finish(): Promise<{ snapshot: FindingsSnapshot; heapBytes: number }> {
    if (this.failure !== undefined) throw this.failure
    const upTo = this.last
    try {
      return await new Promise((resolve, reject) => {
        this.answer = { resolve, reject }
        const request: BuilderRequest = { type: 'snapshot', upTo }
        this.worker.postMessage(request)
      })
    } finally {
      this.stop()
    }
  }

  /** Ends the worker; what it built is dropped. */
  stop(): void {
    this.fail(new Error('the findings index builder was stopped'))
    void this.worker.terminate()
  }

  private fail(err: Error): void {
    if (this.failure === undefined) this.failure = err
    this.wake()
    const waiting = this.answer
    this.answer = undefined
    waiting?.reject(err)
  }
}
