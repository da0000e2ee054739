// Every log entry written during a simulated run, in the order written (which
// is virtual-time order). Replicas refer to entries by index and hold a bitset
// of the ones they have, so a thousand replicas share one copy of each entry
// and anti-entropy is a bitset difference.
//
// Entries are the board's decoded shape (and a StoredEntry for findings), not
// signed bytes: verifying a thousand replicas' worth of Ed25519 signatures
// would measure node:crypto, not coordination. Their wire size is the size of
// the real signed encoding (cost-model.ts).

import type { BoardEntry } from '../../core/board/types.js'
import type { StoredEntry } from '../../core/log/ingest-result.js'

export interface PoolEntry {
  index: number
  /** writer's node index */
  author: number
  sentAt: number
  /** size of the signed entry on the wire */
  bytes: number
  kind: string
  /** board kinds */
  board?: BoardEntry
  /** kind "finding" */
  finding?: StoredEntry
  /** a finding the agents search (in the shared findings index) */
  searchable?: boolean
  /** the task a task/claim/release/done entry is about, as a project task index */
  task?: number
}

export class EntryPool {
  readonly entries: PoolEntry[] = []

  get size(): number {
    return this.entries.length
  }

  add(e: Omit<PoolEntry, 'index'>): PoolEntry {
    // index first, then the fields: a spread would give every entry a hidden class of its own
    const entry: PoolEntry = {
      index: this.entries.length,
      author: e.author,
      sentAt: e.sentAt,
      bytes: e.bytes,
      kind: e.kind,
      board: e.board,
      finding: e.finding,
      searchable: e.searchable,
      task: e.task
    }
    this.entries.push(entry)
    return entry
  }
}
