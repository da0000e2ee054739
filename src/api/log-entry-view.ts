// The API's view of a log entry: ids in hex, the body decoded to JSON.
import type { LogEntry } from '../gen/agency/v1/api.js'
import type { StoredEntry } from '../core/log/ingest-result.js'
import { bodyToJson } from '../core/log/kinds.js'
import type { ArrivalTimes } from '../core/log/arrival-times.js'

/** `arrivals`: this daemon's record of when it took in its latest entries (accepted_at; 0 without it) */
export function logEntryView(e: StoredEntry, arrivals?: ArrivalTimes): LogEntry {
  let body: unknown
  try {
    body = bodyToJson(e.entry.kind, e.entry.body)
  } catch {
    body = null
  }
  return {
    id: e.id,
    author: e.entry.author,
    seq: e.entry.seq,
    lamport: e.entry.lamport,
    time: e.entry.time,
    kind: e.entry.kind,
    bodyJson: JSON.stringify(body),
    cursor: e.cursor,
    acceptedAt: arrivals?.at(e.cursor) ?? 0
  }
}
