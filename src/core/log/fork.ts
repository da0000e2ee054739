// A fork: two different entries an author signed at the same (author, seq).
// Both entries carry the author's signature, so the proof convinces anyone.
import type { Entry } from '../../gen/agency/v1/log.js'
import { entryIdHex, verifyEntry } from './entry.js'

export interface ForkProof {
  author: string
  seq: number
  /** the entry held first */
  a: Entry
  /** the conflicting entry */
  b: Entry
}

/**
 * True when the proof stands on its own: same author and seq, different ids,
 * both signatures valid. (A locally detected fork whose first entry was
 * authenticated through a signed hash chain rather than its own signature may
 * not pass this check; it is still kept locally.)
 */
export function verifyForkProof(proof: ForkProof): boolean {
  const { author, seq, a, b } = proof
  if (a.author !== author || b.author !== author || a.seq !== seq || b.seq !== seq) return false
  try {
    if (entryIdHex(a) === entryIdHex(b)) return false
  } catch {
    return false
  }
  return verifyEntry(a) && verifyEntry(b)
}
