// A version vector: author -> highest contiguous seq held. An author at 0 and
// an absent author mean the same thing; every function here treats them alike.
import type { VersionVectorEntry } from '../../gen/agency/v1/wire.js'
import { InvalidArgumentError } from '../errors.js'
import { sha256, toHex } from './crypto.js'

export type VersionVector = ReadonlyMap<string, number>

/** Seqs `from..to` (inclusive) of one author. */
export interface SeqRange {
  author: string
  from: number
  to: number
}

/** How `a` relates to `b`. */
export type VectorOrder = 'equal' | 'before' | 'after' | 'concurrent'

/** The pointwise maximum. */
export function mergeVectors(a: VersionVector, b: VersionVector): Map<string, number> {
  const out = new Map(a)
  for (const [author, seq] of b) {
    if (seq > (out.get(author) ?? 0)) out.set(author, seq)
  }
  return out
}

/** 'before' when b holds everything a holds and more; 'after' the other way round. */
export function compareVectors(a: VersionVector, b: VersionVector): VectorOrder {
  let aAhead = false
  let bAhead = false
  for (const author of new Set([...a.keys(), ...b.keys()])) {
    const x = a.get(author) ?? 0
    const y = b.get(author) ?? 0
    if (x > y) aAhead = true
    else if (y > x) bAhead = true
  }
  if (aAhead && bAhead) return 'concurrent'
  if (aAhead) return 'after'
  if (bAhead) return 'before'
  return 'equal'
}

/** What `remote` holds that `local` lacks, one range per author, sorted by author. */
export function missing(local: VersionVector, remote: VersionVector): SeqRange[] {
  const ranges: SeqRange[] = []
  for (const [author, to] of remote) {
    const have = local.get(author) ?? 0
    if (to > have) ranges.push({ author, from: have + 1, to })
  }
  return ranges.sort((x, y) => compareStrings(x.author, y.author))
}

/** Authors with seq > 0, sorted: the one canonical listing of a vector. */
function canonicalPairs(v: VersionVector): Array<[string, number]> {
  return [...v].filter(([, seq]) => seq > 0).sort(([x], [y]) => compareStrings(x, y))
}

/** sha256 over the sorted `author:seq\n` lines; equal vectors have equal digests. */
export function vectorDigest(v: VersionVector): Uint8Array {
  const text = canonicalPairs(v)
    .map(([author, seq]) => `${author}:${seq}\n`)
    .join('')
  return sha256(Buffer.from(text, 'utf8'))
}

export function vectorDigestHex(v: VersionVector): string {
  return toHex(vectorDigest(v))
}

/** The vector on the wire, seqs only (no heads, no fork knowledge: see feed-summary.ts for those). */
export function vectorToWire(v: VersionVector): VersionVectorEntry[] {
  return canonicalPairs(v).map(([author, seq]) => ({ author, seq, head: Buffer.alloc(0), forkSeq: 0, faulty: false }))
}

/** Reads a vector off the wire; throws InvalidArgumentError on an empty author or a bad seq. */
export function vectorFromWire(list: readonly VersionVectorEntry[]): Map<string, number> {
  const out = new Map<string, number>()
  for (const { author, seq } of list) {
    if (author === '') throw new InvalidArgumentError('version vector names an empty author')
    if (!Number.isSafeInteger(seq) || seq < 0) throw new InvalidArgumentError(`version vector has a bad seq for ${author}`)
    if (seq > (out.get(author) ?? 0)) out.set(author, seq)
  }
  return out
}

/** Code-point order, the same on every machine (localeCompare is not). */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
