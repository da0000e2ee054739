// An own entry is staged (signed, chained, invisible) until it is on disk,
// then committed: before that no read of the log shows it, so no peer can
// pull an entry that a crash could still take away.
import { beforeAll, describe, expect, it } from 'vitest'
import { FailedPreconditionError } from '../../../src/core/errors.js'
import { LogState } from '../../../src/core/log/log-state.js'
import { makeIdentities, type TestIdentity } from '../../helpers/identity.js'

let a: TestIdentity
let b: TestIdentity
beforeAll(async () => {
  ;[a, b] = await makeIdentities(2)
})

const note = (text: string) => ({ kind: 'note', text })

describe('LogState: staged own entries', () => {
  it('are chained like appends but visible to no read until committed, in order', () => {
    const log = new LogState()
    const first = log.append(a.signer, 'finding', note('on disk'), 1)
    const s2 = log.stage(a.signer, 'finding', note('staged 2'), 2)
    const s3 = log.stage(a.signer, 'finding', note('staged 3'), 3)
    expect(s2.entry).toMatchObject({ seq: 2, lamport: 2 })
    expect(Buffer.from(s2.entry.prev).toString('hex')).toBe(first.id)
    expect(s3.entry).toMatchObject({ seq: 3, lamport: 3 })
    expect(Buffer.from(s3.entry.prev).toString('hex')).toBe(s2.id)
    expect(log.stagedCount).toBe(2)

    // Nothing a peer or a client reads shows them.
    expect(log.vector()).toEqual(new Map([[a.id, 1]]))
    expect(log.entriesAfter(new Map()).map(e => e.id)).toEqual([first.id])
    expect(log.get(s2.id)).toBeUndefined()
    expect(log.byAuthorSeq(a.id, 2)).toBeUndefined()
    expect(log.ordered().map(e => e.id)).toEqual([first.id])
    expect(log.afterCursor(0).map(e => e.id)).toEqual([first.id])
    expect(log.size).toBe(1)

    // Committing the later one commits the earlier one too, in seq order.
    const visible = log.commitStaged(s3.id)
    expect(visible.map(e => [e.id, e.cursor])).toEqual([
      [s2.id, 2],
      [s3.id, 3]
    ])
    expect(log.commitStaged(s2.id)).toEqual([])
    expect(log.vector()).toEqual(new Map([[a.id, 3]]))
    expect(log.get(s3.id)?.cursor).toBe(3)
    expect(log.stagedCount).toBe(0)
  })

  it('take a lamport above everything seen, including what arrived while they were staged', () => {
    const peer = new LogState()
    const log = new LogState()
    const s1 = log.stage(a.signer, 'finding', note('a1'), 1)
    for (let i = 0; i < 3; i++) log.ingest(peer.append(b.signer, 'finding', note(`b${i}`), i).entry)
    const s2 = log.stage(a.signer, 'finding', note('a2'), 2)
    expect(s1.entry.lamport).toBe(1)
    expect(s2.entry.lamport).toBe(4)
    expect(log.commitStaged(s2.id).map(e => e.entry.seq)).toEqual([1, 2])
  })

  it("are dropped, and the commit refused, when the author's feed already holds their seq (an earlier entry of its own came back)", () => {
    const earlier = new LogState()
    const lost = earlier.append(a.signer, 'finding', note('a peer has this one'), 1)
    const log = new LogState()
    const staged = log.stage(a.signer, 'finding', note('a different seq 1'), 2)
    expect(log.ingest(lost.entry).status).toBe('accepted')
    expect(() => log.commitStaged(staged.id)).toThrow(FailedPreconditionError)
    expect(log.stagedCount).toBe(0)
    expect(log.byAuthorSeq(a.id, 1)?.id).toBe(lost.id)
    expect(log.forks).toEqual([])
    // The next own entry follows the feed as it is.
    expect(log.append(a.signer, 'finding', note('next'), 3).entry.seq).toBe(2)
  })

  it('can be dropped when their write failed', () => {
    const log = new LogState()
    log.stage(a.signer, 'finding', note('never on disk'), 1)
    expect(log.dropStaged()).toHaveLength(1)
    expect(log.append(a.signer, 'finding', note('first for real'), 2).entry.seq).toBe(1)
  })
})
