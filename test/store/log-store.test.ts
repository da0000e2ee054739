import { afterEach, describe, expect, it, vi } from 'vitest'
import { openStore, type AgencyStore } from '../../src/store/open-store.js'
import type { StoredEntryRecord } from '../../src/store/log-store.js'
import { entryRecord, feed, plain, tempDirs } from './helpers.js'

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

async function storeIn(dir: string): Promise<AgencyStore> {
  const s = await openStore(dir)
  open.push(s)
  return s
}

async function all(s: AgencyStore): Promise<StoredEntryRecord[]> {
  const out: StoredEntryRecord[] = []
  for await (const r of s.log.loadAll()) out.push(r)
  return out
}

const ALICE = '12D3KooWAlice'
const BOB = '12D3KooWBob'

/** Alice 1..3 and Bob 1..2, interleaved in arrival order. */
function interleaved(): StoredEntryRecord[] {
  const a = feed(ALICE, 3, 0)
  const b = feed(BOB, 2, 0)
  const order = [a[0], b[0], a[1], a[2], b[1]]
  return order.map((r, i) => ({ ...r, cursor: i + 1 }))
}

describe('LogStore', () => {
  it('round-trips accepted entries by cursor, in cursor order', async () => {
    const s = await storeIn(await dirs.make())
    const records = interleaved()
    await s.log.putAccepted(records.slice(0, 2), { sync: true })
    await s.log.putAccepted(records.slice(2), { sync: true })

    expect((await all(s)).map(plain)).toEqual(records.map(plain))
    expect(Buffer.from((await s.log.bytesAt(4))!).toString('hex')).toBe(Buffer.from(records[3].bytes).toString('hex'))
    expect(Buffer.from(s.log.bytesAtSync(5)!).toString('hex')).toBe(Buffer.from(records[4].bytes).toString('hex'))
    expect(await s.log.bytesAt(6)).toBeUndefined()
    expect(s.log.bytesAtSync(6)).toBeUndefined()
    expect(s.log.loadVector()).toEqual(
      new Map([
        [ALICE, 3],
        [BOB, 2]
      ])
    )
    expect(s.log.count()).toBe(5)
    expect(s.log.lastCursor()).toBe(5)
    expect((await s.log.readAfter(3, 10)).map(r => r.cursor)).toEqual([4, 5])
    const pages: number[][] = []
    for await (const page of s.log.bytesAfter(1, 2)) pages.push(page.map(p => p.cursor))
    expect(pages).toEqual([
      [2, 3],
      [4, 5]
    ])
  })

  it('keeps the log, vector, cursor, pending set and forks across a restart', async () => {
    const dir = await dirs.make()
    const records = interleaved()
    const waiting = entryRecord(ALICE, 5, 0)
    const forkA = entryRecord(BOB, 2, 0).entry
    const forkB = { ...forkA, body: Buffer.from('a different body') }
    const first = await openStore(dir)
    await first.log.putAccepted(records, { sync: true })
    await first.log.putPending([waiting])
    await first.log.putFork({ author: BOB, seq: 2, a: forkA, b: forkB })
    await first.close()

    const s = await storeIn(dir)
    expect((await all(s)).map(plain)).toEqual(records.map(plain))
    expect(s.log.loadVector()).toEqual(
      new Map([
        [ALICE, 3],
        [BOB, 2]
      ])
    )
    expect(s.log.count()).toBe(5)
    expect(s.log.lastCursor()).toBe(5)
    expect((await s.log.loadPending()).map(plain)).toEqual([plain({ ...waiting, cursor: undefined })])
    const forks = await s.log.loadForks()
    expect(forks).toEqual([{ author: BOB, seq: 2, a: forkA, b: forkB }])

    // the next batch continues where the reopened store left off
    await expect(s.log.putAccepted([entryRecord(ALICE, 4, 5)], { sync: true })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
    await s.log.putAccepted([entryRecord(ALICE, 4, 6)], { sync: true })
    expect(s.log.loadVector().get(ALICE)).toBe(4)
  })

  it('removes accepted ids from the pending set in the same batch', async () => {
    const s = await storeIn(await dirs.make())
    const [one, two, three] = feed(ALICE, 3, 1)
    await s.log.putPending([two, three])
    await s.log.putAccepted([one, two], { sync: true })
    expect((await s.log.loadPending()).map(r => r.id)).toEqual([three.id])
    await s.log.removePending([three.id])
    expect(await s.log.loadPending()).toEqual([])
  })

  it('passes sync to LevelDB for acknowledged writes', async () => {
    const s = await storeIn(await dirs.make())
    // the implementation's batch, which every write ends in (writeRaw calls it directly)
    const batch = vi.spyOn(s.db as unknown as { _batch: (ops: unknown[], o: { sync?: boolean }) => Promise<void> }, '_batch')
    await s.log.putAccepted(feed(ALICE, 1, 1), { sync: true })
    await s.log.putAccepted([entryRecord(ALICE, 2, 2)], { sync: false })
    expect(batch.mock.calls.map(c => ((c as unknown[])[1] as { sync?: boolean }).sync)).toEqual([true, false])
  })

  it('orders seq and cursor keys numerically past 9, 99 and 999', async () => {
    const s = await storeIn(await dirs.make())
    const records = feed(ALICE, 1205, 1)
    await s.log.putAccepted(records.slice(0, 600), { sync: false })
    await s.log.putAccepted(records.slice(600), { sync: true })

    const cursors = (await all(s)).map(r => r.cursor)
    expect(cursors).toEqual(records.map(r => r.cursor))
    for (const after of [9, 99, 999]) {
      expect((await s.log.readAfter(after, 2)).map(r => r.cursor)).toEqual([after + 1, after + 2])
    }
    expect(s.log.loadVector().get(ALICE)).toBe(1205)
  })

  it('keeps authors apart whose ids share a prefix', async () => {
    const s = await storeIn(await dirs.make())
    await s.log.putAccepted([...feed('12D3KooWA', 2, 1), ...feed('12D3KooWAB', 2, 3)], { sync: true })
    expect(s.log.loadVector()).toEqual(
      new Map([
        ['12D3KooWA', 2],
        ['12D3KooWAB', 2]
      ])
    )
  })

  describe('refuses a batch that breaks the log and writes nothing of it', () => {
    // Each batch starts with a valid entry (Bob #1 at cursor 3) and then breaks a rule.
    const cases: Array<[string, () => StoredEntryRecord[]]> = [
      ['a gap in seq', () => [entryRecord(ALICE, 3, 4), entryRecord(ALICE, 5, 5)]],
      ['a seq already stored', () => [entryRecord(ALICE, 3, 4), entryRecord(ALICE, 2, 5)]],
      ['a seq twice in the batch', () => [entryRecord(ALICE, 3, 4), entryRecord(ALICE, 3, 5)]],
      ['a cursor not after the last one', () => [entryRecord(ALICE, 3, 2)]],
      ['a gap in cursors', () => [entryRecord(ALICE, 3, 5)]],
      ['a cursor twice in the batch', () => [entryRecord(ALICE, 3, 4), entryRecord(BOB, 2, 4)]],
      ['a cursor of 0', () => [entryRecord(BOB, 2, 0)]],
      ['an id that is not hex', () => [{ ...entryRecord(ALICE, 3, 4), id: 'xyz' }]],
      ['empty bytes', () => [{ ...entryRecord(ALICE, 3, 4), bytes: new Uint8Array() }]],
      ['an author with a slash', () => [entryRecord('a/b', 1, 4)]],
      ['a fractional seq', () => [{ ...entryRecord(ALICE, 3, 4), entry: { ...entryRecord(ALICE, 3, 4).entry, seq: 2.5 } }]]
    ]
    for (const [name, make] of cases) {
      it(name, async () => {
        const s = await storeIn(await dirs.make())
        const base = feed(ALICE, 2, 1)
        await s.log.putAccepted(base, { sync: true })
        await expect(s.log.putAccepted([entryRecord(BOB, 1, 3), ...make()], { sync: true })).rejects.toMatchObject({
          name: 'InvalidArgumentError',
          code: 'INVALID_ARGUMENT'
        })
        expect((await all(s)).map(plain)).toEqual(base.map(plain))
        expect(s.log.loadVector()).toEqual(new Map([[ALICE, 2]]))
        expect(s.log.count()).toBe(2)
        expect(s.log.lastCursor()).toBe(2)
      })
    }
  })

  it('stores a fork proof once however often it is reported', async () => {
    const s = await storeIn(await dirs.make())
    const a = entryRecord(ALICE, 1, 1).entry
    const b = { ...a, body: Buffer.from('b') }
    const c = { ...a, body: Buffer.from('c') }
    await s.log.putFork({ author: ALICE, seq: 1, a, b })
    await s.log.putFork({ author: ALICE, seq: 1, a, b })
    await s.log.putFork({ author: ALICE, seq: 1, a, b: c })
    expect(await s.log.loadForks()).toHaveLength(2)
    await expect(s.log.putFork({ author: ALICE, seq: 0, a, b })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
  })

  it('serialises concurrent batches so that cursors and seqs stay consistent', async () => {
    const s = await storeIn(await dirs.make())
    const records = feed(ALICE, 20, 1)
    const results = await Promise.allSettled(
      records.map(async r => {
        await s.log.putAccepted([r], { sync: false })
      })
    )
    expect(results.every(r => r.status === 'fulfilled')).toBe(true)
    expect(s.log.loadVector().get(ALICE)).toBe(20)
    // the same batch twice at once: one wins, the other is refused as already stored
    const next = entryRecord(ALICE, 21, 21)
    const twice = await Promise.allSettled([s.log.putAccepted([next], { sync: true }), s.log.putAccepted([next], { sync: true })])
    expect(twice.map(r => r.status).sort()).toEqual(['fulfilled', 'rejected'])
    expect(s.log.count()).toBe(21)
  })
})
