// The sync sender's reads (store/feed-reader): the entries at given cursors,
// each author's in order, read from a real LevelDB store in windows (ranges
// where dense, multi-gets where sparse), and accepted entries not yet written.
import { afterEach, describe, expect, it } from 'vitest'
import { openStore, type AgencyStore } from '../../src/store/open-store.js'
import type { StoredEntryRecord } from '../../src/store/log-store.js'
import { readFeeds } from '../../src/store/feed-reader.js'
import { feed, tempDirs } from './helpers.js'

const dirs = tempDirs()
const open: AgencyStore[] = []
afterEach(async () => {
  await Promise.all(
    open.splice(0).map(async s => {
      await s.close()
    })
  )
  await dirs.cleanup()
})

const AUTHORS = ['12D3KooWAlice', '12D3KooWBob', '12D3KooWCarol']

/** Three feeds of `n` entries interleaved in a fixed pseudo-random arrival order, with their cursors per author. */
function interleavedLog(n: number): { records: StoredEntryRecord[]; groups: number[][] } {
  const feeds = AUTHORS.map(a => feed(a, n, 0))
  const at = AUTHORS.map(() => 0)
  const records: StoredEntryRecord[] = []
  const groups: number[][] = AUTHORS.map(() => [])
  let x = 7
  while (records.length < n * AUTHORS.length) {
    x = (x * 1103515245 + 12345) % 2147483648
    const a = x % AUTHORS.length
    if (at[a] >= n) continue
    const r = { ...feeds[a][at[a]++], cursor: records.length + 1 }
    records.push(r)
    groups[a].push(r.cursor)
  }
  return { records, groups }
}

async function storeWith(records: StoredEntryRecord[]): Promise<AgencyStore> {
  const s = await openStore(await dirs.make())
  open.push(s)
  for (let i = 0; i < records.length; i += 500) await s.log.putAccepted(records.slice(i, i + 500), { sync: false })
  return s
}

function reads(s: AgencyStore, counted: { range: number; many: number; one: number }): Parameters<typeof readFeeds>[1] {
  return {
    lastWritten: () => s.log.lastCursor(),
    range: async (from, to) => {
      counted.range++
      return await s.log.bytesInRange(from, to)
    },
    many: async cursors => {
      counted.many++
      return await s.log.bytesAtMany(cursors)
    },
    one: cursor => {
      counted.one++
      return s.log.archive.get(cursor)
    }
  }
}

async function sent(
  groups: number[][],
  s: AgencyStore,
  counted: { range: number; many: number; one: number },
  window?: number
): Promise<Buffer[]> {
  const out: Buffer[] = []
  for await (const chunk of readFeeds(groups, reads(s, counted), window)) for (const b of chunk) out.push(Buffer.from(b))
  return out
}

/** Per author, the bytes in the order they were sent. */
function byAuthor(bytes: Buffer[], records: StoredEntryRecord[]): Map<string, string[]> {
  const authorOf = new Map(records.map(r => [Buffer.from(r.bytes).toString('hex'), r.entry.author]))
  const out = new Map<string, string[]>()
  for (const b of bytes) {
    const hex = b.toString('hex')
    const a = authorOf.get(hex) as string
    out.set(a, [...(out.get(a) ?? []), hex])
  }
  return out
}

describe('readFeeds', () => {
  it("sends every asked entry once, each author's in seq order, reading dense windows as ranges", async () => {
    const { records, groups } = interleavedLog(400)
    const s = await storeWith(records)
    const counted = { range: 0, many: 0, one: 0 }
    const out = await sent(groups, s, counted, 256)
    expect(out).toHaveLength(records.length)
    const per = byAuthor(out, records)
    for (const [a, g] of groups.entries()) {
      expect(per.get(AUTHORS[a])).toEqual(g.map(c => Buffer.from(records[c - 1].bytes).toString('hex')))
    }
    // 1200 cursors in windows of 256: a handful of range reads, no look-up per entry
    expect(counted.range).toBe(Math.ceil(records.length / 256))
    expect(counted.many + counted.one).toBe(0)
  })

  it('reads what a peer lacks from the middle of feeds, and sparse windows with one multi-get each', async () => {
    const { records, groups } = interleavedLog(300)
    const s = await storeWith(records)
    // the peer holds Alice's first 250 and all of Carol's; it lacks Bob's last 10 only: sparse
    const asked = [groups[0].slice(250), groups[1].slice(290)]
    const counted = { range: 0, many: 0, one: 0 }
    const out = await sent(asked, s, counted)
    const per = byAuthor(out, records)
    expect(per.get(AUTHORS[0])).toEqual(asked[0].map(c => Buffer.from(records[c - 1].bytes).toString('hex')))
    expect(per.get(AUTHORS[1])).toEqual(asked[1].map(c => Buffer.from(records[c - 1].bytes).toString('hex')))
    expect(per.has(AUTHORS[2])).toBe(false)
    expect(counted.one).toBe(0)
    expect(counted.range + counted.many).toBeGreaterThan(0)
  })

  it('reads entries accepted but not written yet from the archive', async () => {
    const { records, groups } = interleavedLog(50)
    const s = await storeWith(records.slice(0, 100))
    for (const r of records.slice(100)) s.log.archive.put(r.cursor, r.bytes)
    const counted = { range: 0, many: 0, one: 0 }
    const out = await sent(groups, s, counted)
    expect(out.map(b => b.toString('hex')).sort()).toEqual(records.map(r => Buffer.from(r.bytes).toString('hex')).sort())
    expect(counted.one).toBe(records.length - 100)
  })

  it('refuses a cursor the log does not hold', async () => {
    const { records } = interleavedLog(10)
    const s = await storeWith(records)
    const counted = { range: 0, many: 0, one: 0 }
    await expect(sent([[1, 2, records.length + 5]], s, counted)).rejects.toThrow(/no entry at cursor/)
    await expect(s.log.bytesInRange(1, records.length + 1)).rejects.toThrow(/past the last stored cursor/)
  })
})
