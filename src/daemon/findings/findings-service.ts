// The findings index beside the log: taken from its checkpoint at a restore
// (read in a worker meanwhile), kept up with the log entry by entry, caught
// up in chunks between turns of the event loop after a bulk sync (or built in
// a worker during a first catch-up: findings-builder), and checkpointed with
// the log's index. The log tells it what it accepted; a search reads it.
import type { LogState } from '../../core/log/log-state.js'
import type { StoredEntry } from '../../core/log/ingest-result.js'
import { FindingsIndex, type FindingSource } from '../../core/findings/findings-index.js'
import { FINDINGS_CHECKPOINT_FILE, removeCheckpoint } from '../../store/checkpoint-file.js'
import type { Logger } from '../../logger.js'
import { FindingsBuilder } from './findings-builder.js'
import { readFindingsCheckpoint, readFindingsCheckpointNow, type FindingsCheckpointRead } from './findings-checkpoint-read.js'
import { FindingsCheckpointWriter } from './findings-checkpoint-files.js'

/** Findings indexed per turn of the event loop while the index catches up with the log. */
const INDEX_CHUNK = 4096
/** and starts only once no sync batch came in for this long */
const INDEX_QUIET_MS = 300
const FINDING_KIND: ReadonlySet<string> = new Set(['finding'])
/** A sync batch with at least this many findings, reaching an empty index, has the index built in a worker (findings-builder). */
const BUILDER_MIN_FINDINGS = 1000

export interface FindingsServiceComponents {
  /** the log's index the findings are folded from */
  state: LogState
  dataDir: string
  logger: Logger
  /** how long ago the last sync batch came in: the index waits while a catch-up streams in */
  sinceBatchMs: () => number
  /** the index caught up with the log after a restore that indexed it: a checkpoint may now cover it */
  onCaughtUp: () => void
  /** a first bulk catch-up's findings index is built in a worker thread (default false; findings-builder) */
  worker?: boolean
}

export class FindingsService {
  private findingsIndex: FindingsIndex
  /** the index has taken in every finding up to this cursor */
  private indexedCursor = 0
  private indexing?: NodeJS.Immediate
  private indexingLater?: NodeJS.Timeout
  /** the log cursor the findings checkpoint on disk covers (0: none) */
  private findingsCheckpointCursor = 0
  /** after a restore, until the checkpoint is taken in or refused: the index is empty and takes in nothing */
  private findingsLoading = false
  private findingsLoaded: Promise<void> = Promise.resolve()
  /** the checkpoint being read in a worker while the log's index is restored */
  private reading?: Promise<FindingsCheckpointRead>
  /** writes the findings checkpoint in parts, each full segment once */
  private readonly findingsWriter: FindingsCheckpointWriter
  /** while a bulk catch-up reaches an empty index: the worker building it (the findings handed to it are past indexedCursor) */
  private builder?: FindingsBuilder
  /** a builder was started once (it is only for a first catch-up) */
  private builderTried = false
  private handback?: Promise<void>
  private handbackTimer?: NodeJS.Timeout
  /** sync batches waiting for the worker to catch up (the catch-up is not quiet meanwhile) */
  private waitingForBuilder = 0
  private stopped = false

  constructor(private readonly c: FindingsServiceComponents) {
    this.findingsIndex = this.emptyIndex()
    this.findingsWriter = new FindingsCheckpointWriter(c.dataDir)
  }

  /** A restore of the log begins: the index starts empty and its checkpoint is read in a worker meanwhile. */
  beginRestore(): void {
    this.findingsIndex = this.emptyIndex()
    this.indexedCursor = 0
    this.findingsLoading = true
    this.reading = readFindingsCheckpoint(this.c.dataDir)
  }

  /**
   * The log is restored: the checkpoint is taken in once read (the daemon serves meanwhile; a search waits for it, or takes it in at once).
   */
  endRestore(): void {
    const reading = this.reading
    this.reading = undefined
    if (reading !== undefined)
      this.findingsLoaded = reading.then(read => {
        this.take(read)
      })
  }

  /** the log cursor the findings checkpoint on disk covers (0: none) */
  get checkpointCursor(): number {
    return this.findingsCheckpointCursor
  }

  /**
   * A sync batch was stored: while a worker indexes this catch-up and fell
   * behind, the next batch waits for it (its queue is memory).
   */
  async keepPace(): Promise<void> {
    if (this.builder === undefined) return
    this.waitingForBuilder++
    try {
      await this.builder.caughtUp()
    } finally {
      this.waitingForBuilder--
    }
  }

  /** A worker builds the index during a catch-up. */
  get building(): boolean {
    return this.builder !== undefined
  }

  stop(): void {
    this.stopped = true
    if (this.indexing !== undefined) clearImmediate(this.indexing)
    this.indexing = undefined
    clearTimeout(this.indexingLater)
    this.indexingLater = undefined
    this.dropBuilder()
  }

  /**
   * Takes in the checkpoint of the findings index (read and checked by
   * readFindingsCheckpoint) when it is one of this log: its findings are the
   * log's up to its cursor, each with its id. The findings after it are
   * indexed in the background. One that does not fit is removed and the
   * whole log is indexed. Only the first call after a restore counts (a
   * search that could not wait took the checkpoint in already).
   */
  private take(read: FindingsCheckpointRead): void {
    if (!this.findingsLoading || this.stopped) return
    this.findingsLoading = false
    const { dataDir } = this.c
    const refuse = (err: unknown): void => {
      this.c.logger.warn({ err }, 'the findings checkpoint does not fit the log: indexing every finding')
      removeCheckpoint(dataDir, FINDINGS_CHECKPOINT_FILE).catch(() => {})
    }
    if ('snapshot' in read) {
      const snap = read.snapshot
      try {
        const state = this.c.state
        this.findingsIndex = FindingsIndex.fromSnapshot(
          snap,
          { source: this.findingSource() },
          {
            cursor: state.cursor,
            countOfKind: (kind, upTo) => state.countOfKind(kind, upTo),
            holdsAt: (cursor, kind, head) => state.holdsAt(cursor, kind, head)
          }
        )
        this.indexedCursor = snap.cursor
        this.findingsCheckpointCursor = snap.cursor
        // its parts are on disk: the next checkpoint writes only the segments filled since
        this.findingsWriter.adopt(this.findingsIndex, read.parts)
        this.c.logger.info({ cursor: snap.cursor, findings: this.findingsIndex.size }, 'findings index restored from its checkpoint')
      } catch (err) {
        refuse(err)
      }
    } else if ('error' in read) {
      refuse(new Error(read.error))
    }
    this.scheduleIndexing()
  }

  /**
   * The findings index once its checkpoint is taken in (or refused) after a
   * restore, with every accepted finding in it: what a search waits for
   * instead of reading the checkpoint in the event loop (see findings).
   */
  async ready(): Promise<FindingsIndex> {
    await this.findingsLoaded
    // built in a worker: taken back (whatever came in after it is indexed here, below)
    if (this.builder !== undefined) await this.takeBack()
    return this.index
  }

  /** The log cursor up to which the last restore took the findings index from its checkpoint (0: none). */
  get restoredFrom(): number {
    return this.findingsCheckpointCursor
  }

  /**
   * Writes the findings index's checkpoint up to `upTo` beside the log's,
   * when the index has taken in the log that far (while it catches up after
   * a restore, the older checkpoint stays: it is still of this log).
   */
  async checkpoint(upTo: number): Promise<void> {
    if (this.indexedCursor < upTo) return
    const written = await this.findingsWriter.write(this.findingsIndex, upTo)
    if (written === undefined) return
    this.findingsCheckpointCursor = upTo
    this.c.logger.info({ cursor: upTo, ...written, encodeMs: Math.round(written.encodeMs * 10) / 10 }, 'findings checkpoint written')
  }

  /**
   * The findings index, with every accepted finding in it. It is built off
   * the path of ingest: a bulk sync is bounded by hashing and the disk, and the
   * index catches up in chunks between turns of the event loop; a search
   * first takes in whatever it has not reached yet.
   */
  get index(): FindingsIndex {
    // asked for before the worker answered: the checkpoint is read here, at once
    if (this.findingsLoading) this.take(readFindingsCheckpointNow(this.c.dataDir))
    // a reader that cannot wait for the worker: what it was given is indexed here instead
    if (this.builder !== undefined) this.dropBuilder()
    this.indexFindings(Number.POSITIVE_INFINITY)
    return this.findingsIndex
  }

  /**
   * Log entries the findings index has not taken in yet (0 but while it catches up after a restore without its checkpoint; a search takes
   * them in first).
   */
  get behind(): number {
    return this.c.state.cursor - this.indexedCursor
  }

  private emptyIndex(): FindingsIndex {
    return new FindingsIndex({ source: this.findingSource() })
  }

  private findingSource(): FindingSource {
    return { entryAt: c => this.c.state.atCursor(c), cursorOf: id => this.c.state.cursorOf(id) }
  }

  /** Indexes up to `max` findings after the indexed cursor; true when it has reached the log's end. */
  private indexFindings(max: number): boolean {
    if (this.indexedCursor >= this.c.state.cursor) return true
    let n = 0
    for (const e of this.c.state.iterateAfter(this.indexedCursor, FINDING_KIND)) {
      this.findingsIndex.add(e)
      this.indexedCursor = e.cursor
      if (++n >= max) return false
    }
    this.indexedCursor = this.c.state.cursor
    return true
  }

  /**
   * Indexes newly accepted findings from the bytes in hand, when the index
   * has every entry before them (else the background indexing, which reads
   * them back from the store, takes them in order).
   */
  indexAccepted(accepted: readonly StoredEntry[], bulk: boolean): void {
    // while the checkpoint is read, new findings wait: the index takes them in after it, in order
    if (this.findingsLoading || accepted.length === 0) return
    if (this.builder !== undefined) {
      // while the index is taken back, what comes in waits: it is read back from the log after
      if (this.handback !== undefined) return
      if (this.builder.add(accepted)) {
        this.scheduleHandback()
        return
      }
      // not in order: this thread indexes all of it, from where its index is
      this.dropBuilder()
    } else if (bulk && this.startBuilder(accepted)) {
      return
    }
    let behind = false
    for (const e of accepted) {
      if (e.cursor !== this.indexedCursor + 1) {
        behind = true
        continue
      }
      if (e.entry.kind === 'finding') this.findingsIndex.add(e)
      this.indexedCursor = e.cursor
    }
    if (behind) this.scheduleIndexing()
  }

  /**
   * Hands a first bulk catch-up's findings to a worker that builds the index
   * on the other core (findings-builder), when the index is empty and in step
   * and the batch brings enough findings to be worth a thread; true when it did.
   */
  private startBuilder(accepted: readonly StoredEntry[]): boolean {
    if (
      this.c.worker !== true ||
      this.builderTried ||
      this.stopped ||
      this.findingsIndex.size > 0 ||
      accepted[0].cursor !== this.indexedCursor + 1
    )
      return false
    let findings = 0
    for (const e of accepted) if (e.entry.kind === 'finding') findings++
    if (findings < BUILDER_MIN_FINDINGS) return false
    this.builderTried = true
    const builder = FindingsBuilder.start(this.indexedCursor)
    if (builder === undefined) return false
    this.builder = builder
    if (!builder.add(accepted)) {
      this.dropBuilder()
      return false
    }
    this.c.logger.info({ cursor: this.indexedCursor }, 'findings indexed in a worker during the catch-up')
    this.scheduleHandback()
    return true
  }

  /** Takes the index back from the worker once no sync batch came in for a while. */
  private scheduleHandback(): void {
    if (this.handbackTimer !== undefined || this.stopped) return
    const wait = Math.max(0, INDEX_QUIET_MS - this.c.sinceBatchMs())
    this.handbackTimer = setTimeout(() => {
      this.handbackTimer = undefined
      if (this.waitingForBuilder > 0 || this.c.sinceBatchMs() < INDEX_QUIET_MS) {
        this.scheduleHandback()
        return
      }
      void this.takeBack()
    }, wait)
    this.handbackTimer.unref()
  }

  /**
   * Takes in the index the worker built (everything handed to it, in order);
   * what came in since is indexed from the log. When the worker failed, the
   * whole of it is indexed here. Never rejects.
   */
  private async takeBack(): Promise<void> {
    if (this.handback !== undefined) {
      await this.handback
      return
    }
    const builder = this.builder
    if (builder === undefined) return
    this.handback = (async () => {
      try {
        const { snapshot: snap, heapBytes } = await builder.finish()
        // dropped meanwhile (a reader that could not wait): that reader indexed it
        if (this.builder !== builder || this.stopped) return
        this.findingsIndex = FindingsIndex.fromSnapshot(snap, { source: this.findingSource() })
        this.indexedCursor = snap.cursor
        this.c.logger.info(
          { cursor: snap.cursor, findings: this.findingsIndex.size, workerHeapMiB: Math.round(heapBytes / 2 ** 20) },
          'findings index taken back from its worker'
        )
      } catch (err) {
        if (this.builder === builder && !this.stopped)
          this.c.logger.warn({ err }, 'the findings index worker failed: indexing in this thread')
      } finally {
        if (this.builder === builder) this.builder = undefined
        this.handback = undefined
        this.scheduleIndexing()
      }
    })()
    await this.handback
  }

  /** Stops the worker; what it was handed is indexed from the log instead (the index is still where it was before). */
  private dropBuilder(): void {
    clearTimeout(this.handbackTimer)
    this.handbackTimer = undefined
    this.builder?.stop()
    this.builder = undefined
  }

  private scheduleIndexing(): void {
    if (this.findingsLoading) return
    // the worker has the findings after indexedCursor; it hands them back when the catch-up is quiet
    if (this.builder !== undefined) return
    if (this.indexing !== undefined || this.indexingLater !== undefined || this.stopped) return
    // While a sync is streaming batches in, the index waits: ingest is then
    // bounded by hashing and the disk, and the index catches up after.
    const sinceBatch = this.c.sinceBatchMs()
    if (sinceBatch < INDEX_QUIET_MS) {
      this.indexingLater = setTimeout(() => {
        this.indexingLater = undefined
        this.scheduleIndexing()
      }, INDEX_QUIET_MS - sinceBatch)
      this.indexingLater.unref()
      return
    }
    this.indexing = setImmediate(() => {
      this.indexing = undefined
      if (this.stopped) return
      try {
        if (!this.indexFindings(INDEX_CHUNK)) this.scheduleIndexing()
        // caught up after a restore that indexed the log: the next restart need not
        else this.c.onCaughtUp()
      } catch (err) {
        // the store closed under it (a stop racing the turn) or could not be read: the next search takes the rest in
        this.c.logger.warn({ err }, 'indexing findings in the background stopped')
      }
    })
  }
}
