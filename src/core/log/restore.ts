// Checks a log read back from disk before LogState takes it in: the trusted
// path skips signatures, but the feeds must still be whole, or every later
// append and sync would build on a hole.
import type { Entry } from '../../gen/agency/v1/log.js'
import { InvalidArgumentError } from '../errors.js'
import { encodeEntry, idOfBytes } from './entry.js'
import type { ForkProof } from './fork.js'
import type { StoredEntry } from './ingest-result.js'

export interface RestoredEntry {
  entry: Entry
  /** the arrival cursor it had; when any entry lacks one, cursors are assigned in input order */
  cursor?: number
  /** canonical bytes and id, when the store has them (saves an encode and a hash) */
  bytes?: Uint8Array
  id?: string
}

export interface RestoreInput {
  entries: Iterable<RestoredEntry>
  /** the entries' bytes are in the log's archive already (read back from it): not put again */
  archived?: boolean
  pending?: Iterable<Entry>
  forks?: Iterable<ForkProof>
}

export interface PreparedRestore {
  /** in cursor order */
  arrivals: StoredEntry[]
  /** each author's entries, in seq order from 1 */
  feeds: Map<string, StoredEntry[]>
}

/** Validates and orders restored entries; throws InvalidArgumentError and keeps nothing on a hole. */
export function prepareRestore(entries: Iterable<RestoredEntry>): PreparedRestore {
  const items = [...entries]
  const keepCursors = items.every(r => r.cursor !== undefined)
  const arrivals: StoredEntry[] = items.map((r, i) => {
    const bytes = r.bytes ?? encodeEntry(r.entry)
    return { id: r.id ?? idOfBytes(bytes), entry: r.entry, bytes, cursor: keepCursors ? (r.cursor as number) : i + 1 }
  })
  arrivals.sort((x, y) => x.cursor - y.cursor)
  for (let i = 1; i < arrivals.length; i++) {
    if (arrivals[i].cursor === arrivals[i - 1].cursor) throw new InvalidArgumentError(`restored entries share cursor ${arrivals[i].cursor}`)
  }

  const feeds = new Map<string, StoredEntry[]>()
  for (const s of arrivals) {
    const feed = feeds.get(s.entry.author)
    if (feed == null) feeds.set(s.entry.author, [s])
    else feed.push(s)
  }
  for (const [author, feed] of feeds) {
    feed.sort((x, y) => x.entry.seq - y.entry.seq)
    feed.forEach((s, i) => {
      if (s.entry.seq !== i + 1) throw new InvalidArgumentError(`restored feed of ${author} is not whole at seq ${i + 1}`)
    })
  }
  return { arrivals, feeds }
}
