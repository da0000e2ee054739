// The API's view of a log entry: ids in hex, the body decoded to JSON.
import type { LogEntry } from '../gen/agency/v1/api.js'
import type { StoredEntry } from '../core/log/ingest-result.js'
import { bodyToJson } from '../core/log/kinds.js'

export function logEntryView (e: StoredEntry): LogEntry {
  let body: unknown
  try { body = bodyToJson(e.entry.kind, e.entry.body) } catch { body = null }
  return {
    id: e.id,
    author: e.entry.author,
    seq: e.entry.seq,
    lamport: e.entry.lamport,
    time: e.entry.time,
    kind: e.entry.kind,
    bodyJson: JSON.stringify(body),
    cursor: e.cursor
  }
}
