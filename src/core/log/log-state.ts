// The in-memory log: a grow-only set of valid entries, kept as one feed per
// author. Pure: entries and time come in as arguments, and every call returns
// what changed so that the caller can store, forward and index it.
//
// Order of checks for an entry: size, duplicate (by id, which reads no
// field), signature against the key `author` names, then content (seq,
// lamport, prev length, kind, body), then its place in the author's feed.
//
// Own entries: `stage` signs the next entry of this replica's author without
// placing it, so no read (vector, entriesAfter, get, ordered, ...) shows it;
// `commitStaged` places it once the caller has it on disk. A peer can then
// never pull an own entry that a crash could take away, and a restarted
// replica never signs a second, different entry at a seq a peer already holds.
//
// Divergence: anti-entropy compares head ids, not only seqs (feed-summary.ts).
// When a peer's head for an author is not the entry this replica holds at that
// seq, the two hold different branches of a fork: this replica sends probes
// (its entries at seq, seq-1, seq-2, seq-4, ...), which the peer finds to be
// the same as its own (below the fork) or different (a fork proof). The
// highest same and lowest different seq bracket the fork point; the next
// exchange sends the entries in the bracket, which yields a proof whose two
// entries share a prev: the fork point exactly (fork-registry.ts).
//
// Faulty authors: after a fork the author is marked faulty and the proof kept,
// but entries that extend the chain this replica holds are still accepted.
// Refusing them would not undo the fork (replicas may hold different branches)
// and would stall sync on that author; views decide what a faulty author's
// entries count for, using `faultyAuthors`.
import type { DeepPartial, Entry } from '../../gen/agency/v1/log.js'
import { FailedPreconditionError, InvalidArgumentError, TooLargeError } from '../errors.js'
import { AcceptedEntries, type EntryArchive, type EntryMeta } from './accepted-entries.js'
import { BatchCollector } from './batch-collector.js'
import { contentFault } from './check-entry.js'
import { sha256, toHex, type Signer } from './crypto.js'
import { decodeEntry, encodeEntry, idOfBytes, signEntry, verifyEntry } from './entry.js'
import { scanEntry } from './entry-scan.js'
import { verifyForkProof, type ForkProof } from './fork.js'
import { ForkRegistry, type ForkPoint } from './fork-registry.js'
import { probeSeqs, type FeedSummaries, type FeedSummary } from './feed-summary.js'
import {
  REJECT_REASONS,
  type BatchResult,
  type IngestResult,
  type PendingEntry,
  type RejectReason,
  type StoredEntry
} from './ingest-result.js'
import { encodeBody, isKnownKind, type EntryKind, type KindBodies } from './kinds.js'
import {
  MAX_DIVERGENCE_RANGE,
  MAX_DIVERGENT_AUTHORS_PER_EXCHANGE,
  MAX_ENTRY_BYTES,
  MAX_FORK_PROOFS_PER_EXCHANGE,
  MAX_PENDING_BYTES,
  MAX_PENDING_PER_AUTHOR,
  MAX_PENDING_TOTAL
} from './limits.js'
import { PendingSet } from './pending-set.js'
import { checkpointParts, decodeCheckpoint, encodeCheckpoint } from './log-checkpoint.js'
import { prepareRestore, type RestoredEntry, type RestoreInput } from './restore.js'
import type { VersionVector } from './version-vector.js'

export { compareStored } from './accepted-entries.js'

const EMPTY_ID = Buffer.alloc(0)
/** Signature checks one bisection may make before it gives up on the rest of a run (it comes again next exchange). */
const MAX_BISECT_CHECKS = 24

/**
 * How many entries of `run` (a hash chain, oldest first) are authenticated:
 * all when the head's own signature holds, else the longest prefix found by
 * bisection that ends at an entry whose own signature holds (each such entry
 * authenticates everything before it in the chain). 0 when none is found.
 */
function authenticatedPrefix(run: readonly PendingEntry[]): number {
  if (verifyEntry(run[run.length - 1].entry)) return run.length
  // lo: entries known authenticated; hi: the first index whose prefix is not known good
  let lo = 0
  let hi = run.length - 1
  let checks = 1
  while (lo < hi && checks < MAX_BISECT_CHECKS) {
    // the last candidate first (a forged tail is one entry), then halves
    const at = checks === 1 ? hi - 1 : (lo + hi - 1) >>> 1
    checks++
    if (verifyEntry(run[at].entry)) lo = at + 1
    else hi = at
  }
  return lo
}

/** Staged own entries could not be placed: entries of the same author came back from a peer. */
export class OwnFeedConflictError extends FailedPreconditionError {
  /** ids of every staged entry dropped */
  readonly dropped: string[]
  constructor(message: string, dropped: string[]) {
    super(message)
    this.name = 'OwnFeedConflictError'
    this.dropped = dropped
  }
}

export interface LogStateOptions {
  /** where accepted entries' bytes are kept (default: in memory); the log itself holds only an index */
  archive?: EntryArchive
  maxEntryBytes?: number
  maxPendingPerAuthor?: number
  maxPendingTotal?: number
  maxPendingBytes?: number
}

function positive(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new InvalidArgumentError(`${name} must be a positive integer`)
  return value
}

export class LogState {
  private readonly maxEntryBytes: number
  private entries: AcceptedEntries
  private readonly archive?: EntryArchive
  private readonly pending: PendingSet
  private readonly forkRegistry = new ForkRegistry()
  /** own entries signed and held back until they are on disk, oldest first */
  private readonly staged: PendingEntry[] = []
  /** per faulty author: the highest seq a peer on the other branch showed to be common (below the fork) */
  private readonly commonBelowFork = new Map<string, number>()
  private readonly rejectedCounts = Object.fromEntries(REJECT_REASONS.map(r => [r, 0])) as Record<RejectReason, number>
  private duplicateCount = 0

  constructor(options: LogStateOptions = {}) {
    this.archive = options.archive
    this.entries = new AcceptedEntries(options.archive)
    this.maxEntryBytes = positive('maxEntryBytes', options.maxEntryBytes ?? MAX_ENTRY_BYTES)
    const maxBytes = positive('maxPendingBytes', options.maxPendingBytes ?? MAX_PENDING_BYTES)
    // the newest pending entry must always fit, or it would be dropped on arrival
    if (maxBytes < this.maxEntryBytes) throw new InvalidArgumentError('maxPendingBytes must be at least maxEntryBytes')
    this.pending = new PendingSet({
      maxPerAuthor: positive('maxPendingPerAuthor', options.maxPendingPerAuthor ?? MAX_PENDING_PER_AUTHOR),
      maxTotal: positive('maxPendingTotal', options.maxPendingTotal ?? MAX_PENDING_TOTAL),
      maxBytes
    })
  }

  // ---- writing ----

  /**
   * Makes, signs and accepts the signer's next entry: stage and commit at once,
   * for callers with nothing to write first. Throws (and changes nothing) as
   * `stage` does.
   */
  append<K extends EntryKind>(signer: Signer, kind: K, body: DeepPartial<KindBodies[K]> | Uint8Array, now: number): StoredEntry {
    const staged = this.stage(signer, kind, body, now)
    return this.commitStaged(staged.id).at(-1) as StoredEntry
  }

  /**
   * Makes and signs the signer's next entry (after the ones already staged)
   * and holds it back: nothing reads it until `commitStaged`. Throws (and
   * changes nothing) on an unknown kind, a bad time, an entry over the size
   * limit, or a signer whose key is not its author's.
   */
  stage<K extends EntryKind>(signer: Signer, kind: K, body: DeepPartial<KindBodies[K]> | Uint8Array, now: number): PendingEntry {
    if (!isKnownKind(kind)) throw new InvalidArgumentError(`unknown entry kind: ${JSON.stringify(kind)}`)
    if (!Number.isSafeInteger(now) || now < 0) throw new InvalidArgumentError('time must be a non-negative integer (ms since the epoch)')
    if (this.staged.length > 0 && this.staged[0].entry.author !== signer.author)
      throw new FailedPreconditionError(`entries of ${this.staged[0].entry.author} are staged: one author stages at a time`)
    const last: { id: string; entry: Entry } | undefined = this.staged.at(-1) ?? this.entries.last(signer.author)
    const entry = signEntry(signer, {
      seq: (last?.entry.seq ?? 0) + 1,
      prev: last == null ? new Uint8Array(0) : Buffer.from(last.id, 'hex'),
      lamport: Math.max(this.entries.lamport, this.staged.at(-1)?.entry.lamport ?? 0) + 1,
      time: now,
      kind,
      body: body instanceof Uint8Array ? body : encodeBody(kind, body)
    })
    const bytes = encodeEntry(entry)
    if (bytes.byteLength > this.maxEntryBytes) throw new TooLargeError('entry', bytes.byteLength, this.maxEntryBytes)
    if (!verifyEntry(entry)) throw new InvalidArgumentError(`the signer's key is not the key ${signer.author} names`)
    const fault = contentFault(entry)
    if (fault != null) throw new InvalidArgumentError(`own entry not accepted: ${fault}`)
    const staged = { id: idOfBytes(bytes), entry, bytes }
    this.staged.push(staged)
    return staged
  }

  /**
   * Places staged entries, oldest first, up to and including `id`, and returns
   * those newly placed (empty when `id` was placed already). Throws
   * OwnFeedConflictError, dropping every staged entry, when the author's
   * feed no longer ends where they start (an entry of the author's own came
   * back from a peer meanwhile): placing them would fork the feed.
   */
  commitStaged(id: string): StoredEntry[] {
    const upTo = this.staged.findIndex(s => s.id === id)
    if (upTo < 0) {
      if (this.entries.has(id)) return []
      throw new FailedPreconditionError(`no staged entry ${id}`)
    }
    const placed: StoredEntry[] = []
    for (const s of this.staged.splice(0, upTo + 1)) {
      const { author, seq } = s.entry
      const last = this.entries.last(author)
      if (seq !== (last?.entry.seq ?? 0) + 1 || this.chainFault(s.entry, last) != null) {
        const known = `the feed now ends at seq ${last?.entry.seq ?? 0}`
        const dropped = [s.id, ...this.staged.splice(0).map(x => x.id)]
        throw new OwnFeedConflictError(
          `own entry ${author}#${seq} not placed: ${known} (entries of this author came back from a peer); ${dropped.length} staged entr${dropped.length === 1 ? 'y' : 'ies'} dropped, append again`,
          dropped
        )
      }
      placed.push(this.entries.add(s))
    }
    return placed
  }

  /** Drops every staged entry (their write failed); returns them. */
  dropStaged(): PendingEntry[] {
    return this.staged.splice(0)
  }

  /** Own entries staged and not committed. */
  get stagedCount(): number {
    return this.staged.length
  }

  /** Takes in one entry from anywhere (gossip, sync, a client). Never throws. */
  ingest(entry: Entry): IngestResult {
    let bytes: Uint8Array
    try {
      bytes = encodeEntry(entry)
    } catch {
      return this.reject(null, 'malformed')
    }
    return this.ingestChecked(entry, bytes)
  }

  /** Takes in one entry as raw bytes (a gossip message); non-canonical bytes are malformed. Never throws. */
  ingestBytes(bytes: Uint8Array): IngestResult {
    let entry: Entry
    try {
      entry = decodeEntry(bytes, this.maxEntryBytes)
    } catch (err) {
      return this.reject(null, err instanceof TooLargeError ? 'too_large' : 'malformed')
    }
    // a copy, so that a reused receive buffer cannot change what the log holds
    return this.ingestChecked(entry, Uint8Array.from(bytes))
  }

  /**
   * The bulk path for sync, for decoded entries (each is encoded here): see
   * ingestBatchBytes. Never throws.
   */
  ingestBatch(entries: readonly Entry[]): BatchResult {
    const out = new BatchCollector()
    const items: PendingEntry[] = []
    for (const entry of entries) {
      let bytes: Uint8Array
      try {
        bytes = encodeEntry(entry)
      } catch {
        out.reject(this.count('malformed'))
        continue
      }
      if (bytes.byteLength > this.maxEntryBytes) {
        out.reject(this.count('too_large'))
        continue
      }
      items.push({ id: idOfBytes(bytes), entry, bytes })
    }
    return this.ingestItems(items, out)
  }

  /**
   * The bulk path for sync: entries as the canonical bytes a peer sent
   * (copied: the log keeps nothing of the caller's buffers). Fields are read
   * straight from the bytes (entry-scan.ts), nothing is re-encoded, and
   * signatures are checked one per author per batch, not one per entry:
   *
   * Per author, the entries that extend the held feed by hash (seq follows,
   * prev = id of the entry before, lamport grows; the first one's prev is the
   * id of the last entry held, which was itself authenticated, or it is seq 1)
   * form a run, and one signature, on the run's last entry (its head),
   * authenticates the whole run: the author signed the head's prev, which is
   * the hash of the whole entry before it, prev included, and so on down to
   * the held feed. When the head's signature fails, the run is bisected: the
   * longest prefix ending at an entry whose own signature holds is accepted,
   * with O(log n) signature checks, and the rest is rejected as bad_signature.
   * Entries outside a run (a gap: pending; a held seq: a fork; a broken link)
   * are checked one by one, their own signature first. Never throws.
   */
  ingestBatchBytes(frames: readonly Uint8Array[]): BatchResult {
    const out = new BatchCollector()
    const items: PendingEntry[] = []
    for (const frame of frames) {
      if (frame.byteLength > this.maxEntryBytes) {
        out.reject(this.count('too_large'))
        continue
      }
      // one copy per entry, in the pooled slabs Buffer keeps for small allocations
      const bytes = Buffer.allocUnsafe(frame.byteLength)
      bytes.set(frame)
      let entry = scanEntry(bytes)
      if (entry === undefined) {
        try {
          entry = decodeEntry(bytes, this.maxEntryBytes)
        } catch {
          out.reject(this.count('malformed'))
          continue
        }
      }
      const digest = sha256(bytes)
      items.push({ id: toHex(digest), entry, bytes, digest })
    }
    return this.ingestItems(items, out)
  }

  private ingestItems(items: readonly PendingEntry[], out: BatchCollector): BatchResult {
    const seen = new Set<string>()
    const byAuthor = new Map<string, PendingEntry[]>()
    /** per author, the highest seq this batch showed to be held the same here */
    const common = new Map<string, number>()
    for (const p of items) {
      const { id, entry } = p
      const held = p.digest !== undefined ? this.entries.hasDigest(p.digest) : this.entries.has(id)
      if (held || seen.has(id) || this.pending.has(id)) {
        if (held) common.set(entry.author, Math.max(common.get(entry.author) ?? 0, entry.seq))
        this.duplicateCount++
        out.duplicate()
        continue
      }
      seen.add(id)
      const group = byAuthor.get(entry.author)
      if (group == null) byAuthor.set(entry.author, [p])
      else group.push(p)
    }

    for (const [author, group] of byAuthor) {
      let sorted = true
      for (let i = 1; i < group.length && sorted; i++) sorted = group[i - 1].entry.seq < group[i].entry.seq
      if (!sorted) group.sort((x, y) => x.entry.seq - y.entry.seq)
      const { run, rest } = this.chainRun(author, group)
      let oneByOne = rest
      if (run.length > 0) {
        const upTo = authenticatedPrefix(run)
        for (let i = upTo; i < run.length; i++) out.reject(this.count('bad_signature'))
        oneByOne = this.acceptRun(author, run.slice(0, upTo), out).concat(rest)
      }
      if (oneByOne.length > 1) oneByOne.sort((x, y) => x.entry.seq - y.entry.seq)
      for (const p of oneByOne) out.add(this.authenticateAndPlace(p))
    }
    this.noteCommon(common)
    return out.result(id => this.pending.has(id))
  }

  /** Takes in a fork proof from a peer; true when it is valid and newly kept. */
  ingestForkProof(proof: ForkProof): boolean {
    if (!verifyForkProof(proof)) return false
    return this.forkRegistry.record(proof.a, proof.b) != null
  }

  /**
   * The trusted start-up path: entries read back from this daemon's own disk,
   * not verified. Only on an empty log. Throws InvalidArgumentError, keeping
   * nothing, when a feed has a hole. Returns what restored pending entries
   * unblocked and which pending entries left the set (stale or unblocked).
   */
  restore(input: RestoreInput): { accepted: StoredEntry[]; pendingRemoved: PendingEntry[] } {
    if (this.entries.size > 0 || this.pending.size > 0) throw new FailedPreconditionError('restore needs an empty log')
    this.entries.load(prepareRestore(input.entries), input.archived === true)
    return this.restoreFinish(input)
  }

  /**
   * A checkpoint of the accepted entries' index up to cursor `upTo` (one the
   * archive has on disk), or undefined when there is none: see
   * restoreCheckpoint. Pending entries, staged entries and fork proofs are not
   * in it (the store keeps them on their own).
   */
  checkpoint(upTo: number = this.entries.cursor): Uint8Array | undefined {
    const rows = this.entries.checkpointRows(upTo)
    return rows === undefined ? undefined : encodeCheckpoint(rows)
  }

  /**
   * The same checkpoint as pieces to write in order (no copy of the index:
   * its columns' bytes are views, which never change, as the index only
   * grows), or undefined.
   */
  checkpointParts(upTo: number = this.entries.cursor): Uint8Array[] | undefined {
    const rows = this.entries.checkpointRows(upTo)
    return rows === undefined ? undefined : checkpointParts(rows)
  }

  /**
   * Starts a restore from a checkpoint (on an empty log) and returns the
   * cursor it covers: then restoreEntries with the entries after that cursor,
   * then restoreFinish. `store`, when given, is what the store holds: a
   * checkpoint past its last cursor, or with an author ahead of its vector,
   * is not of this store. Throws InvalidArgumentError (corrupt) or
   * FailedPreconditionError (not of this log) and changes nothing: fold the
   * whole log instead.
   */
  restoreCheckpoint(bytes: Uint8Array, store?: { lastCursor: number; vector: ReadonlyMap<string, number> }): number {
    if (this.entries.size > 0 || this.pending.size > 0) throw new FailedPreconditionError('restore needs an empty log')
    const rows = decodeCheckpoint(bytes)
    if (store !== undefined) {
      if (rows.cursor > store.lastCursor)
        throw new FailedPreconditionError(`the checkpoint covers cursor ${rows.cursor}, past the store's last ${store.lastCursor}`)
      const held = new Map<number, number>()
      for (let r = 0; r < rows.author.length; r++) held.set(rows.author[r], rows.seq[r])
      for (const [a, seq] of held) {
        const name = rows.authors[a]
        if (seq > (store.vector.get(name) ?? 0))
          throw new FailedPreconditionError(`the checkpoint holds ${name} to seq ${seq}, past the store's ${store.vector.get(name) ?? 0}`)
      }
    }
    if (this.archive === undefined) throw new FailedPreconditionError('a checkpoint restores only a log kept in an archive')
    this.entries = AcceptedEntries.fromCheckpoint(rows, this.archive)
    return rows.cursor
  }

  /**
   * The trusted start-up path for a large log, a page at a time: entries read
   * back from this daemon's own disk in cursor order (whose bytes the archive
   * holds), appended after those restored so far. Throws
   * InvalidArgumentError, keeping none of the page, on a cursor that does not
   * grow or a seq that does not follow its author's feed. Then restoreFinish.
   */
  restoreEntries(page: ReadonlyArray<Required<Pick<RestoredEntry, 'entry' | 'cursor' | 'bytes' | 'id'>>>): void {
    if (this.pending.size > 0) throw new FailedPreconditionError('restore entries before the pending set')
    const held = new Map<string, number>()
    let cursor = this.entries.cursor
    for (const r of page) {
      const { author, seq } = r.entry
      const h = held.get(author) ?? this.entries.held(author)
      if (r.cursor <= cursor) throw new InvalidArgumentError(`restored cursor ${r.cursor} does not follow cursor ${cursor}`)
      if (seq !== h + 1) throw new InvalidArgumentError(`restored feed of ${author} is not whole at seq ${h + 1}`)
      held.set(author, seq)
      cursor = r.cursor
    }
    for (const r of page) this.entries.appendRestored(r)
  }

  /**
   * Ends a restore: takes in the fork proofs and the pending entries kept on
   * disk. Returns what restored pending entries unblocked and which pending
   * entries left the set (stale or unblocked).
   */
  restoreFinish(input: { pending?: Iterable<Entry>; forks?: Iterable<ForkProof> }): {
    accepted: StoredEntry[]
    pendingRemoved: PendingEntry[]
  } {
    if (this.pending.size > 0) throw new FailedPreconditionError('restore needs an empty pending set')
    for (const proof of input.forks ?? []) this.forkRegistry.record(proof.a, proof.b)
    const accepted: StoredEntry[] = []
    const pendingRemoved: PendingEntry[] = []
    const authors = new Set<string>()
    for (const entry of input.pending ?? []) {
      const bytes = encodeEntry(entry)
      const p = { id: idOfBytes(bytes), entry, bytes }
      if (entry.seq <= this.entries.held(entry.author) || this.pending.has(p.id) || this.pending.at(entry.author, entry.seq) != null) {
        pendingRemoved.push(p)
        continue
      }
      pendingRemoved.push(...this.pending.add(p))
      authors.add(entry.author)
    }
    for (const author of authors) this.drain(author, accepted, pendingRemoved)
    return { accepted, pendingRemoved }
  }

  // ---- forks and divergence (what anti-entropy compares and sends) ----

  /** Where the author's branches part, as far as this replica knows. */
  forkPoint(author: string): ForkPoint | undefined {
    return this.forkRegistry.forkPoint(author)
  }

  /** One summary per author with entries or a fork proof here, sorted by author. */
  summaries(): FeedSummary[] {
    const authors = new Set([...this.entries.authors(), ...this.forkRegistry.faultyAuthors()])
    return [...authors].sort().map(author => {
      const last = this.entries.last(author)
      const fp = this.forkRegistry.forkPoint(author)
      return {
        author,
        seq: last?.entry.seq ?? 0,
        head: last?.id ?? '',
        forkSeq: fp?.exact === true ? fp.seq : 0,
        faulty: this.forkRegistry.isFaulty(author)
      }
    })
  }

  /**
   * What to send a peer whose summaries are `remote`, each author's in seq
   * order, authors sorted: the entries after its seq where its head is the
   * entry held here; where its head differs (another branch of a fork), the
   * entries that find the fork point: probes, or the entries of the known
   * bracket (at most MAX_DIVERGENT_AUTHORS_PER_EXCHANGE authors, whatever
   * heads the peer claims). Nothing once the fork point is known: the proof
   * says it all (proofsFor).
   */
  entriesFor(remote: FeedSummaries): StoredEntry[] {
    return this.cursorsFor(remote).map(c => this.entries.atCursor(c) as StoredEntry)
  }

  /** The cursors of what `entriesFor` sends, in its order, without reading an entry: a sender reads each as it goes. */
  cursorsFor(remote: FeedSummaries): number[] {
    return this.cursorGroupsFor(remote).flat()
  }

  /**
   * The cursors of what `entriesFor` sends, one array per author (in seq
   * order, so ascending: an author's entries are accepted in seq order),
   * authors sorted. A sender may interleave the authors as it likes (each
   * author's entries stay in order, so the receiver sees no gap) and read
   * the log in cursor order.
   */
  cursorGroupsFor(remote: FeedSummaries): number[][] {
    const out: number[][] = []
    let divergent = 0
    for (const author of this.entries.authors()) {
      const held = this.entries.held(author)
      const r = remote.get(author)
      const theirs = r?.seq ?? 0
      // Ahead of us: the peer checks our head against its feed.
      if (theirs > held) continue
      if (r === undefined || theirs === 0 || r.head === '' || this.entries.idAt(author, theirs) === r.head) {
        const cursors = this.entries.feedCursors(author, theirs + 1, held)
        if (cursors.length > 0) out.push(cursors)
        continue
      }
      // Another branch.
      const fp = this.forkRegistry.forkPoint(author)
      if (fp?.exact === true || divergent >= MAX_DIVERGENT_AUTHORS_PER_EXCHANGE) continue
      divergent++
      const seqs = fp === undefined ? probeSeqs(theirs) : this.bracket(author, fp.seq)
      const cursors: number[] = []
      for (const seq of seqs) cursors.push(...this.entries.feedCursors(author, seq, seq))
      if (cursors.length > 0) out.push(cursors)
    }
    return out
  }

  /**
   * Fork proofs a peer whose summaries are `remote` lacks: the proof of the
   * fork point where it knows none (or a later one), else the lowest proof
   * held where it does not know the author is faulty.
   */
  proofsFor(remote: FeedSummaries): ForkProof[] {
    const out: ForkProof[] = []
    for (const author of [...this.forkRegistry.faultyAuthors()].sort()) {
      if (out.length >= MAX_FORK_PROOFS_PER_EXCHANGE) break
      const proof = this.forkRegistry.lowest(author)
      const fp = this.forkRegistry.forkPoint(author)
      if (proof === undefined || fp === undefined) continue
      const r = remote.get(author)
      const lacks = fp.exact ? !((r?.forkSeq ?? 0) > 0 && (r?.forkSeq ?? 0) <= fp.seq) : r?.faulty !== true
      if (lacks) out.push(proof)
    }
    return out
  }

  /** The seqs between the highest known common one and the lowest known fork seq, at most MAX_DIVERGENCE_RANGE of them. */
  private bracket(author: string, lowestFork: number): number[] {
    const common = this.commonBelowFork.get(author) ?? 0
    const from = Math.max(common < lowestFork ? common + 1 : 1, lowestFork - MAX_DIVERGENCE_RANGE + 1, 1)
    const to = Math.min(lowestFork, this.entries.held(author))
    return Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i)
  }

  /** Remembers, for faulty authors, which seqs a batch showed to be common with the sender's branch. */
  private noteCommon(common: ReadonlyMap<string, number>): void {
    for (const [author, seq] of common) {
      const fp = this.forkRegistry.forkPoint(author)
      if (fp === undefined || fp.exact || seq >= fp.seq) continue
      if (seq > (this.commonBelowFork.get(author) ?? 0)) this.commonBelowFork.set(author, seq)
    }
  }

  // ---- reading ----

  /** author -> highest contiguous seq held (a copy). */
  vector(): Map<string, number> {
    return this.entries.vector()
  }

  /** How many authors have written to the log: how big the swarm has been. */
  get authorCount(): number {
    return this.entries.authorCount
  }

  get(id: string): StoredEntry | undefined {
    return this.entries.get(id)
  }

  byAuthorSeq(author: string, seq: number): StoredEntry | undefined {
    return this.entries.byAuthorSeq(author, seq)
  }

  /**
   * What a peer holding `remote` lacks: each author's entries after the
   * peer's seq, in seq order, authors sorted. A prefix of this list (`limit`)
   * still leaves the receiver no gap.
   */
  entriesAfter(remote: VersionVector, limit = Number.POSITIVE_INFINITY): StoredEntry[] {
    return this.entries.entriesAfter(remote, limit)
  }

  /** Accepted entries with a cursor greater than `cursor`, in arrival order. */
  afterCursor(cursor: number, limit = Number.POSITIVE_INFINITY): StoredEntry[] {
    return this.entries.afterCursor(cursor, limit)
  }

  /**
   * Every accepted entry (or those of `kinds`) in the deterministic total
   * order (lamport, author, seq). Each is read from the archive: for a large
   * log, name the kinds.
   */
  ordered(kinds?: ReadonlySet<string>): readonly StoredEntry[] {
    return this.entries.ordered(kinds)
  }

  /** Accepted entries after `cursor` (of `kinds`, when given), in arrival order, read one at a time. */
  iterateAfter(cursor: number, kinds?: ReadonlySet<string>): Generator<StoredEntry> {
    return this.entries.iterateAfter(cursor, kinds)
  }

  /** Cursor, author, seq, lamport and kind of the entries after `cursor`, without reading them. */
  metaAfter(cursor: number): Generator<EntryMeta> {
    return this.entries.metaAfter(cursor)
  }

  /** How many entries of `kind` have a cursor up to `upTo`. */
  countOfKind(kind: string, upTo: number): number {
    return this.entries.countOfKind(kind, upTo)
  }

  /** How many entries of each kind have a cursor up to `upTo` (one pass over the index). */
  countsByKindUpTo(upTo: number): Map<string, number> {
    return this.entries.countsByKindUpTo(upTo)
  }

  /** True when the entry at `cursor` is of `kind` and its id starts with the bytes of `idHead` (no entry is read). */
  holdsAt(cursor: number, kind: string, idHead: Uint8Array): boolean {
    return this.entries.holdsAt(cursor, kind, idHead)
  }

  /** The accepted entry at `cursor`, or undefined. */
  atCursor(cursor: number): StoredEntry | undefined {
    return this.entries.atCursor(cursor)
  }

  /** The cursor of accepted entry `id`, or 0. */
  cursorOf(id: string): number {
    return this.entries.cursorOf(id)
  }

  /** Cursors of the author's accepted entries with seq in `from..to`, in seq order. */
  feedCursors(author: string, from: number, to: number): number[] {
    return this.entries.feedCursors(author, from, to)
  }

  /** Authors with at least one accepted entry, sorted. */
  authors(): string[] {
    return this.entries.authors()
  }

  /** Accepted entries by kind (a copy). */
  countsByKind(): Map<string, number> {
    return this.entries.countsByKind()
  }

  get size(): number {
    return this.entries.size
  }

  /** The highest lamport among accepted entries. */
  get lamport(): number {
    return this.entries.lamport
  }

  /** The cursor of the last accepted entry (0 when empty). */
  get cursor(): number {
    return this.entries.cursor
  }

  get pendingCount(): number {
    return this.pending.size
  }

  /** Entries waiting for a gap, oldest arrival first (for persistence). */
  pendingEntries(): PendingEntry[] {
    return this.pending.entries()
  }

  /** Pending entries dropped by the bounds since start. */
  get pendingDropped(): number {
    return this.pending.dropped
  }

  /** Rejections since start, by reason (a copy). */
  get rejected(): Record<RejectReason, number> {
    return { ...this.rejectedCounts }
  }

  get duplicates(): number {
    return this.duplicateCount
  }

  /** The fork proofs kept, at most MAX_FORK_PROOFS_PER_AUTHOR per author. */
  get forks(): ForkProof[] {
    return this.forkRegistry.all()
  }

  get faultyAuthors(): ReadonlySet<string> {
    return this.forkRegistry.faultyAuthors()
  }

  isFaulty(author: string): boolean {
    return this.forkRegistry.isFaulty(author)
  }

  // ---- internals ----

  private ingestChecked(entry: Entry, bytes: Uint8Array): IngestResult {
    if (bytes.byteLength > this.maxEntryBytes) return this.reject(null, 'too_large')
    const id = idOfBytes(bytes)
    if (this.entries.has(id) || this.pending.has(id)) {
      this.duplicateCount++
      return { status: 'duplicate', id }
    }
    return this.authenticateAndPlace({ id, entry, bytes })
  }

  /** The signature first: nothing the entry says is read before it is authenticated. */
  private authenticateAndPlace(p: PendingEntry): IngestResult {
    if (!verifyEntry(p.entry)) return this.reject(p.id, 'bad_signature')
    const fault = contentFault(p.entry)
    if (fault != null) return this.reject(p.id, fault)
    return this.place(p)
  }

  /** Places an authenticated, well-formed entry that the log does not hold yet. */
  private place(p: PendingEntry): IngestResult {
    const { author, seq } = p.entry
    const held = this.entries.held(author)
    if (seq <= held) return this.forkAgainst((this.entries.byAuthorSeq(author, seq) as StoredEntry).entry, p)
    const waiting = this.pending.at(author, seq)
    if (waiting != null) return this.forkAgainst(waiting.entry, p)
    if (seq > held + 1) {
      const pendingRemoved = this.pending.add(p)
      return { status: 'pending', id: p.id, pending: p, pendingRemoved }
    }
    const fault = this.chainFault(p.entry, this.entries.last(author))
    if (fault != null) return this.reject(p.id, fault)
    const accepted = [this.entries.add(p)]
    const pendingRemoved: PendingEntry[] = []
    this.drain(author, accepted, pendingRemoved)
    return { status: 'accepted', id: p.id, accepted, pendingRemoved }
  }

  /** Why `e` does not extend a feed whose last entry is `last`, or null. */
  private chainFault(e: Entry, last: StoredEntry | undefined): RejectReason | null {
    if (last == null) return e.prev.byteLength === 0 ? null : 'bad_prev'
    if (toHex(e.prev) !== last.id) return 'bad_prev'
    if (e.lamport <= last.entry.lamport) return 'bad_prev'
    return null
  }

  /** The entries of `group` (sorted by seq) that extend the held feed by hash, and the rest. */
  private chainRun(author: string, group: PendingEntry[]): { run: PendingEntry[]; rest: PendingEntry[] } {
    const run: PendingEntry[] = []
    const rest: PendingEntry[] = []
    const last = this.entries.last(author)
    let expected = (last?.entry.seq ?? 0) + 1
    let prevId: Buffer = last === undefined ? EMPTY_ID : Buffer.from(last.id, 'hex')
    let prevLamport = last?.entry.lamport ?? 0
    for (const p of group) {
      const e = p.entry
      if (e.seq === expected && e.lamport > prevLamport && prevId.equals(e.prev)) {
        run.push(p)
        expected++
        prevId = p.digest !== undefined ? Buffer.from(p.digest.buffer, p.digest.byteOffset, p.digest.byteLength) : Buffer.from(p.id, 'hex')
        prevLamport = e.lamport
      } else {
        rest.push(p)
      }
    }
    return { run, rest }
  }

  /**
   * Accepts an authenticated run in order, stopping at the first entry whose
   * content is faulty; returns the entries after it, to be checked one by one.
   */
  private acceptRun(author: string, run: PendingEntry[], out: BatchCollector): PendingEntry[] {
    for (let i = 0; i < run.length; i++) {
      const p = run[i]
      const fault = contentFault(p.entry)
      if (fault != null) {
        out.reject(this.count(fault))
        return run.slice(i + 1)
      }
      const waiting = this.pending.take(author, p.entry.seq)
      if (waiting != null) {
        out.pendingRemoved.push(waiting)
        out.reject(this.count('fork'), this.forkRegistry.record(waiting.entry, p.entry))
      }
      out.accepted.push(this.entries.add(p))
    }
    this.drain(author, out.accepted, out.pendingRemoved)
    return []
  }

  /** Accepts waiting entries of `author` that now follow the feed. */
  private drain(author: string, accepted: StoredEntry[], pendingRemoved: PendingEntry[]): void {
    for (;;) {
      const next = this.pending.take(author, this.entries.held(author) + 1)
      if (next == null) return
      pendingRemoved.push(next)
      const fault = this.chainFault(next.entry, this.entries.last(author))
      if (fault != null) {
        this.count(fault)
        return
      }
      accepted.push(this.entries.add(next))
    }
  }

  private forkAgainst(held: Entry, p: PendingEntry): IngestResult {
    return this.reject(p.id, 'fork', this.forkRegistry.record(held, p.entry))
  }

  private count(reason: RejectReason): RejectReason {
    this.rejectedCounts[reason]++
    return reason
  }

  private reject(id: string | null, reason: RejectReason, proof?: ForkProof): IngestResult {
    this.count(reason)
    return proof == null ? { status: 'rejected', id, reason } : { status: 'rejected', id, reason, proof }
  }
}
