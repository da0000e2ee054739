// Shared fixtures for the store tests: temp data dirs and entry records.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Entry } from '../../src/gen/agency/v1/log.js'
import { sha256, toHex } from '../../src/core/log/crypto.js'
import type { StoredEntryRecord } from '../../src/store/log-store.js'

export interface TempDirs {
  make: () => Promise<string>
  cleanup: () => Promise<void>
}

/** Temp dirs made during a test; `cleanup` (in afterEach) removes them all. */
export function tempDirs(): TempDirs {
  const made: string[] = []
  return {
    make: async () => {
      const dir = await mkdtemp(join(tmpdir(), 'agency-store-'))
      made.push(dir)
      return dir
    },
    cleanup: async () => {
      await Promise.all(
        made.splice(0).map(async d => {
          await rm(d, { recursive: true, force: true })
        })
      )
    }
  }
}

/** An entry record shaped like the log core's (signature is filler: the store does not verify). */
export function entryRecord(author: string, seq: number, cursor: number, prev = ''): StoredEntryRecord {
  const entry = Entry.fromPartial({
    author,
    seq,
    prev: Buffer.from(prev, 'hex'),
    lamport: seq,
    time: 1_700_000_000_000 + seq,
    kind: 'finding',
    body: Buffer.from(`body of ${author} #${seq}`),
    sig: Buffer.alloc(64, seq % 256)
  })
  const bytes = Entry.encode(entry).finish()
  return { id: toHex(sha256(bytes)), entry, bytes, cursor }
}

/** A feed of `count` entries by one author, seq 1..count, chained by prev. */
export function feed(author: string, count: number, firstCursor: number): StoredEntryRecord[] {
  const out: StoredEntryRecord[] = []
  let prev = ''
  for (let i = 0; i < count; i++) {
    const r = entryRecord(author, i + 1, firstCursor + i, prev)
    out.push(r)
    prev = r.id
  }
  return out
}

/** Plain comparable form of a record: ids, decoded entry and bytes as hex. */
export function plain(r: { id: string; entry: Entry; bytes: Uint8Array; cursor?: number }): unknown {
  return { id: r.id, cursor: r.cursor, entry: Entry.toJSON(r.entry), bytes: Buffer.from(r.bytes).toString('hex') }
}
