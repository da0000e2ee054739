// Checks that depend on the entry alone. They run only after the signature
// (or a signed hash chain) has authenticated the entry, so nothing an unsigned
// sender wrote is interpreted before that.
import type { Entry } from '../../gen/agency/v1/log.js'
import type { RejectReason } from './ingest-result.js'
import { bodyDecodes, isKnownKind } from './kinds.js'
import { ENTRY_ID_BYTES } from './limits.js'

function isCount(n: number, min: number): boolean {
  return Number.isSafeInteger(n) && n >= min
}

/** The first fault of an authenticated entry's content, or null when it is sound. */
export function contentFault(e: Entry): RejectReason | null {
  if (!isCount(e.seq, 1) || !isCount(e.time, 0)) return 'malformed'
  // each of an author's entries raises its lamport by at least one, from at least 1
  if (!isCount(e.lamport, e.seq)) return 'malformed'
  if (e.prev.byteLength !== (e.seq === 1 ? 0 : ENTRY_ID_BYTES)) return 'malformed'
  if (!isKnownKind(e.kind)) return 'unknown_kind'
  if (!bodyDecodes(e.kind, e.body)) return 'bad_body'
  return null
}
