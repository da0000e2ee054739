// The bulk path of sync (LogState.ingestBatchBytes): entries as the bytes a
// peer sent, authenticated by hash chain and one signature per author's run.
// Each hostile batch is refused in the part that is not authenticated, with
// nothing of it stored, while the honest entries around it are accepted.
import { describe, expect, it, beforeAll } from 'vitest'
import fc from 'fast-check'
import { LogState } from '../../../src/core/log/log-state.js'
import { decodeEntry, encodeEntry, entryId, entryIdHex, signEntry } from '../../../src/core/log/entry.js'
import { scanEntry } from '../../../src/core/log/entry-scan.js'
import { verifyForkProof } from '../../../src/core/log/fork.js'
import type { Entry } from '../../../src/gen/agency/v1/log.js'
import { makeIdentities, impostor, type TestIdentity } from '../../helpers/identity.js'
import { chain, findingBody } from './chains.js'

let a: TestIdentity
let b: TestIdentity
beforeAll(async () => {
  ;[a, b] = await makeIdentities(2)
})

const bytesOf = (entries: Entry[]): Uint8Array[] => entries.map(encodeEntry)
const seqs = (log: LogState, author: string): number[] => log.feedCursors(author, 1, 1e9).map(c => log.atCursor(c)?.entry.seq as number)
const holds = (log: LogState, e: Entry): boolean => log.get(entryIdHex(e)) !== undefined

/** The author's other entry at `seq` after `prev`: validly signed, a different body. */
function otherAt(id: TestIdentity, seq: number, prev: Uint8Array): Entry {
  return signEntry(id.signer, { seq, prev, lamport: seq, time: 7, kind: 'finding', body: findingBody(`other ${seq}`) })
}

function flipByte(buf: Buffer, at = 0): Buffer {
  const copy = Buffer.from(buf)
  copy[at] ^= 0x01
  return copy
}

describe('reading an entry straight from its bytes', () => {
  it('gives the fields a protobuf decode gives, for any entry', () => {
    fc.assert(
      fc.property(
        fc.record({
          seq: fc.integer({ min: 1, max: 2 ** 40 }),
          lamport: fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
          time: fc.nat(),
          text: fc.string(),
          kind: fc.constantFrom('finding', 'claim', 'task')
        }),
        ({ seq, lamport, time, text, kind }) => {
          const e = signEntry(a.signer, {
            seq,
            prev: seq === 1 ? new Uint8Array(0) : Buffer.alloc(32, 9),
            lamport,
            time,
            kind,
            body: findingBody(text)
          })
          const bytes = encodeEntry(e)
          expect(scanEntry(bytes)).toEqual(decodeEntry(bytes))
        }
      ),
      { numRuns: 200 }
    )
  })

  it('takes only canonical bytes: whatever it reads, decodeEntry reads the same', () => {
    const [e] = chain(a.signer, 1)
    const good = encodeEntry(e)
    fc.assert(
      fc.property(
        fc.array(fc.record({ at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }), { minLength: 1, maxLength: 4 }),
        fc.nat(8),
        (edits, cut) => {
          const bytes = Buffer.from(good.subarray(0, good.length - (cut % 3 === 0 ? cut : 0)))
          for (const { at, byte } of edits) bytes[at % bytes.length] = byte
          const scanned = scanEntry(bytes)
          if (scanned === undefined) return
          expect(scanned).toEqual(decodeEntry(bytes))
        }
      ),
      { numRuns: 2000 }
    )
    // forms the scan leaves to decodeEntry: a non-minimal varint, a field out of order, a field at its default
    expect(scanEntry(Buffer.concat([Buffer.from([0x10, 0x81, 0x00]), good.subarray(good.indexOf(0x1a))]))).toBeUndefined()
    expect(scanEntry(Buffer.from([0x10, 0x01, 0x0a, 0x01, 0x41]))).toBeUndefined()
    expect(scanEntry(Buffer.from([0x0a, 0x01, 0x41, 0x10, 0x00]))).toBeUndefined()
  })
})

describe('the bytes path of a batch', () => {
  it('accepts what the decoded path accepts, with the bytes as sent', () => {
    const feedA = chain(a.signer, 30)
    const feedB = chain(b.signer, 30)
    const mixed = feedA.flatMap((e, i) => [e, feedB[i]])
    const viaBytes = new LogState()
    const r = viaBytes.ingestBatchBytes(bytesOf(mixed))
    expect(r.accepted).toHaveLength(60)
    const viaEntries = new LogState()
    viaEntries.ingestBatch(mixed)
    expect(viaBytes.vector()).toEqual(viaEntries.vector())
    expect(viaBytes.summaries()).toEqual(viaEntries.summaries())
    expect(Buffer.compare(viaBytes.byAuthorSeq(a.id, 7)?.bytes as Uint8Array, encodeEntry(feedA[6]))).toBe(0)
    // the same batch again: all duplicates
    expect(viaBytes.ingestBatchBytes(bytesOf(mixed)).duplicates).toBe(60)
  })

  it("keeps none of the caller's buffer: reusing it changes nothing held", () => {
    const feed = chain(a.signer, 3)
    const frames = bytesOf(feed).map(x => Buffer.from(x))
    const log = new LogState()
    log.ingestBatchBytes(frames)
    for (const f of frames) f.fill(0)
    expect(log.byAuthorSeq(a.id, 2)?.entry).toEqual(feed[1])
    expect(Buffer.compare(log.byAuthorSeq(a.id, 3)?.bytes as Uint8Array, encodeEntry(feed[2]))).toBe(0)
  })

  it('a forged entry in the middle of a run: refused and not stored; the honest entries on both sides accepted', () => {
    const feed = chain(a.signer, 10)
    const [forged] = chain(impostor(a, b), 1, { start: 5, prev: entryId(feed[3]) })
    const log = new LogState()
    const r = log.ingestBatchBytes(bytesOf([...feed.slice(0, 4), forged, ...feed.slice(4)]))
    expect(r.rejected).toEqual({ bad_signature: 1 })
    expect(holds(log, forged)).toBe(false)
    expect(seqs(log, a.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    expect(log.isFaulty(a.id)).toBe(false)
  })

  it('a forged entry where the honest one is missing: refused; what follows waits for the honest one', () => {
    const feed = chain(a.signer, 8)
    const [forged] = chain(impostor(a, b), 1, { start: 5, prev: entryId(feed[3]) })
    const log = new LogState()
    const r = log.ingestBatchBytes(bytesOf([...feed.slice(0, 4), forged, ...feed.slice(5)]))
    expect(r.rejected).toEqual({ bad_signature: 1 })
    expect(seqs(log, a.id)).toEqual([1, 2, 3, 4])
    expect(r.pendingAdded.map(p => p.entry.seq)).toEqual([6, 7, 8])
    // the honest entry arrives: the feed is whole
    expect(log.ingestBatchBytes(bytesOf([feed[4]])).accepted.map(s => s.entry.seq)).toEqual([5, 6, 7, 8])
  })

  it('a broken prev link (validly signed): the entry is refused and nothing after it is accepted on its strength', () => {
    const feed = chain(a.signer, 3)
    const rest = chain(a.signer, 3, { start: 4, prev: Buffer.alloc(32, 7) })
    const log = new LogState()
    const r = log.ingestBatchBytes(bytesOf([...feed, ...rest]))
    expect(seqs(log, a.id)).toEqual([1, 2, 3])
    expect(r.rejected).toEqual({ bad_prev: 1 })
    expect(holds(log, rest[0])).toBe(false)
    expect(r.pendingAdded.map(p => p.entry.seq)).toEqual([5, 6])
  })

  it('a head with a bad signature: the run before it is accepted, the head refused', () => {
    const feed = chain(a.signer, 40)
    const bad = { ...feed[39], sig: flipByte(feed[39].sig) }
    const log = new LogState()
    const r = log.ingestBatchBytes(bytesOf([...feed.slice(0, 39), bad]))
    expect(r.rejected).toEqual({ bad_signature: 1 })
    expect(seqs(log, a.id)).toHaveLength(39)
    expect(holds(log, bad)).toBe(false)
    // the honest head later
    expect(log.ingestBatchBytes(bytesOf([feed[39]])).accepted).toHaveLength(1)
  })

  it('a run whose every signature is forged: nothing accepted', () => {
    const forged = chain(impostor(a, b), 50)
    const log = new LogState()
    const r = log.ingestBatchBytes(bytesOf(forged))
    expect(r.accepted).toEqual([])
    expect(r.rejected).toEqual({ bad_signature: 50 })
    expect(log.size).toBe(0)
  })

  it("a run that does not start at the held feed's last entry: checked one by one, never taken on its last signature", () => {
    const feed = chain(a.signer, 6)
    const log = new LogState()
    log.ingestBatchBytes(bytesOf(feed.slice(0, 2)))
    // seq 3 onwards, chained from a seq 2 this log does not hold, the whole run forged but for a valid last signature
    const other2 = otherAt(a, 2, entryId(feed[0]))
    const tail = chain(impostor(a, b), 3, { start: 3, prev: entryId(other2) })
    const r = log.ingestBatchBytes(bytesOf(tail))
    expect(r.accepted).toEqual([])
    expect(seqs(log, a.id)).toEqual([1, 2])
    expect(tail.some(e => holds(log, e))).toBe(false)
    expect(r.rejected).toEqual({ bad_signature: 3 })
  })

  it('a run starting at a later seq (a gap) waits, each entry checked on its own signature', () => {
    const feed = chain(a.signer, 8)
    const log = new LogState()
    const r = log.ingestBatchBytes(bytesOf([...feed.slice(0, 2), ...feed.slice(4)]))
    expect(seqs(log, a.id)).toEqual([1, 2])
    expect(r.pendingAdded.map(p => p.entry.seq)).toEqual([5, 6, 7, 8])
    expect(log.ingestBatchBytes(bytesOf(feed.slice(2, 4))).accepted).toHaveLength(6)
  })

  it('a fork against a held entry, and within one batch: kept as proof, the author marked faulty, the held chain extended', () => {
    const feed = chain(a.signer, 6)
    const log = new LogState()
    log.ingestBatchBytes(bytesOf(feed.slice(0, 4)))
    const other3 = otherAt(a, 3, entryId(feed[1]))
    const r = log.ingestBatchBytes(bytesOf([other3, ...feed.slice(4)]))
    expect(r.rejected).toEqual({ fork: 1 })
    expect(r.forks).toHaveLength(1)
    expect(verifyForkProof(r.forks[0])).toBe(true)
    expect(log.isFaulty(a.id)).toBe(true)
    expect(seqs(log, a.id)).toEqual([1, 2, 3, 4, 5, 6])
    expect(holds(log, other3)).toBe(false)

    // two different entries at one new seq in one batch, both chained on the held feed
    const fresh = new LogState()
    const base = chain(b.signer, 2)
    const [x3] = chain(b.signer, 1, { start: 3, prev: entryId(base[1]) })
    const y3 = otherAt(b, 3, entryId(base[1]))
    const rf = fresh.ingestBatchBytes(bytesOf([...base, x3, y3]))
    expect(seqs(fresh, b.id)).toEqual([1, 2, 3])
    expect(rf.rejected).toEqual({ fork: 1 })
    expect(fresh.isFaulty(b.id)).toBe(true)
  })

  it('entries whose own signature was never checked are held and served: a peer takes them the same way', () => {
    // the author signed a chain in which entry 3 carries a garbage signature; entry 6 covers it
    const feed = chain(a.signer, 6, { edit: e => (e.seq === 3 ? { ...e, sig: Buffer.alloc(64, 1) } : e) })
    const first = new LogState()
    expect(first.ingestBatchBytes(bytesOf(feed)).accepted).toHaveLength(6)
    const served = first.entriesAfter(new Map()).map(s => s.bytes)
    const second = new LogState()
    expect(second.ingestBatchBytes(served).accepted).toHaveLength(6)
    expect(second.summaries()).toEqual(first.summaries())
    // a batch cut at entry 3 cannot be taken on entry 3's own signature: it stops at 2
    const third = new LogState()
    expect(third.ingestBatchBytes(served.slice(0, 3)).accepted.map(s => s.entry.seq)).toEqual([1, 2])
    // gossip of that entry alone is refused
    expect(new LogState().ingestBytes(served[0]).status).toBe('accepted')
    const single = new LogState()
    single.ingestBatchBytes(served.slice(0, 2))
    expect(single.ingestBytes(served[2])).toMatchObject({ status: 'rejected', reason: 'bad_signature' })
  })

  it('malformed and oversized bytes are refused one by one, the rest of the batch taken', () => {
    const feed = chain(a.signer, 3)
    const log = new LogState({ maxEntryBytes: 4096, maxPendingBytes: 4096 })
    const r = log.ingestBatchBytes([Buffer.from([0xff, 0xff]), Buffer.alloc(5000, 1), ...bytesOf(feed)])
    expect(r.rejected).toEqual({ malformed: 1, too_large: 1 })
    expect(r.accepted).toHaveLength(3)
  })
})
