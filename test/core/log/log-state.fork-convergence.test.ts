// A forked author: replicas holding different branches of its feed see that
// they differ (head ids are compared, not only seqs), find its fork point
// exactly, pass the proof on to replicas that hold one branch only, and then
// show the same board: the author's entries from the fork point on count for
// nothing anywhere.
import { beforeAll, describe, expect, it } from 'vitest'
import { Board } from '../../../src/core/board/board.js'
import { signEntry, entryId } from '../../../src/core/log/entry.js'
import { summariesFromWire, summaryDigest, summaryToWire } from '../../../src/core/log/feed-summary.js'
import { verifyForkProof } from '../../../src/core/log/fork.js'
import { decodeBody, encodeBody, type EntryKind } from '../../../src/core/log/kinds.js'
import { LogState } from '../../../src/core/log/log-state.js'
import type { Entry } from '../../../src/gen/agency/v1/log.js'
import { snapshot } from '../board/helpers.js'
import { makeIdentities, type TestIdentity } from '../../helpers/identity.js'

let x: TestIdentity // forks
let y: TestIdentity // honest
beforeAll(async () => {
  ;[x, y] = await makeIdentities(2)
})

/** Entries of `who` from seq `from`, chained on `prev`, one per body. */
function feed(who: TestIdentity, from: number, prev: Uint8Array, bodies: Array<[EntryKind, object]>, lamportBase = 0): Entry[] {
  const out: Entry[] = []
  bodies.forEach(([kind, body], i) => {
    const seq = from + i
    const e = signEntry(who.signer, {
      seq,
      prev,
      lamport: lamportBase + seq,
      time: 1000 * seq,
      kind,
      body: encodeBody(kind, body as never)
    })
    out.push(e)
    prev = entryId(e)
  })
  return out
}

/** One anti-entropy exchange, as the sync protocol runs it: the responder sends first, then the initiator. */
function exchange(initiator: LogState, responder: LogState): void {
  const wire = (s: LogState): ReturnType<typeof summariesFromWire> => summariesFromWire(s.summaries().map(summaryToWire))
  const mine = wire(initiator)
  if (Buffer.compare(Buffer.from(summaryDigest(initiator.summaries())), Buffer.from(summaryDigest(responder.summaries()))) === 0) return
  const give = (from: LogState, to: LogState, theirs: ReturnType<typeof wire>): void => {
    const entries = from.entriesFor(theirs).map(e => e.entry)
    const proofs = from.proofsFor(theirs)
    to.ingestBatch(entries)
    for (const p of proofs) if (verifyForkProof(p)) to.ingestForkProof(p)
  }
  give(responder, initiator, mine)
  give(initiator, responder, wire(responder))
}

function boardOf(log: LogState): Board {
  const b = new Board()
  for (const e of log.ordered())
    b.apply({
      id: e.id,
      author: e.entry.author,
      seq: e.entry.seq,
      lamport: e.entry.lamport,
      time: e.entry.time,
      kind: e.entry.kind,
      body: decodeBody(e.entry.kind as 'claim', e.entry.body)
    })
  for (const { author } of log.summaries().filter(s => s.faulty)) {
    const fp = log.forkPoint(author)
    if (fp !== undefined) b.markFaulty(author, fp.seq)
  }
  return b
}

describe('a forked author', () => {
  // x adds three tasks and claims t1 (seq 1-4), then its feed forks at seq 5:
  // on one branch it claims t2, on the other t3, and each branch goes on.
  let common: Entry[]
  let branchA: Entry[]
  let branchB: Entry[]
  let honest: Entry[]
  beforeAll(() => {
    common = feed(x, 1, new Uint8Array(0), [
      ['task', { id: 't1', title: 't1' }],
      ['task', { id: 't2', title: 't2' }],
      ['task', { id: 't3', title: 't3' }],
      ['claim', { task: 't1', epoch: 1, scope: ['src/t1/**'] }]
    ])
    const tip = entryId(common[3])
    branchA = feed(x, 5, tip, [
      ['claim', { task: 't2', epoch: 1 }],
      ['finding', { kind: 'note', text: 'a6' }],
      ['finding', { kind: 'note', text: 'a7' }],
      ['done', { task: 't1', epoch: 1, commit: 'a'.repeat(40) }]
    ])
    branchB = feed(x, 5, tip, [
      ['claim', { task: 't3', epoch: 1 }],
      ['finding', { kind: 'note', text: 'b6' }],
      ['finding', { kind: 'note', text: 'b7' }],
      ['release', { task: 't1', epoch: 1, note: '', branch: '' }]
    ])
    honest = feed(y, 1, new Uint8Array(0), [['claim', { task: 't3', epoch: 1 }]], 10)
  })

  function replica(...entries: Entry[][]): LogState {
    const log = new LogState()
    log.ingestBatch(entries.flat())
    return log
  }

  it('is seen where the two branches meet, its fork point found exactly, and passed on', () => {
    const a = replica(common, branchA, honest)
    const b = replica(common, branchB, honest)
    const c = replica(common, branchA) // only ever talks to a
    // Same seqs, different heads: the digests differ.
    expect(a.vector()).toEqual(b.vector())
    expect(summaryDigest(a.summaries())).not.toEqual(summaryDigest(b.summaries()))

    for (let round = 0; round < 3; round++) {
      exchange(a, b)
      exchange(c, a)
    }
    for (const log of [a, b, c]) {
      expect(log.isFaulty(x.id)).toBe(true)
      expect(log.forkPoint(x.id)).toEqual({ seq: 5, exact: true })
    }
    // Both branches stay where they were: neither replica takes the other's.
    expect(a.byAuthorSeq(x.id, 5)?.id).toBe(Buffer.from(entryId(branchA[0])).toString('hex'))
    expect(b.byAuthorSeq(x.id, 5)?.id).toBe(Buffer.from(entryId(branchB[0])).toString('hex'))
    // Once every replica knows the fork point, an exchange has nothing to move: the digests agree.
    expect(summaryDigest(a.summaries())).toEqual(summaryDigest(b.summaries()))

    // Every replica shows the same board: x holds t1 (claimed before the fork), its later
    // claims, done and release count for nothing, so t2 is open and t3 is y's.
    const boards = [a, b, c].map(boardOf)
    const views = boards.map(bd => snapshot(bd, 0))
    expect(views[1]).toEqual(views[0])
    expect(boards[0].holder('t1')?.holder).toBe(x.id)
    expect(boards[0].task('t1', 0)?.state).toBe('claimed')
    expect(boards[0].task('t2', 0)?.state).toBe('open')
    expect(boards[0].holder('t3')?.holder).toBe(y.id)
    // c holds no entry of y's, so its board differs only there; x's part is the same.
    expect(boards[2].task('t2', 0)?.state).toBe('open')
    expect(boards[2].holder('t1')?.holder).toBe(x.id)
  })

  it('is found when one branch is much longer, and when the fork is at seq 1', () => {
    const long = feed(
      x,
      5,
      entryId(common[3]),
      Array.from({ length: 300 }, (_, i) => ['finding', { kind: 'note', text: `long ${i}` }] as [EntryKind, object])
    )
    const a = replica(common, long)
    const b = replica(common, branchB)
    for (let round = 0; round < 4; round++) exchange(b, a)
    expect(a.forkPoint(x.id)).toEqual({ seq: 5, exact: true })
    expect(b.forkPoint(x.id)).toEqual({ seq: 5, exact: true })

    const other = feed(x, 1, new Uint8Array(0), [['finding', { kind: 'note', text: 'another first entry' }]])
    const p = replica(common)
    const q = replica(other)
    for (let round = 0; round < 2; round++) exchange(p, q)
    expect(p.forkPoint(x.id)).toEqual({ seq: 1, exact: true })
    expect(q.forkPoint(x.id)).toEqual({ seq: 1, exact: true })
  })

  it('costs a peer that lies about heads only a bounded number of probes per exchange', async () => {
    const log = new LogState()
    for (const id of await makeIdentities(8)) {
      log.ingestBatch(
        feed(
          id,
          1,
          new Uint8Array(0),
          Array.from({ length: 64 }, (_, i) => ['finding', { kind: 'note', text: `n${i}` }] as [EntryKind, object])
        )
      )
    }
    // Every head wrong: each author looks like another branch.
    const lies = summariesFromWire(log.summaries().map(s => summaryToWire({ ...s, head: 'ff'.repeat(32) })))
    const sent = log.entriesFor(lies)
    expect(new Set(sent.map(e => e.entry.author)).size).toBe(4)
    expect(sent.length).toBeLessThanOrEqual(4 * 8)
  })
})
