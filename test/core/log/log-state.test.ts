import { describe, expect, it, beforeAll } from 'vitest'
import { LogState } from '../../../src/core/log/log-state.js'
import { encodeEntry, entryIdHex, signEntry } from '../../../src/core/log/entry.js'
import { decodeBody } from '../../../src/core/log/kinds.js'
import { FailedPreconditionError, InvalidArgumentError, TooLargeError } from '../../../src/core/errors.js'
import { makeIdentities, impostor, type TestIdentity } from '../../helpers/identity.js'
import { chain, findingBody } from './chains.js'

let a: TestIdentity
let b: TestIdentity
let c: TestIdentity
beforeAll(async () => {
  ;[a, b, c] = await makeIdentities(3)
})

const note = (text: string) => ({ kind: 'note', text })

describe('LogState: appending', () => {
  it("chains the author's entries by seq, prev and lamport, and gives each a cursor", () => {
    const log = new LogState()
    const first = log.append(a.signer, 'finding', note('one'), 1000)
    const second = log.append(a.signer, 'finding', note('two'), 2000)
    expect(first.entry).toMatchObject({ author: a.id, seq: 1, lamport: 1, time: 1000, kind: 'finding' })
    expect(first.entry.prev).toHaveLength(0)
    expect(second.entry.seq).toBe(2)
    expect(second.entry.lamport).toBe(2)
    expect(second.entry.prev.toString('hex')).toBe(first.id)
    expect([first.cursor, second.cursor]).toEqual([1, 2])
    expect(first.id).toBe(entryIdHex(first.entry))
    expect(first.bytes).toEqual(encodeEntry(first.entry))
    expect(decodeBody('finding', second.entry.body).text).toBe('two')
    expect(log.vector()).toEqual(new Map([[a.id, 2]]))
    expect(log.get(second.id)).toEqual(second)
    expect(log.byAuthorSeq(a.id, 1)).toEqual(first)
    expect(log.size).toBe(2)
    expect(log.countsByKind()).toEqual(new Map([['finding', 2]]))
  })

  it('sets lamport to one more than the highest it has seen from anyone', () => {
    const peer = new LogState()
    for (let i = 0; i < 5; i++) peer.append(b.signer, 'finding', note(`b${i}`), i)
    const log = new LogState()
    log.append(a.signer, 'finding', note('a1'), 0)
    expect(log.ingestBatch(peer.entriesAfter(new Map()).map(s => s.entry)).accepted).toHaveLength(5)
    expect(log.lamport).toBe(5)
    expect(log.append(a.signer, 'goal', { text: 'g' }, 9).entry.lamport).toBe(6)
  })

  it('refuses bad appends with named errors and changes nothing', () => {
    const log = new LogState()
    log.append(a.signer, 'finding', note('one'), 1)
    const before = { size: log.size, rejected: log.rejected, cursor: log.cursor }
    expect(() => log.append(a.signer, 'nope' as 'goal', {}, 1)).toThrow(InvalidArgumentError)
    expect(() => log.append(a.signer, 'finding', note('x'), -1)).toThrow(InvalidArgumentError)
    expect(() => log.append(a.signer, 'finding', note('x'.repeat(70_000)), 1)).toThrow(TooLargeError)
    expect(() => log.append(impostor(b, a), 'finding', note('x'), 1)).toThrow(InvalidArgumentError)
    expect({ size: log.size, rejected: log.rejected, cursor: log.cursor }).toEqual(before)
    expect(log.append(a.signer, 'finding', note('two'), 2).entry.seq).toBe(2)
  })
})

describe('LogState: ingesting', () => {
  it('reports a duplicate, by id, without counting it as a rejection', () => {
    const [e] = chain(a.signer, 1)
    const log = new LogState()
    expect(log.ingest(e).status).toBe('accepted')
    expect(log.ingest(e)).toEqual({ status: 'duplicate', id: entryIdHex(e) })
    expect(log.ingestBytes(encodeEntry(e)).status).toBe('duplicate')
    expect(log.duplicates).toBe(2)
    expect(Object.values(log.rejected).every(n => n === 0)).toBe(true)
  })

  it('holds an entry after a gap until the gap fills, then accepts the run in seq order', () => {
    const [e1, e2, e3] = chain(a.signer, 3)
    const log = new LogState()
    const r3 = log.ingest(e3)
    expect(r3.status).toBe('pending')
    expect(log.ingest(e2).status).toBe('pending')
    expect(log.pendingCount).toBe(2)
    expect(log.vector()).toEqual(new Map())
    const r1 = log.ingest(e1)
    if (r1.status !== 'accepted') throw new Error(r1.status)
    expect(r1.accepted.map(s => s.entry.seq)).toEqual([1, 2, 3])
    expect(r1.pendingRemoved.map(p => p.entry.seq).sort()).toEqual([2, 3])
    expect(log.pendingCount).toBe(0)
    expect(log.vector()).toEqual(new Map([[a.id, 3]]))
  })

  it('takes entries as bytes, and counts bytes that are not an entry as malformed without throwing', () => {
    const [e] = chain(a.signer, 1)
    const log = new LogState()
    expect(log.ingestBytes(encodeEntry(e)).status).toBe('accepted')
    expect(log.ingestBytes(Uint8Array.from([0xff, 0x00]))).toEqual({ status: 'rejected', id: null, reason: 'malformed' })
    expect(log.ingestBytes(new Uint8Array(70_000))).toMatchObject({ status: 'rejected', reason: 'too_large' })
    expect(log.rejected).toMatchObject({ malformed: 1, too_large: 1 })
  })

  it('orders entries by (lamport, author, seq), whatever their arrival order', () => {
    const feeds = [a, b, c].map(id => chain(id.signer, 3))
    const one = new LogState()
    const two = new LogState()
    for (const e of feeds.flat()) one.ingest(e)
    for (const e of feeds.flat().reverse()) two.ingest(e)
    const key = (s: { entry: { lamport: number; author: string } }) => `${s.entry.lamport}/${s.entry.author}`
    const expected = feeds
      .flat()
      .map(e => ({ entry: e }))
      .sort((x, y) => (key(x) < key(y) ? -1 : 1))
      .map(key)
    expect(one.ordered().map(key)).toEqual(expected)
    expect(two.ordered().map(s => s.id)).toEqual(one.ordered().map(s => s.id))
  })
})

describe('LogState: queries for sync and streams', () => {
  it('lists what a peer lacks, per author in seq order, and a prefix of it leaves no gap', () => {
    const log = new LogState()
    for (const e of [...chain(a.signer, 4), ...chain(b.signer, 2)]) log.ingest(e)
    const after = log.entriesAfter(new Map([[a.id, 2]]))
    expect(after.map(s => [s.entry.author, s.entry.seq])).toEqual(
      [a.id, b.id].sort().flatMap(id =>
        id === a.id
          ? [
              [a.id, 3],
              [a.id, 4]
            ]
          : [
              [b.id, 1],
              [b.id, 2]
            ]
      )
    )
    const peer = new LogState()
    for (const e of chain(a.signer, 2)) peer.ingest(e)
    const prefix = log.entriesAfter(peer.vector(), 3)
    expect(prefix).toHaveLength(3)
    const r = peer.ingestBatch(prefix.map(s => s.entry))
    expect(r.accepted).toHaveLength(3)
    expect(peer.pendingCount).toBe(0)
    expect(log.entriesAfter(log.vector())).toEqual([])
  })

  it('resumes a stream after a cursor', () => {
    const log = new LogState()
    for (const e of chain(a.signer, 5)) log.ingest(e)
    expect(log.afterCursor(0).map(s => s.cursor)).toEqual([1, 2, 3, 4, 5])
    expect(log.afterCursor(3).map(s => s.cursor)).toEqual([4, 5])
    expect(log.afterCursor(1, 2).map(s => s.cursor)).toEqual([2, 3])
    expect(log.afterCursor(5)).toEqual([])
    expect(log.cursor).toBe(5)
  })
})

describe('LogState: restore', () => {
  it('restores a log with its cursors and pending set, and carries on appending', () => {
    const src = new LogState()
    for (const e of [...chain(b.signer, 3), ...chain(c.signer, 2)]) src.ingest(e)
    src.append(a.signer, 'finding', note('mine'), 5)
    const [, , , , p5] = chain(b.signer, 5)
    expect(src.ingest(p5).status).toBe('pending')

    const log = new LogState()
    const r = log.restore({
      entries: src
        .afterCursor(0)
        .reverse()
        .map(s => ({ entry: s.entry, cursor: s.cursor })),
      pending: src.pendingEntries().map(p => p.entry)
    })
    expect(r.accepted).toEqual([])
    expect(log.vector()).toEqual(src.vector())
    expect(log.ordered().map(s => s.id)).toEqual(src.ordered().map(s => s.id))
    expect(log.afterCursor(0).map(s => [s.id, s.cursor])).toEqual(src.afterCursor(0).map(s => [s.id, s.cursor]))
    expect(log.pendingCount).toBe(1)
    expect(log.lamport).toBe(src.lamport)
    const next = log.append(a.signer, 'finding', note('after restart'), 6)
    expect(next.entry.seq).toBe(2)
    expect(next.cursor).toBe(src.cursor + 1)
  })

  it('accepts restored pending entries that the restored feed now reaches', () => {
    const [e1, e2] = chain(a.signer, 2)
    const log = new LogState()
    const r = log.restore({ entries: [{ entry: e1 }], pending: [e2] })
    expect(r.accepted.map(s => s.entry.seq)).toEqual([2])
    expect(r.pendingRemoved.map(p => p.entry.seq)).toEqual([2])
    expect(log.pendingCount).toBe(0)
  })

  it('refuses a feed with a hole, keeping nothing, and refuses a non-empty log', () => {
    const [e1, , e3] = chain(a.signer, 3)
    const log = new LogState()
    expect(() => log.restore({ entries: [{ entry: e1 }, { entry: e3 }] })).toThrow(InvalidArgumentError)
    expect(log.size).toBe(0)
    log.restore({ entries: [{ entry: e1 }] })
    expect(() => log.restore({ entries: [] })).toThrow(FailedPreconditionError)
  })
})

describe('LogState: options', () => {
  it('refuses bounds that could not hold one entry', () => {
    expect(() => new LogState({ maxPendingPerAuthor: 0 })).toThrow(InvalidArgumentError)
    expect(() => new LogState({ maxEntryBytes: 1000, maxPendingBytes: 999 })).toThrow(InvalidArgumentError)
  })

  it('enforces a smaller entry size when configured', () => {
    const log = new LogState({ maxEntryBytes: 200 })
    const e = signEntry(a.signer, {
      seq: 1,
      prev: new Uint8Array(0),
      lamport: 1,
      time: 1,
      kind: 'finding',
      body: findingBody('y'.repeat(300))
    })
    expect(log.ingest(e)).toMatchObject({ status: 'rejected', reason: 'too_large' })
  })
})
