// What a replica tells a peer about each author's feed in an anti-entropy
// exchange: the highest contiguous seq it holds and the id of the entry
// there (its head), and what it knows of the author's forks. Two replicas on
// different branches of a forked author hold the same seqs, so seqs alone
// would call them in sync for ever; the head ids tell them apart, and the
// exchange then sends what finds the fork point (see LogState.entriesFor).
import type { VersionVectorEntry } from '../../gen/agency/v1/wire.js'
import { InvalidArgumentError } from '../errors.js'
import { sha256, toHex } from './crypto.js'
import { ENTRY_ID_BYTES } from './limits.js'
import { compareStrings } from './version-vector.js'

export interface FeedSummary {
  author: string
  /** highest contiguous seq held (0: none) */
  seq: number
  /** hex id of the entry at `seq`; '' when not given (a peer that sends no heads) */
  head: string
  /** the author's fork point, when a proof shows it exactly; 0: none known */
  forkSeq: number
  /** some proof that the author forked is held */
  faulty: boolean
}

export type FeedSummaries = ReadonlyMap<string, FeedSummary>

/**
 * sha256 over one line per author, sorted by author: `<author> <seq> <head>`
 * (with ` faulty` when a proof is held but not the fork point), or
 * `<author> fork <seq>` once the fork point is known (the branches' heads
 * differ for ever then, and neither replica can take the other's). Replicas
 * that hold the same entries and know the same of the forks have equal digests.
 */
export function summaryDigest(summaries: Iterable<FeedSummary>): Uint8Array {
  const lines = [...summaries]
    .filter(s => s.seq > 0 || s.faulty)
    .sort((x, y) => compareStrings(x.author, y.author))
    .map(s => (s.forkSeq > 0 ? `${s.author} fork ${s.forkSeq}\n` : `${s.author} ${s.seq} ${s.head}${s.faulty ? ' faulty' : ''}\n`))
  return sha256(Buffer.from(lines.join(''), 'utf8'))
}

export function summaryToWire(s: FeedSummary): VersionVectorEntry {
  return { author: s.author, seq: s.seq, head: Buffer.from(s.head, 'hex'), forkSeq: s.forkSeq, faulty: s.faulty }
}

/**
 * Reads a peer's summaries; throws InvalidArgumentError on a bad seq or a
 * head that is not an entry id. A line with an empty author names no feed and
 * is skipped; an author listed twice: the last line counts.
 */
export function summariesFromWire(list: readonly VersionVectorEntry[]): Map<string, FeedSummary> {
  const out = new Map<string, FeedSummary>()
  for (const e of list) {
    if (e.author === '') continue // names no feed
    if (!Number.isSafeInteger(e.seq) || e.seq < 0) throw new InvalidArgumentError(`a feed summary has a bad seq for ${e.author}`)
    if (!Number.isSafeInteger(e.forkSeq) || e.forkSeq < 0)
      throw new InvalidArgumentError(`a feed summary has a bad fork seq for ${e.author}`)
    const head = e.head ?? new Uint8Array(0)
    if (head.byteLength !== 0 && head.byteLength !== ENTRY_ID_BYTES)
      throw new InvalidArgumentError(`a feed summary has a head of ${head.byteLength} bytes for ${e.author}`)
    out.set(e.author, {
      author: e.author,
      seq: e.seq,
      head: head.byteLength === 0 ? '' : toHex(head),
      forkSeq: e.forkSeq,
      faulty: e.faulty === true
    })
  }
  return out
}

/** Seqs a divergence probe sends, ascending: seq, seq-1, seq-2, seq-4, ... down to 1. */
export function probeSeqs(seq: number): number[] {
  const out = new Set<number>()
  for (let step = 0, s = seq; s >= 1; s = seq - 2 ** step, step++) out.add(s)
  out.add(1)
  return [...out].sort((a, b) => a - b)
}
