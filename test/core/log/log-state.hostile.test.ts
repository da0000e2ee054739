import { describe, expect, it, beforeAll } from 'vitest'
import { LogState } from '../../../src/core/log/log-state.js'
import { encodeEntry, entryIdHex, signEntry } from '../../../src/core/log/entry.js'
import { verifyForkProof } from '../../../src/core/log/fork.js'
import type { Entry } from '../../../src/gen/agency/v1/log.js'
import { makeIdentities, impostor, type TestIdentity } from '../../helpers/identity.js'
import { chain, findingBody } from './chains.js'

let a: TestIdentity
let b: TestIdentity
beforeAll(async () => {
  ;[a, b] = await makeIdentities(2)
})

function unchanged(log: LogState): unknown {
  return { size: log.size, vector: log.vector(), pending: log.pendingCount, faulty: [...log.faultyAuthors] }
}

function flipByte(buf: Buffer, at = 0): Buffer {
  const copy = Buffer.from(buf)
  copy[at] ^= 0x01
  return copy
}

describe('hostile entries are rejected, counted, and change nothing', () => {
  it("an entry naming author A but signed with B's key", () => {
    const log = new LogState()
    const before = unchanged(log)
    const [forged] = chain(impostor(a, b), 1)
    expect(log.ingest(forged)).toMatchObject({ status: 'rejected', reason: 'bad_signature' })
    expect(log.ingestBatch(chain(impostor(a, b), 5)).accepted).toEqual([])
    expect(unchanged(log)).toEqual(before)
    expect(log.rejected.bad_signature).toBe(6)
  })

  it('a tampered body', () => {
    const [e] = chain(a.signer, 1)
    const log = new LogState()
    expect(log.ingest({ ...e, body: flipByte(e.body, 3) })).toMatchObject({ status: 'rejected', reason: 'bad_signature' })
    expect(log.ingestBytes(encodeEntry({ ...e, body: flipByte(e.body, 3) }))).toMatchObject({ reason: 'bad_signature' })
    expect(log.size).toBe(0)
  })

  it('a replayed entry with a changed field', () => {
    const [e1, e2] = chain(a.signer, 2)
    const log = new LogState()
    log.ingest(e1)
    log.ingest(e2)
    const before = unchanged(log)
    for (const replay of [
      { ...e2, lamport: 99 },
      { ...e2, time: 1 },
      { ...e2, seq: 3 },
      { ...e1, kind: 'goal' }
    ]) {
      expect(log.ingest(replay)).toMatchObject({ status: 'rejected', reason: 'bad_signature' })
    }
    expect(log.ingest(e2).status).toBe('duplicate')
    expect(unchanged(log)).toEqual(before)
  })

  it('an oversized entry, even when validly signed', () => {
    const big = signEntry(a.signer, {
      seq: 1,
      prev: new Uint8Array(0),
      lamport: 1,
      time: 1,
      kind: 'finding',
      body: findingBody('z'.repeat(70_000))
    })
    const log = new LogState()
    expect(log.ingest(big)).toEqual({ status: 'rejected', id: null, reason: 'too_large' })
    expect(log.ingestBytes(encodeEntry(big))).toMatchObject({ reason: 'too_large' })
    expect(log.ingestBatch([big]).rejected).toEqual({ too_large: 1 })
    expect(log.rejected.too_large).toBe(3)
    expect(log.size).toBe(0)
  })

  it('an unknown kind and a body that does not decode, even when validly signed', () => {
    const log = new LogState()
    const weird = signEntry(a.signer, { seq: 1, prev: new Uint8Array(0), lamport: 1, time: 1, kind: 'weird', body: new Uint8Array(0) })
    const garbage = signEntry(a.signer, {
      seq: 1,
      prev: new Uint8Array(0),
      lamport: 1,
      time: 1,
      kind: 'finding',
      body: Uint8Array.from([0xff, 0xff])
    })
    expect(log.ingest(weird)).toMatchObject({ status: 'rejected', reason: 'unknown_kind' })
    expect(log.ingest(garbage)).toMatchObject({ status: 'rejected', reason: 'bad_body' })
    expect(log.size).toBe(0)
  })

  it('malformed feeds: seq 0, lamport below seq, a prev on the first entry', () => {
    const log = new LogState()
    const mk = (seq: number, lamport: number, prev: Uint8Array) =>
      signEntry(a.signer, { seq, prev, lamport, time: 1, kind: 'finding', body: findingBody('m') })
    expect(log.ingest(mk(0, 1, new Uint8Array(0)))).toMatchObject({ reason: 'malformed' })
    expect(log.ingest(mk(3, 2, new Uint8Array(32)))).toMatchObject({ reason: 'malformed' })
    expect(log.ingest(mk(1, 1, new Uint8Array(32)))).toMatchObject({ reason: 'malformed' })
    expect(log.ingest(mk(2, 2, new Uint8Array(5)))).toMatchObject({ reason: 'malformed' })
    expect(log.rejected.malformed).toBe(4)
  })

  it("an entry whose prev is not the id of the author's entry before it", () => {
    const [e1] = chain(a.signer, 1)
    const wrongPrev = signEntry(a.signer, {
      seq: 2,
      prev: Buffer.alloc(32, 7),
      lamport: 2,
      time: 2,
      kind: 'finding',
      body: findingBody('x')
    })
    const log = new LogState()
    // waits while seq 1 is missing, then is refused once its predecessor is known
    expect(log.ingest(wrongPrev).status).toBe('pending')
    const r = log.ingest(e1)
    expect(r).toMatchObject({ status: 'accepted' })
    expect(log.vector().get(a.id)).toBe(1)
    expect(log.pendingCount).toBe(0)
    expect(log.rejected.bad_prev).toBe(1)
    // and at once when its predecessor is held
    const other = new LogState()
    other.ingest(e1)
    expect(other.ingest(wrongPrev)).toMatchObject({ status: 'rejected', reason: 'bad_prev' })
  })

  it("an entry whose lamport does not grow past its predecessor's", () => {
    const [e1] = chain(a.signer, 1, { edit: e => signEntry(a.signer, { ...e, lamport: 5 }) })
    const e2 = signEntry(a.signer, {
      seq: 2,
      prev: Buffer.from(entryIdHex(e1), 'hex'),
      lamport: 5,
      time: 2,
      kind: 'finding',
      body: findingBody('x')
    })
    const log = new LogState()
    log.ingest(e1)
    expect(log.ingest(e2)).toMatchObject({ status: 'rejected', reason: 'bad_prev' })
  })
})

describe('forks', () => {
  function forkPair(): [Entry[], Entry] {
    const feed = chain(a.signer, 3)
    const other = signEntry(a.signer, {
      seq: 2,
      prev: feed[1].prev,
      lamport: 2,
      time: 2,
      kind: 'finding',
      body: findingBody('the other branch')
    })
    return [feed, other]
  }

  it('a second, different entry at a held (author, seq) is kept as proof and marks the author faulty', () => {
    const [feed, other] = forkPair()
    const log = new LogState()
    for (const e of feed) log.ingest(e)
    const r = log.ingest(other)
    expect(r).toMatchObject({ status: 'rejected', reason: 'fork' })
    if (r.status !== 'rejected' || r.proof == null) throw new Error('no proof')
    expect(r.proof).toMatchObject({ author: a.id, seq: 2 })
    expect(entryIdHex(r.proof.a)).toBe(entryIdHex(feed[1]))
    expect(entryIdHex(r.proof.b)).toBe(entryIdHex(other))
    expect(verifyForkProof(r.proof)).toBe(true)
    expect(log.forks).toEqual([r.proof])
    expect(log.isFaulty(a.id)).toBe(true)
    expect(log.faultyAuthors).toEqual(new Set([a.id]))
    expect(log.rejected.fork).toBe(1)
    // the held feed is kept, and a faulty author's chain may still grow
    expect(log.vector().get(a.id)).toBe(3)
    expect(log.ingest(chain(a.signer, 4)[3]).status).toBe('accepted')
  })

  it('is detected between two waiting entries, and through the batch path', () => {
    const [feed, other] = forkPair()
    const waiting = new LogState()
    expect(waiting.ingest(feed[1]).status).toBe('pending')
    expect(waiting.ingest(other)).toMatchObject({ status: 'rejected', reason: 'fork' })
    expect(waiting.isFaulty(a.id)).toBe(true)

    const batched = new LogState()
    batched.ingest(other) // pending at seq 2
    const r = batched.ingestBatch(feed)
    expect(r.accepted.map(s => s.entry.seq)).toEqual([1, 2, 3])
    expect(r.rejected).toEqual({ fork: 1 })
    expect(r.forks).toHaveLength(1)
    expect(r.pendingRemoved.map(p => p.id)).toEqual([entryIdHex(other)])
    expect(batched.isFaulty(a.id)).toBe(true)
  })

  it('travels as a proof that a peer verifies, and is restored from disk', () => {
    const [feed, other] = forkPair()
    const log = new LogState()
    for (const e of feed) log.ingest(e)
    log.ingest(other)
    const [proof] = log.forks
    const peer = new LogState()
    expect(peer.ingestForkProof(proof)).toBe(true)
    expect(peer.isFaulty(a.id)).toBe(true)
    expect(peer.ingestForkProof(proof)).toBe(false)
    expect(new LogState().ingestForkProof({ ...proof, b: proof.a })).toBe(false)
    expect(new LogState().ingestForkProof({ ...proof, b: { ...proof.b, lamport: 9 } })).toBe(false)
    const restarted = new LogState()
    restarted.restore({ entries: feed.map(entry => ({ entry })), forks: log.forks })
    expect(restarted.forks).toEqual(log.forks)
    expect(restarted.isFaulty(a.id)).toBe(true)
  })
})

describe('the batch path authenticates by hash chain and accepts nothing unauthenticated', () => {
  it('accepts a whole run on the signature of its last entry', () => {
    // the author signed a chain in which entry 3 carries a garbage signature:
    // entry 10's signature covers it through the prev links
    const feed = chain(a.signer, 10, { edit: e => (e.seq === 3 ? { ...e, sig: Buffer.alloc(64, 1) } : e) })
    const batched = new LogState()
    expect(batched.ingestBatch(feed).accepted).toHaveLength(10)
    const single = new LogState()
    expect(feed.map(e => single.ingest(e).status).slice(0, 4)).toEqual(['accepted', 'accepted', 'rejected', 'pending'])
  })

  it('a bad signature in the middle of a batch: the entries before it only', () => {
    const feed = chain(a.signer, 10)
    feed[4] = { ...feed[4], sig: flipByte(feed[4].sig) }
    const log = new LogState()
    const r = log.ingestBatch(feed)
    expect(r.accepted.map(s => s.entry.seq)).toEqual([1, 2, 3, 4])
    expect(r.rejected).toEqual({ bad_signature: 1 })
    expect(r.pendingAdded.map(p => p.entry.seq)).toEqual([6, 7, 8, 9, 10])
    expect(log.vector().get(a.id)).toBe(4)
  })

  it('a tampered body in the middle of a batch, or a bad last signature', () => {
    const feed = chain(a.signer, 6)
    const tampered = [...feed]
    tampered[2] = { ...feed[2], body: flipByte(feed[2].body, 2) }
    const log = new LogState()
    expect(log.ingestBatch(tampered).accepted.map(s => s.entry.seq)).toEqual([1, 2])

    const lastBad = [...feed]
    lastBad[5] = { ...feed[5], sig: flipByte(feed[5].sig) }
    const other = new LogState()
    const r = other.ingestBatch(lastBad)
    expect(r.accepted.map(s => s.entry.seq)).toEqual([1, 2, 3, 4, 5])
    expect(r.rejected).toEqual({ bad_signature: 1 })
  })

  it('a forged entry that chains onto a valid feed', () => {
    const feed = chain(a.signer, 4)
    const [forged] = chain(impostor(a, b), 1, { start: 5, prev: Buffer.from(entryIdHex(feed[3]), 'hex') })
    const log = new LogState()
    const r = log.ingestBatch([forged, ...feed])
    expect(r.accepted.map(s => s.entry.seq)).toEqual([1, 2, 3, 4])
    expect(r.rejected).toEqual({ bad_signature: 1 })
    expect(log.byAuthorSeq(a.id, 5)).toBeUndefined()
  })

  it('authors in one batch are authenticated separately', () => {
    const good = chain(b.signer, 3)
    const forged = chain(impostor(a, b), 3)
    const log = new LogState()
    const r = log.ingestBatch([...forged, ...good])
    expect(r.accepted.map(s => s.entry.author)).toEqual([b.id, b.id, b.id])
    expect(r.rejected).toEqual({ bad_signature: 3 })
  })
})
