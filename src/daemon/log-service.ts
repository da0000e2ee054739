// The shared record inside agentd: the sans-IO LogState, mirrored to LevelDB,
// fed by gossip and anti-entropy; the findings index folded from it is
// findings/findings-service.ts, the checkpoint of its index log-checkpointer.ts.
// Every state change is persisted through one serial queue, in the order the
// core made it, so the store never sees a cursor or seq out of order.
import { performance } from 'node:perf_hooks'
import type { PeerId } from '@libp2p/interface'
import { LogState } from '../core/log/log-state.js'
import { summaryDigest, summaryToWire } from '../core/log/feed-summary.js'
import type { BatchResult, IngestResult, StoredEntry } from '../core/log/ingest-result.js'
import type { EntryKind, KindBodies } from '../core/log/kinds.js'
import type { DeepPartial } from '../gen/agency/v1/log.js'
import type { Signer } from '../core/log/crypto.js'
import type { FindingsIndex } from '../core/findings/findings-index.js'
import { Entry } from '../gen/agency/v1/log.js'
import { idOfBytes } from '../core/log/entry.js'
import type { AgencyStore } from '../store/index.js'
import { OwnFeed } from '../store/own-feed.js'
import { SerialQueue } from '../store/serial-queue.js'
import { readFeeds } from '../store/feed-reader.js'
import { FindingsService } from './findings/findings-service.js'
import { LogCheckpointer } from './log-checkpointer.js'
import { ArrivalTimes } from '../core/log/arrival-times.js'
import { LogSync } from '../mesh/log-sync.js'
import type { SwarmGossip, Verdict } from '../mesh/swarm-gossip.js'
import type { MeshLibp2p } from '../mesh/node.js'
import type { Metrics } from '../metrics/metrics.js'
import type { Logger } from '../logger.js'
import type { EventBus } from './event-bus.js'
import type { StartPhases } from './start-phases.js'
import type { PeerGuard } from '../mesh/peer-guard.js'
import { UnavailableError } from '../core/errors.js'
import { verifyForkProof, type ForkProof } from '../core/log/fork.js'
import { syncPeriodMs } from '../core/log/sync-backoff.js'
import type { ForkProof as WireForkProof } from '../gen/agency/v1/wire.js'

export interface LogServiceInit {
  store: AgencyStore
  signer: Signer
  node: MeshLibp2p
  metrics: Metrics
  events: EventBus
  logger: Logger
  /** how often a random peer is asked for what we lack */
  syncIntervalMs: number
  /** a first bulk catch-up's findings index is built in a worker thread (default false; findings/findings-builder) */
  findingsWorker?: boolean
  guard?: PeerGuard
  /** a write to the data dir failed: the in-memory log is now ahead of the disk, so the daemon must stop */
  onStorageFailure?: (err: Error) => void
  /**
   * After a restart, how long the first own entry may wait for one
   * anti-entropy exchange with a peer, which brings back any of this
   * daemon's own entries that a peer holds and its disk lost (default 10 s;
   * 0: no wait, for a new identity).
   */
  ownHeadWaitMs?: number
  /** bootstrap peers are configured (without them, and with no other author in the log, nobody can hold our entries) */
  hasBootstrapPeers?: boolean
  /** the wall clock an entry's time is read from (informational: no decision reads it) */
  wallClock?: () => number
  /** a peer's entry came by gossip and was accepted: a sign that its author is up (presence's heardFrom) */
  onGossipAccepted?: (author: string) => void
  /** what this log publishes its own entries and fork proofs on, once started */
  gossip?: SwarmGossip
  /** where the restore's phases are timed (start-phases.ts) */
  phases?: StartPhases
}

/** How long the first own entry after a restart waits for an exchange with a peer, by default. */
export const DEFAULT_OWN_HEAD_WAIT_MS = 10_000

export class LogService {
  readonly state: LogState
  /** the findings index folded from this log */
  private readonly findingsService: FindingsService
  /** when the last sync batch came in (performance.now()) */
  private lastBatchAt = Number.NEGATIVE_INFINITY
  readonly sync: LogSync
  private readonly init: LogServiceInit
  private readonly persist = new SerialQueue()
  /** the first failed write to the data dir; every later write is refused */
  private storageFailure?: Error
  private readonly listeners = new Set<(e: StoredEntry) => void>()
  /** peers' gossiped entries accepted this turn, told to the listeners once forwarded (afterForwarding) */
  private readonly deferredAnnouncements: StoredEntry[][] = []
  private forwardTurn?: Promise<void>
  private readonly faultListeners = new Set<(author: string, fromSeq: number) => void>()
  /** per faulty author, the fork seq last told to the fault listeners */
  private readonly faultsTold = new Map<string, number>()
  private gossip?: SwarmGossip
  private timer?: NodeJS.Timeout
  private stopped = false
  /** anti-entropy rounds in a row this daemon started that found nothing to move */
  private quietRounds = 0
  /** told of every finished exchange with a peer */
  private readonly syncRoundListeners = new Set<(peer: string) => void>()
  private lastSyncAt = 0
  private digestCache?: { key: string; digest: Uint8Array }
  private readonly own: OwnFeed
  /** when this replica took in its latest entries (the API's accepted_at) */
  readonly arrivals = new ArrivalTimes()
  /** open once own entries may be signed: the feed's head is learned from a peer, or the wait is over */
  private readonly ownHead: { ready: Promise<void>; open: (why: string) => void; opened: boolean }
  private ownHeadTimer?: NodeJS.Timeout
  /** keeps the checkpoint of this log's index (and the findings index's) on disk */
  private readonly checkpointer: LogCheckpointer

  constructor(init: LogServiceInit) {
    this.init = init
    // The log core keeps an index; the entries stay on disk (the store's archive).
    this.state = new LogState({ archive: init.store.log.archive })
    this.findingsService = new FindingsService({
      state: this.state,
      dataDir: init.store.dataDir,
      logger: init.logger,
      sinceBatchMs: () => this.msSinceBatch(),
      // caught up after a restore that indexed the log: the next restart need not
      onCaughtUp: () => {
        if (this.findingsService.checkpointCursor < this.checkpointer.cursor) void this.checkpoint()
      },
      worker: init.findingsWorker
    })
    this.checkpointer = new LogCheckpointer({
      state: this.state,
      store: init.store,
      findings: this.findingsService,
      sinceBatchMs: () => this.msSinceBatch(),
      writable: () => this.storageFailure === undefined,
      logger: init.logger
    })
    let open = (): void => {}
    const ready = new Promise<void>(resolve => {
      open = resolve
    })
    this.ownHead = {
      ready,
      opened: false,
      open: why => {
        if (this.ownHead.opened) return
        this.ownHead.opened = true
        clearTimeout(this.ownHeadTimer)
        init.logger.debug({ why, seq: this.state.vector().get(init.signer.author) ?? 0 }, 'own feed head known')
        open()
      }
    }
    if (!((init.ownHeadWaitMs ?? DEFAULT_OWN_HEAD_WAIT_MS) > 0)) this.ownHead.open('a new identity')
    this.own = new OwnFeed({
      state: this.state,
      store: init.store.log,
      signer: init.signer,
      write: async fn => {
        await this.write(fn)
      },
      // A placed own entry is in the synced pending set already: if its record
      // cannot be written (a full disk), a restart takes it in from there, so
      // the append stands and is not reported as failed; the next write that
      // fails (its pending record, or a record after the missing one) stops the daemon.
      writeRecord: async fn => {
        await this.persist.run(fn).catch(err => {
          init.logger.warn({ err }, "an own entry's record was not written; it stays in the pending set")
        })
      },
      ready: async () => {
        await this.ownHead.ready
      },
      now: init.wallClock
    })
    this.sync = new LogSync({
      node: init.node,
      guard: init.guard,
      logger: init.logger.child({ part: 'sync' }),
      log: {
        summaries: () => this.state.summaries().map(summaryToWire),
        digest: () => this.digest(),
        entriesFor: remote => this.bytesFor(this.state.cursorGroupsFor(remote)),
        proofsFor: remote => this.state.proofsFor(remote).map(p => ({ a: p.a, b: p.b })),
        ingestBatch: async (entries, from) => {
          await this.ingestBatchBytes(entries, from)
        },
        ingestForkProofs: async (proofs, from) => {
          await this.ingestForkProofs(proofs, from)
        }
      },
      hooks: {
        onRound: (peer, _role, stats) => {
          // Whatever of our own feed this peer held is ours again: own entries may follow it.
          this.ownHead.open(`an exchange with ${peer}`)
          for (const fn of [...this.syncRoundListeners]) fn(peer)
          this.lastSyncAt = performance.now()
          init.metrics.syncRounds.inc()
          init.metrics.syncBytes.inc({ direction: 'sent' }, stats.bytesSent)
          init.metrics.syncBytes.inc({ direction: 'received' }, stats.bytesReceived)
        },
        onMalformed: () => {
          init.metrics.syncRejected.inc()
        }
      }
    })
  }

  /**
   * Loads the log from disk (trusted: it was verified when it came in), a
   * page at a time: the index is rebuilt from the entries' bytes, which stay
   * on disk. The findings index follows in the background (see findings).
   */
  async beforeStart(): Promise<void> {
    await this.restore(this.init.phases)
  }

  async restore(phases?: StartPhases): Promise<void> {
    const { log } = this.init.store
    // read and checked in a worker while the log's index is restored here
    this.findingsService.beginRestore()
    const from = await this.checkpointer.restore()
    phases?.mark('log checkpoint')
    for await (const page of log.bytesAfter(from)) {
      this.state.restoreEntries(page.map(({ cursor, bytes }) => ({ cursor, bytes, id: idOfBytes(bytes), entry: Entry.decode(bytes) })))
    }
    const pending = (await log.loadPending()).map(p => p.entry)
    const forks = await log.loadForks()
    const unblocked = this.state.restoreFinish({ pending, forks })
    // Pending entries that the restored log already completes are accepted now; keep the store in step.
    if (unblocked.accepted.length > 0 || unblocked.pendingRemoved.length > 0) {
      const accepted = new Set(unblocked.accepted.map(a => a.id))
      await log.putAccepted(unblocked.accepted, { sync: true })
      const leftover = unblocked.pendingRemoved.filter(p => !accepted.has(p.id)).map(p => p.id)
      if (leftover.length > 0) await log.removePending(leftover)
    }
    phases?.mark('log tail')
    this.findingsService.endRestore()
    this.checkpointer.maybeWrite()
    for (const author of this.state.faultyAuthors) this.noteFault(author)
    const me = this.init.signer.author
    if (this.init.hasBootstrapPeers !== true && this.state.authors().every(a => a === me)) this.ownHead.open('no peer to ask')
  }

  /**
   * The findings index, with every accepted finding in it (findings/findings-service.ts):
   * what a search reads.
   */
  get findings(): FindingsIndex {
    return this.findingsService.index
  }

  /** The findings index once its checkpoint is taken in (or refused) after a restore, with every accepted finding in it. */
  async findingsReady(): Promise<FindingsIndex> {
    return await this.findingsService.ready()
  }

  /** The log cursor up to which the last restore took the findings index from its checkpoint (0: none). */
  get findingsRestoredFrom(): number {
    return this.findingsService.restoredFrom
  }

  /** Log entries the findings index has not taken in yet. */
  get findingsBehind(): number {
    return this.findingsService.behind
  }

  /** The cursor up to which the last restore took the log's index from its checkpoint (0: it folded the whole log). */
  get restoredFromCheckpoint(): number {
    return this.checkpointer.restoredFrom
  }

  /** Writes the checkpoint of the log's index and the findings index now (log-checkpointer.ts). */
  async checkpoint(): Promise<void> {
    await this.checkpointer.write()
  }

  /**
   * The bytes of the entries at `groups`' cursors (per author), read from the store in windows as a sender takes them (store/feed-reader).
   */
  private bytesFor(groups: number[][]): AsyncGenerator<Uint8Array[]> {
    const { log } = this.init.store
    return readFeeds(groups, {
      lastWritten: () => log.lastCursor(),
      range: async (from, to) => await log.bytesInRange(from, to),
      many: async cursors => await log.bytesAtMany(cursors),
      one: cursor => log.archive.get(cursor)
    })
  }

  /** Publishes on gossip and exchanges with peers from now on (the mesh is up). */
  async start(gossip: SwarmGossip | undefined = this.init.gossip): Promise<void> {
    this.gossip = gossip
    await this.sync.start()
    this.stopped = false
    if (!this.ownHead.opened) {
      this.ownHeadTimer = setTimeout(() => {
        this.ownHead.open('no exchange within the wait')
      }, this.init.ownHeadWaitMs ?? DEFAULT_OWN_HEAD_WAIT_MS)
      this.ownHeadTimer.unref()
    }
    this.scheduleSync()
    this.init.node.addEventListener('peer:connect', evt => {
      // A new connection is where a late joiner or a healed partition catches up.
      // One exchange moves entries both ways, so only one side starts it: the
      // side with the smaller peer id. Both starting would send everything twice.
      const peer = evt.detail
      if (this.init.signer.author > peer.toString()) return
      setTimeout(() => {
        this.sync.syncWith(peer).catch(() => {})
      }, 200)
    })
  }

  async stop(): Promise<void> {
    this.stopped = true
    clearTimeout(this.timer)
    clearTimeout(this.ownHeadTimer)
    this.checkpointer.stop()
    this.findingsService.stop()
    await this.sync.stop().catch(() => {})
    await this.persist.run(async () => {}).catch(() => {})
    // the next start reads this instead of folding the log again
    await this.checkpoint().catch(() => {})
  }

  /**
   * Runs a store write in order. A failed write (a full disk, an I/O error)
   * leaves this replica's memory ahead of its disk: later writes would leave
   * gaps, and a restart would forget entries peers may have seen. So the first
   * failure is final: every later write is refused and the daemon is told to
   * stop; a restart reloads what is on disk.
   */
  private async write(fn: () => Promise<void>): Promise<void> {
    if (this.storageFailure != null) throw this.unwritable(this.storageFailure)
    try {
      await this.persist.run(fn)
    } catch (err) {
      const cause = err as Error
      if (this.storageFailure == null) {
        this.storageFailure = cause
        this.init.logger.error({ err: cause }, 'cannot write to the data dir: stopping')
        this.init.onStorageFailure?.(cause)
      }
      throw this.unwritable(cause)
    }
  }

  private unwritable(cause: Error): UnavailableError {
    return new UnavailableError(`cannot write to the data dir: ${cause.message}; agentd stops and reloads what is on disk when restarted`, {
      cause
    })
  }

  /**
   * Calls back when an author is found faulty, or its fork point is found
   * lower than before: from `fromSeq` on, its entries are on branches that
   * replicas do not share (views count them for nothing). Called at once for
   * the faults the restored log knows.
   */
  onFault(listener: (author: string, fromSeq: number) => void): () => void {
    this.faultListeners.add(listener)
    for (const [author, seq] of this.faultsTold) listener(author, seq)
    return () => {
      this.faultListeners.delete(listener)
    }
  }

  /** Tells the fault listeners about `author` when what is known of its fork point changed. */
  private noteFault(author: string): void {
    const fp = this.state.forkPoint(author)
    if (fp === undefined || fp.seq >= (this.faultsTold.get(author) ?? Number.POSITIVE_INFINITY)) return
    this.faultsTold.set(author, fp.seq)
    for (const l of this.faultListeners) {
      try {
        l(author, fp.seq)
      } catch (err) {
        this.init.logger.error({ err }, 'fault listener failed')
      }
    }
  }

  /** Calls back for every newly accepted entry, local or remote, in acceptance order. */
  onAccepted(listener: (e: StoredEntry) => void): () => void {
    this.listeners.add(listener)
    return () => {
      this.listeners.delete(listener)
    }
  }

  /**
   * Appends a local entry. Resolves once it is on disk (synced): an entry
   * acknowledged to the agent survives a crash. Nothing (sync, gossip, the
   * API, the board) sees it before that; then it is gossiped. After a
   * restart, the first append waits until the feed's head is known (see
   * ownHeadWaitMs).
   */
  async append<K extends EntryKind>(kind: K, body: DeepPartial<KindBodies[K]>): Promise<StoredEntry> {
    const { entry, stored } = await this.appendOwn(kind, body)
    await stored
    return entry
  }

  /**
   * As append, but resolves once the entry is on disk (synced), in the log
   * and published, without waiting for its accepted record's write, which
   * is queued behind the peers' entries being stored (in a burst of claims,
   * one per peer) and which a restart does without (the entry is taken in
   * from the synced pending set): what a claim's answer waits for.
   */
  async appendPlaced<K extends EntryKind>(kind: K, body: DeepPartial<KindBodies[K]>): Promise<StoredEntry> {
    const { entry, stored } = await this.appendOwn(kind, body)
    // its failure is logged where it is written (the entry stays in the pending set)
    stored.catch(() => {})
    return entry
  }

  private async appendOwn<K extends EntryKind>(
    kind: K,
    body: DeepPartial<KindBodies[K]>
  ): Promise<{ entry: StoredEntry; stored: Promise<void> }> {
    if (this.storageFailure != null) throw this.unwritable(this.storageFailure)
    const { entry, placed, stored } = await this.own.append(kind, body)
    this.noteArrivals(placed)
    // On disk already (the synced pending write): the accepted record's write
    // need not hold up the swarm. Published before the listeners run (the
    // board, the index, the WatchLog streams, a heartbeat the board's change
    // signs and publishes), which are queued in acceptance order meanwhile.
    this.deferredAnnouncements.push(placed)
    try {
      for (const e of placed) await this.gossip?.publishEntry(e.bytes)
    } finally {
      this.announceDeferred()
    }
    return { entry, stored }
  }

  /** Gossip handler: judge an entry, store what is accepted or pending. */
  async receiveGossip(bytes: Uint8Array, _from: string): Promise<Verdict> {
    // The core checks size, decoding and everything else, and counts what it rejects.
    const result = this.state.ingestBytes(bytes)
    if (result.status === 'accepted') this.noteArrivals(result.accepted)
    // Stored in order and told to the listeners, but not waited for: a peer's
    // entry is forwarded once it is merged in memory. Waiting for the store
    // put a thread-pool round trip into every hop. Losing the write in a
    // crash loses nothing the swarm lacks (sync brings it back), and a failed
    // write still stops the daemon. Both start once gossipsub has forwarded
    // the entry (see afterForwarding).
    this.persistResult(result).catch(() => {})
    switch (result.status) {
      case 'accepted': {
        // The author's clock to this one: a dashboard figure, skew included; the settle window uses round trips.
        const entry = result.accepted.find(a => a.id === result.id)?.entry
        if (entry != null) {
          this.init.metrics.gossipLatency.observe(Math.max(0, (this.init.wallClock?.() ?? Date.now()) - entry.time) / 1000)
          this.init.onGossipAccepted?.(entry.author)
        }
        return 'accept'
      }
      case 'duplicate':
      case 'pending':
        // A gap: something was missed, so anti-entropy goes back to its full pace.
        if (result.status === 'pending' && this.quietRounds > 0) {
          this.quietRounds = 0
          this.scheduleSync()
        }
        // Pending entries are valid so far but wait for their gap; sync fills it.
        return 'ignore'
      case 'rejected':
        this.init.metrics.logRejected.inc({ reason: result.reason })
        // A fork or a broken chain may be an honest peer relaying what it was
        // given: drop it quietly. Bytes that no honest peer would send are penalised.
        return result.reason === 'fork' || result.reason === 'bad_prev' ? 'ignore' : 'reject'
    }
  }

  /** Takes in a batch of entries from a peer, decoded; resolves once it is stored. */
  async ingestBatch(entries: Entry[], _from: string): Promise<void> {
    await this.storeBatch(this.state.ingestBatch(entries))
  }

  /** Takes in a batch of entries from a peer as their bytes (the sync protocol's input); resolves once it is stored. */
  async ingestBatchBytes(entries: Uint8Array[], _from: string): Promise<void> {
    await this.storeBatch(this.state.ingestBatchBytes(entries))
  }

  private async storeBatch(result: BatchResult): Promise<void> {
    this.noteArrivals(result.accepted)
    for (const [reason, n] of Object.entries(result.rejected)) this.init.metrics.logRejected.inc({ reason }, n)
    await this.persistBatch(result)
  }

  private async persistResult(r: IngestResult): Promise<void> {
    const { log } = this.init.store
    if (r.status === 'accepted') {
      const leftover = r.pendingRemoved.filter(p => !r.accepted.some(a => a.id === p.id)).map(p => p.id)
      const forwarded = this.afterForwarding()
      // Queued before the listeners hear of the entries: one that appends in
      // response (a lost claim's release) takes a later cursor, so its write
      // must come later too, or the store refuses it as out of order.
      const written = this.write(async () => {
        await forwarded
        await log.putAccepted(r.accepted, { sync: false })
        if (leftover.length > 0) await log.removePending(leftover)
      })
      this.announceAfterForwarding(r.accepted)
      await written
    } else if (r.status === 'pending') {
      const removed = r.pendingRemoved.map(p => p.id)
      await this.write(async () => {
        await log.putPending([r.pending])
        if (removed.length > 0) await log.removePending(removed)
      })
    } else if (r.status === 'rejected' && r.proof != null) {
      const proof = r.proof
      this.init.events.emit({ type: 'fork', peerId: proof.author, text: `author forked its feed at seq ${proof.seq}` })
      await this.write(async () => {
        await log.putFork(proof)
      })
      this.noteFault(proof.author)
      this.spreadForkProof(proof)
    }
  }

  /**
   * Tells the swarm about a fork this replica found: peers that hold the
   * other branch, or only one of the two, cannot see it on their own. Only a
   * proof that stands on its own (both signatures checked) is sent, so no
   * peer can fault this daemon for it.
   */
  private spreadForkProof(proof: ForkProof): void {
    if (!verifyForkProof(proof)) return
    this.gossip?.publishForkProof({ a: proof.a, b: proof.b }).catch(() => {})
  }

  /** Gossip handler: a fork proof from a peer. Kept (and forwarded) when valid and new. */
  async receiveForkProof(p: WireForkProof, _from: string): Promise<Verdict> {
    if (p.a == null || p.b == null) return 'reject'
    const proof: ForkProof = { author: p.a.author, seq: p.a.seq, a: p.a, b: p.b }
    if (!verifyForkProof(proof)) return 'reject'
    if (!this.state.ingestForkProof(proof)) return 'ignore'
    this.init.events.emit({ type: 'fork', peerId: proof.author, text: `author forked its feed at seq ${proof.seq} (proof from a peer)` })
    await this.write(async () => {
      await this.init.store.log.putFork(proof)
    })
    this.noteFault(proof.author)
    return 'accept'
  }

  /** Fork proofs from a sync exchange: the valid new ones are kept (not gossiped: every peer's exchanges carry them). */
  async ingestForkProofs(proofs: WireForkProof[], _from: string): Promise<void> {
    for (const p of proofs) {
      if (p.a == null || p.b == null) continue
      const proof: ForkProof = { author: p.a.author, seq: p.a.seq, a: p.a, b: p.b }
      if (!verifyForkProof(proof) || !this.state.ingestForkProof(proof)) continue
      this.init.events.emit({ type: 'fork', peerId: proof.author, text: `author forked its feed at seq ${proof.seq} (proof from a peer)` })
      await this.write(async () => {
        await this.init.store.log.putFork(proof)
      })
      this.noteFault(proof.author)
    }
  }

  private noteArrivals(accepted: StoredEntry[]): void {
    if (accepted.length > 0)
      this.arrivals.note(
        accepted.map(a => a.cursor),
        this.init.wallClock?.() ?? Date.now()
      )
  }

  private async persistBatch(r: BatchResult): Promise<void> {
    const { log } = this.init.store
    const accepted = new Set(r.accepted.map(a => a.id))
    const removed = r.pendingRemoved.filter(p => !accepted.has(p.id)).map(p => p.id)
    // Queued before the listeners run, as in persistResult.
    // Only entries that were pending leave the pending set: a bulk sync's
    // entries mostly never were, and a delete per entry doubled the write.
    const wasPending = r.pendingRemoved.filter(p => accepted.has(p.id)).map(p => p.id)
    this.lastBatchAt = performance.now()
    const written = this.write(async () => {
      if (r.accepted.length > 0) await log.putAccepted(r.accepted, { sync: false, pendingIds: wasPending })
      if (r.pendingAdded.length > 0) await log.putPending(r.pendingAdded)
      if (removed.length > 0) await log.removePending(removed)
      for (const proof of r.forks) await log.putFork(proof)
    })
    this.announceAccepted(r.accepted, true)
    for (const proof of r.forks)
      this.init.events.emit({ type: 'fork', peerId: proof.author, text: `author forked its feed at seq ${proof.seq}` })
    await written
    // a worker indexing this catch-up that fell behind: the next batch waits for it (its queue is memory)
    if (this.findingsService.building) {
      try {
        await this.findingsService.keepPace()
      } finally {
        // the catch-up goes on: its quiet is counted from here
        this.lastBatchAt = performance.now()
      }
    }
    for (const proof of r.forks) this.noteFault(proof.author)
    for (const proof of r.forks) this.spreadForkProof(proof)
  }

  /**
   * Resolves once gossipsub has forwarded what this turn of the event loop
   * accepted. The topic validator's verdict for a peer's entry is awaited a
   * few promise steps deep inside gossipsub, and every microtask queued
   * before its continuation runs first: a relay's listeners (the board, the
   * findings index, each WatchLog stream's gRPC write) and the JavaScript
   * half of the store's write held up every hop. They run on setImmediate,
   * after the forwarding and its encryption and socket writes.
   */
  private afterForwarding(): Promise<void> {
    this.forwardTurn ??= new Promise(resolve => {
      setImmediate(() => {
        this.forwardTurn = undefined
        this.announceDeferred()
        resolve()
      })
    })
    return this.forwardTurn
  }

  /** Tells the listeners of a peer's gossiped entries once they are forwarded, in acceptance order with everything else. */
  private announceAfterForwarding(accepted: StoredEntry[]): void {
    this.deferredAnnouncements.push(accepted)
    void this.afterForwarding()
  }

  private announceDeferred(): void {
    for (const accepted of this.deferredAnnouncements.splice(0)) this.announceNow(accepted, false)
  }

  /** Tells the index, the metrics and the listeners of newly accepted entries (`bulk`: a sync batch), after those still deferred. */
  private announceAccepted(accepted: StoredEntry[], bulk: boolean): void {
    if (this.deferredAnnouncements.length > 0) this.announceDeferred()
    this.announceNow(accepted, bulk)
  }

  private announceNow(accepted: StoredEntry[], bulk: boolean): void {
    // counted per kind once per call: a labelled counter's look-up per entry showed in a bulk sync's profile
    const byKind = new Map<string, number>()
    for (const e of accepted) byKind.set(e.entry.kind, (byKind.get(e.entry.kind) ?? 0) + 1)
    for (const [kind, n] of byKind) this.init.metrics.logEntries.inc({ kind }, n)
    this.findingsService.indexAccepted(accepted, bulk)
    for (const e of accepted) {
      for (const l of this.listeners) {
        try {
          l(e)
        } catch (err) {
          this.init.logger.error({ err }, 'log listener failed')
        }
      }
    }
    if (accepted.length > 0) this.checkpointer.maybeWrite()
  }

  /** The digest of this replica's feed summaries: heads and fork knowledge included (core/log/feed-summary). */
  digest(): Uint8Array {
    const key = `${this.state.size}/${this.state.forks.map(f => `${f.author}@${f.seq}`).join(',')}`
    if (this.digestCache?.key !== key) {
      this.digestCache = { key, digest: summaryDigest(this.state.summaries()) }
    }
    return this.digestCache.digest
  }

  /** ms since the last sync batch came in (Infinity: none yet): a catch-up is under way while this is small */
  msSinceBatch(): number {
    return performance.now() - this.lastBatchAt
  }

  secondsSinceSync(): number {
    return this.lastSyncAt === 0 ? -1 : (performance.now() - this.lastSyncAt) / 1000
  }

  /** The next anti-entropy round, after the period core/log/sync-backoff gives. */
  private scheduleSync(): void {
    if (this.stopped) return
    // One timer at a time: a gap reschedules while a round may be running.
    clearTimeout(this.timer)
    const delay = this.syncPeriodMs()
    this.timer = setTimeout(
      () => {
        this.syncRandomPeer()
          .catch(() => {})
          .finally(() => {
            this.scheduleSync()
          })
      },
      delay * (0.75 + Math.random() * 0.5)
    )
  }

  /** The current anti-entropy period (ms), for status and tests. */
  syncPeriodMs(): number {
    return syncPeriodMs(this.init.syncIntervalMs, this.quietRounds)
  }

  /** One anti-entropy exchange with a random connected peer. */
  async syncRandomPeer(): Promise<void> {
    const peers = this.init.node.getPeers()
    if (peers.length === 0) return
    const peer = peers[Math.floor(Math.random() * peers.length)]
    const moved = await this.sync.syncWith(peer)
    if (moved === undefined) return
    this.quietRounds = moved.sent + moved.received > 0 ? 0 : this.quietRounds + 1
  }

  /** Calls `fn` after every finished exchange with a peer (either side started it); returns the unsubscribe. */
  onSyncRound(fn: (peer: string) => void): () => void {
    this.syncRoundListeners.add(fn)
    return () => {
      this.syncRoundListeners.delete(fn)
    }
  }

  /** An exchange with every connected peer, now (after a stall of this daemon's own: what either side lacks moves at once). */
  syncConnected(): void {
    if (this.stopped) return
    for (const peer of this.init.node.getPeers()) this.sync.syncWith(peer).catch(() => {})
  }

  async syncWith(peer: PeerId): Promise<boolean> {
    return (await this.sync.syncWith(peer)) !== undefined
  }
}
