// /agency/sync/2.0.0 — anti-entropy for the shared record.
//
// The initiator sends its feed summaries (per author: seq, head id, what it
// knows of the author's forks; see core/log/feed-summary.ts) and their
// digest. The responder answers with what the initiator lacks, in batches,
// each author's in seq order so the receiver never sees a gap, then the fork
// proofs the initiator lacks, and ends with its own summaries. The initiator
// then sends back what the responder lacks, the same way. Where the heads of
// an author differ at the same seq, the two hold different branches of a fork,
// and what is sent is what finds the fork point (LogState.entriesFor).
// Equal digests end the exchange after one round trip. The receiver
// acknowledges each batch (an empty frame) once it has stored it, and the
// sender keeps at most SEND_AHEAD batches unacknowledged: that is the
// backpressure. (The muxer's flow control is not: yamux grants window as data
// arrives, not as it is read, so a sender could fill the reader's 4 MiB buffer
// while it stores a batch, and the stream would be aborted.) Every read has a
// size limit and every exchange a deadline.
import { lpStream, type LengthPrefixedStream } from '@libp2p/utils'
import type { Connection, PeerId, Stream } from '@libp2p/interface'
import { Entry } from '../gen/agency/v1/log.js'
import { SyncBatch, SyncRequest, type ForkProof, type VersionVectorEntry } from '../gen/agency/v1/wire.js'
import { summariesFromWire, type FeedSummaries } from '../core/log/feed-summary.js'
import { MAX_FORK_PROOFS_PER_EXCHANGE } from '../core/log/limits.js'
import { SYNC_PROTOCOL } from './constants.js'
import type { MeshLibp2p } from './node.js'
import type { Logger } from '../logger.js'
import type { PeerGuard } from './peer-guard.js'

/** Largest sync frame; a batch is cut well below it. */
export const MAX_SYNC_FRAME_BYTES = 4 * 1024 * 1024
const BATCH_TARGET_BYTES = 512 * 1024
const BATCH_MAX_ENTRIES = 2000
/** Batches a sender may have in flight before it waits for an acknowledgement. */
const SEND_AHEAD = 2
const ACK = new Uint8Array(0)
/** Authors listed in one vector at most. */
const MAX_VECTOR_AUTHORS = 100_000

/** What the sync protocol needs from the log. */
export interface SyncableLog {
  /** this replica's feed summaries, on the wire */
  summaries: () => VersionVectorEntry[]
  digest: () => Uint8Array
  /**
   * what to send the holder of `remote`, each author's in seq order (authors may interleave): canonical entry bytes in chunks, read as they
   * are sent
   */
  entriesFor: (remote: FeedSummaries) => Iterable<readonly Uint8Array[]> | AsyncIterable<readonly Uint8Array[]>
  /** fork proofs the holder of `remote` lacks */
  proofsFor: (remote: FeedSummaries) => ForkProof[]
  /** takes in a batch from a peer (each entry's bytes as sent, views into the frame), best at the call; resolves once it is stored */
  ingestBatch: (entries: Uint8Array[], from: string) => Promise<void>
  /** takes in fork proofs from a peer; resolves once the valid ones are stored */
  ingestForkProofs: (proofs: ForkProof[], from: string) => Promise<void>
}

export interface SyncStats {
  sent: number
  received: number
  bytesSent: number
  bytesReceived: number
}

export interface LogSyncHooks {
  onRound?: (peer: string, role: 'initiator' | 'responder', stats: SyncStats) => void
  onMalformed?: (peer: string, reason: string) => void
}

export class SyncProtocolError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'SyncProtocolError'
  }
}

/**
 * What a peer sent, not the stream's end or a timeout: a frame that does not decode, or a length prefix over the limit (its value or its
 * own length).
 */
function isMalformedFrame(err: unknown): boolean {
  const name = (err as Error | undefined)?.name
  return err instanceof SyncProtocolError || name === 'InvalidDataLengthError' || name === 'InvalidDataLengthLengthError'
}

function toSummaries(entries: VersionVectorEntry[]): FeedSummaries {
  if (entries.length > MAX_VECTOR_AUTHORS) throw new SyncProtocolError('version vector too large')
  try {
    return summariesFromWire(entries)
  } catch (err) {
    throw new SyncProtocolError(`bad version vector: ${(err as Error).message}`)
  }
}

function proofBytes(p: ForkProof): number {
  return (p.a == null ? 0 : Entry.encode(p.a).finish().length) + (p.b == null ? 0 : Entry.encode(p.b).finish().length)
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(a, b) === 0
}

export class LogSync {
  private readonly node: MeshLibp2p
  private readonly log: SyncableLog
  private readonly logger: Logger
  private readonly hooks: LogSyncHooks
  private readonly timeoutMs: number
  /** peers with an exchange in flight, so that one peer gets one at a time */
  private readonly inFlight = new Set<string>()
  private readonly guard?: PeerGuard

  constructor(init: { node: MeshLibp2p; log: SyncableLog; logger: Logger; hooks?: LogSyncHooks; timeoutMs?: number; guard?: PeerGuard }) {
    this.guard = init.guard
    this.node = init.node
    this.log = init.log
    this.logger = init.logger
    this.hooks = init.hooks ?? {}
    this.timeoutMs = init.timeoutMs ?? 120_000
  }

  async start(): Promise<void> {
    await this.node.handle(
      SYNC_PROTOCOL,
      (stream, connection) => {
        this.respond(stream, connection).catch(() => {})
      },
      { maxInboundStreams: 8 }
    )
  }

  async stop(): Promise<void> {
    await this.node.unhandle(SYNC_PROTOCOL)
  }

  /** One anti-entropy exchange with `peer`: what it moved, or undefined when skipped or failed. */
  async syncWith(peer: PeerId): Promise<SyncStats | undefined> {
    const key = peer.toString()
    if (this.inFlight.has(key)) return undefined
    this.inFlight.add(key)
    const signal = AbortSignal.timeout(this.timeoutMs)
    const stats: SyncStats = { sent: 0, received: 0, bytesSent: 0, bytesReceived: 0 }
    let stream: Stream | undefined
    try {
      stream = await this.node.dialProtocol(peer, SYNC_PROTOCOL, { signal })
      const lp = lpStream(stream, { maxDataLength: MAX_SYNC_FRAME_BYTES })
      const req = SyncRequest.encode({ have: this.log.summaries(), digest: Buffer.from(this.log.digest()) }).finish()
      await lp.write(req, { signal })
      stats.bytesSent += req.length
      const theirs = await this.receive(lp, key, stats, signal)
      await this.send(lp, theirs, stats, signal)
      await stream.close({ signal })
      this.hooks.onRound?.(key, 'initiator', stats)
      return stats
    } catch (err) {
      this.logger.debug({ peer: key, err: (err as Error).message }, 'sync failed')
      if (isMalformedFrame(err)) this.hooks.onMalformed?.(key, (err as Error).message)
      stream?.abort(err as Error)
      return undefined
    } finally {
      this.inFlight.delete(key)
    }
  }

  private async respond(stream: Stream, connection: Connection): Promise<void> {
    const peer = connection.remotePeer.toString()
    const signal = AbortSignal.timeout(this.timeoutMs)
    const stats: SyncStats = { sent: 0, received: 0, bytesSent: 0, bytesReceived: 0 }
    const lp = lpStream(stream, { maxDataLength: MAX_SYNC_FRAME_BYTES })
    if (this.guard != null && !this.guard.allowRequest('sync', peer)) {
      stream.abort(new Error('sync rate limit exceeded'))
      return
    }
    // One exchange with a peer at a time, whoever started it: two at once
    // would send the same entries twice.
    if (this.inFlight.has(peer)) {
      stream.abort(new Error('an exchange with this peer is already running'))
      return
    }
    this.inFlight.add(peer)
    try {
      const frame = await lp.read({ signal })
      stats.bytesReceived += frame.byteLength
      let req: SyncRequest
      try {
        req = SyncRequest.decode(frame.subarray())
      } catch (err) {
        throw new SyncProtocolError(`undecodable sync request: ${(err as Error).message}`)
      }
      const theirs = toSummaries(req.have)
      if (req.digest.length > 0 && equalBytes(req.digest, this.log.digest())) {
        // Same log on both sides: say so and stop.
        await this.sendEntries(lp, [], [], stats, signal)
        await this.receive(lp, peer, stats, signal)
      } else {
        await this.send(lp, theirs, stats, signal)
        await this.receive(lp, peer, stats, signal)
      }
      await stream.close({ signal })
      this.hooks.onRound?.(peer, 'responder', stats)
    } catch (err) {
      this.logger.debug({ peer, err: (err as Error).message }, 'sync responder failed')
      if (isMalformedFrame(err)) {
        this.hooks.onMalformed?.(peer, (err as Error).message)
        this.guard?.strike(peer, `sync: ${(err as Error).message}`)
      }
      stream.abort(err as Error)
    } finally {
      this.inFlight.delete(peer)
    }
  }

  /** Sends what the holder of `theirs` lacks, then the fork proofs it lacks, then the last frame with our summaries. */
  private async send(lp: LengthPrefixedStream, theirs: FeedSummaries, stats: SyncStats, signal: AbortSignal): Promise<void> {
    await this.sendEntries(
      lp,
      this.log.entriesFor(theirs),
      this.log.proofsFor(theirs).slice(0, MAX_FORK_PROOFS_PER_EXCHANGE),
      stats,
      signal
    )
  }

  /**
   * Sends `entries` and `proofs` in batches, the last frame carrying our
   * summaries, and waits until every batch is acknowledged. Entries go out as
   * the bytes the log holds: a SyncBatch's entries are embedded messages, so
   * each is its tag, its length and its canonical bytes, and the rest of the
   * batch follows as an ordinary encoding (protobuf merges the two). Nothing
   * is decoded or encoded again on the way out.
   */
  private async sendEntries(
    lp: LengthPrefixedStream,
    entries: Iterable<readonly Uint8Array[]> | AsyncIterable<readonly Uint8Array[]>,
    proofs: ForkProof[],
    stats: SyncStats,
    signal: AbortSignal
  ): Promise<void> {
    let batch: Uint8Array[] = []
    let forks: ForkProof[] = []
    let size = 0
    let unacked = 0
    const awaitAck = async (): Promise<void> => {
      const ack = await lp.read({ signal })
      stats.bytesReceived += ack.byteLength
      if (ack.byteLength !== 0) throw new SyncProtocolError('expected an acknowledgement (an empty frame)')
      unacked--
    }
    const flush = async (last: boolean): Promise<void> => {
      if (unacked >= SEND_AHEAD) await awaitAck()
      const rest = SyncBatch.encode({ entries: [], last, have: last ? this.log.summaries() : [], forks }).finish()
      const frame = entriesFrame(batch, rest)
      await lp.write(frame, { signal })
      unacked++
      stats.sent += batch.length
      stats.bytesSent += frame.length
      batch = []
      forks = []
      size = 0
    }
    for await (const chunk of entries) {
      for (const bytes of chunk) {
        if (batch.length > 0 && (size + bytes.length > BATCH_TARGET_BYTES || batch.length >= BATCH_MAX_ENTRIES)) await flush(false)
        batch.push(bytes)
        size += bytes.length + 8
      }
    }
    // Fork proofs in frames of their own, each under the batch target: a proof is two entries.
    for (const proof of proofs) {
      const bytes = proofBytes(proof)
      if (batch.length + forks.length > 0 && size + bytes > BATCH_TARGET_BYTES) await flush(false)
      forks.push(proof)
      size += bytes + 8
    }
    await flush(true)
    while (unacked > 0) await awaitAck()
  }

  /**
   * Reads batches until the last one; returns the sender's summaries once
   * every batch is stored. A batch is acknowledged once it is taken in and
   * the batch before it is stored: its own write (on the store's thread)
   * overlaps the next batch's checks here, and at most two batches wait for
   * the disk.
   */
  private async receive(lp: LengthPrefixedStream, peer: string, stats: SyncStats, signal: AbortSignal): Promise<FeedSummaries> {
    let proofs = 0
    let storing: Promise<void> = Promise.resolve()
    try {
      while (true) {
        const frame = await lp.read({ signal })
        stats.bytesReceived += frame.byteLength
        let batch: ReceivedBatch
        try {
          batch = decodeSyncFrame(frame.subarray())
        } catch (err) {
          throw new SyncProtocolError(`undecodable sync batch: ${(err as Error).message}`)
        }
        const before = storing
        if (batch.entries.length > 0) {
          stats.received += batch.entries.length
          // the log takes the batch in at the call; the promise is its write
          storing = this.log.ingestBatch(batch.entries, peer)
          // a failed write is thrown where it is awaited, below
          storing.catch(() => {})
        }
        await before
        if (batch.forks.length > 0) {
          await storing
          proofs += batch.forks.length
          if (proofs > MAX_FORK_PROOFS_PER_EXCHANGE)
            throw new SyncProtocolError(`more than ${MAX_FORK_PROOFS_PER_EXCHANGE} fork proofs in one exchange`)
          await this.log.ingestForkProofs(batch.forks, peer)
        }
        if (batch.last) {
          await storing
          await lp.write(ACK, { signal })
          return toSummaries(batch.have)
        }
        // Taken in, and the one before stored: the sender may send another batch.
        await lp.write(ACK, { signal })
      }
    } finally {
      // an exchange that fails still ends with its batches' writes done (or failed)
      await storing.catch(() => {})
    }
  }
}

/** SyncBatch field 1 (entries), length-delimited: (1 << 3) | 2. */
const ENTRIES_TAG = 0x0a

function varintLength(n: number): number {
  let len = 1
  while (n >= 0x80) {
    n = Math.floor(n / 128)
    len++
  }
  return len
}

/** The SyncBatch frame of `entries` (canonical bytes) followed by `rest`, the encoding of the batch's other fields. */
export function entriesFrame(entries: readonly Uint8Array[], rest: Uint8Array): Uint8Array {
  let size = rest.length
  for (const e of entries) size += 1 + varintLength(e.length) + e.length
  const out = new Uint8Array(size)
  let at = 0
  for (const e of entries) {
    out[at++] = ENTRIES_TAG
    let n = e.length
    while (n >= 0x80) {
      out[at++] = (n & 0x7f) | 0x80
      n = Math.floor(n / 128)
    }
    out[at++] = n
    out.set(e, at)
    at += e.length
  }
  out.set(rest, at)
  return out
}

/** A SyncBatch whose entries are left as their bytes. */
export interface ReceivedBatch {
  entries: Uint8Array[]
  last: boolean
  have: VersionVectorEntry[]
  forks: ForkProof[]
}

/**
 * Decodes a SyncBatch frame, leaving each entry as the bytes it was sent as
 * (views into `frame`): the log reads their fields itself (core/log/entry-scan)
 * and keeps those bytes, so an entry is neither decoded nor encoded again on
 * the way in. The other fields are decoded as usual. Throws on a frame that
 * does not parse.
 */
export function decodeSyncFrame(frame: Uint8Array): ReceivedBatch {
  const entries: Uint8Array[] = []
  const rest: Uint8Array[] = []
  let at = 0
  const varint = (): number => {
    let result = 0
    let scale = 1
    for (let i = 0; i < 10; i++) {
      if (at >= frame.length) throw new RangeError('varint cut off')
      const b = frame[at++]
      result += (b & 0x7f) * scale
      if (b < 0x80) return result
      scale *= 128
    }
    throw new RangeError('varint too long')
  }
  while (at < frame.length) {
    const start = at
    const tag = varint()
    const wire = tag % 8
    if (wire === 2) {
      const len = varint()
      if (at + len > frame.length) throw new RangeError('field cut off')
      if (tag === ENTRIES_TAG) entries.push(frame.subarray(at, at + len))
      at += len
    } else if (wire === 0) {
      varint()
    } else if (wire === 1) {
      at += 8
    } else if (wire === 5) {
      at += 4
    } else {
      throw new RangeError(`wire type ${wire} not expected in a sync batch`)
    }
    if (at > frame.length) throw new RangeError('field cut off')
    if (tag !== ENTRIES_TAG) rest.push(frame.subarray(start, at))
  }
  const others = SyncBatch.decode(Buffer.concat(rest))
  return { entries, last: others.last, have: others.have, forks: others.forks }
}
