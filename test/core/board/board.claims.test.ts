import { describe, expect, it } from 'vitest'
import { Board, claimFromPlan } from '../../../src/core/board/board.js'
import { LeaseTable } from '../../../src/core/board/lease-table.js'
import { claimOutcome } from '../../../src/core/board/settle.js'
import { FailedPreconditionError, InvalidArgumentError, NotFoundError } from '../../../src/core/errors.js'
import type { BoardEntry } from '../../../src/core/board/types.js'
import { EntryWriter, snapshot } from './helpers.js'

function boardWith(entries: BoardEntry[], init?: ConstructorParameters<typeof Board>[0]): Board {
  const b = new Board(init)
  for (const e of entries) b.apply(e)
  return b
}

describe('holder rule', () => {
  it('among concurrent claims at one epoch, the smallest (lamport, author) holds, whatever the arrival order', () => {
    const w = new EntryWriter()
    const t = w.task('p0', { id: 'parser' }, 1)
    const late = w.claim('amy', 'parser', 1, {}, 5)
    const tieB = w.claim('bob', 'parser', 1, {}, 3)
    const tieA = w.claim('cat', 'parser', 1, {}, 3)
    for (const order of [
      [t, late, tieB, tieA],
      [tieA, tieB, late, t],
      [tieB, t, tieA, late]
    ]) {
      const b = boardWith(order)
      expect(b.task('parser', 0)).toMatchObject({ state: 'claimed', holder: 'bob', epoch: 1, nextEpoch: 2 })
    }
    // asking between arrivals must not freeze an early answer
    const b = new Board()
    for (const e of [t, late, tieA, tieB]) {
      b.apply(e)
      b.task('parser', 0)
    }
    expect(b.holder('parser')?.holder).toBe('bob')
  })

  it('a claim at a higher epoch beats any claim at a lower one', () => {
    const w = new EntryWriter()
    const b = boardWith([w.task('p0', { id: 'parser' }, 1), w.claim('amy', 'parser', 1, {}, 2), w.claim('zed', 'parser', 2, {}, 9)])
    expect(b.holder('parser')).toMatchObject({ holder: 'zed', epoch: 2 })
  })

  it("a release frees only the releaser's claim at that epoch", () => {
    const w = new EntryWriter()
    const t = w.task('p0', { id: 'parser' }, 1)
    const amy = w.claim('amy', 'parser', 1, {}, 2)
    const bob = w.claim('bob', 'parser', 1, {}, 3)
    const amyRelease = w.release('amy', 'parser', 1, { note: 'tried the LR approach', branch: 'agency/parser-amy' }, 4)
    const b = boardWith([t, amy, bob])
    expect(b.holder('parser')?.holder).toBe('amy')
    b.apply(amyRelease)
    // bob's claim at the same epoch is still unreleased, so it holds now
    expect(b.task('parser', 0)).toMatchObject({ state: 'claimed', holder: 'bob', epoch: 1 })
    b.apply(w.release('bob', 'parser', 1, {}, 5))
    expect(b.task('parser', 0)).toMatchObject({
      state: 'open',
      epoch: 1,
      nextEpoch: 2,
      handoff: { from: 'amy', note: 'tried the LR approach', branch: 'agency/parser-amy' }
    })
    expect(b.task('parser', 0)?.holder).toBeUndefined()
  })

  it('a release that arrives before its claim still releases it', () => {
    const w = new EntryWriter()
    const t = w.task('p0', { id: 'parser' }, 1)
    const amy = w.claim('amy', 'parser', 1, {}, 2)
    const bob = w.claim('bob', 'parser', 1, {}, 3)
    const amyRelease = w.release('amy', 'parser', 1, {}, 4)
    const b = boardWith([amyRelease, bob, t])
    expect(b.holder('parser')?.holder).toBe('bob')
    b.apply(amy)
    expect(b.holder('parser')?.holder).toBe('bob')
  })

  it('a release at an old epoch does not free a newer claim', () => {
    const w = new EntryWriter()
    const b = boardWith([w.task('p0', { id: 'parser' }, 1), w.claim('amy', 'parser', 2, {}, 2), w.release('amy', 'parser', 1, {}, 3)])
    expect(b.holder('parser')).toMatchObject({ holder: 'amy', epoch: 2 })
  })

  it('done counts only from the winner of its epoch, and is terminal', () => {
    const w = new EntryWriter()
    const b = boardWith([w.task('p0', { id: 'parser' }, 1), w.claim('amy', 'parser', 1, {}, 2), w.claim('bob', 'parser', 1, {}, 3)])
    b.apply(w.done('bob', 'parser', 1, { commit: 'bbbb' }, 4))
    expect(b.task('parser', 0)?.state).toBe('claimed')
    b.apply(w.done('amy', 'parser', 1, { commit: 'aaaa' }, 5))
    expect(b.task('parser', 0)).toMatchObject({ state: 'done', doneBy: 'amy', commit: 'aaaa' })
    // a later claim (e.g. a concurrent takeover) does not reopen it
    b.apply(w.claim('cat', 'parser', 2, {}, 6))
    expect(b.task('parser', 0)?.state).toBe('done')
    expect(b.ready(0)).toEqual([])
    expect(b.heldBy('cat')).toEqual([])
  })

  it('nextEpoch is one more than the highest epoch seen in any claim, release or done', () => {
    const w = new EntryWriter()
    const b = boardWith([w.task('p0', { id: 'parser' }, 1)])
    expect(b.nextEpoch('parser')).toBe(1)
    b.apply(w.claim('amy', 'parser', 1))
    expect(b.nextEpoch('parser')).toBe(2)
    b.apply(w.release('amy', 'parser', 3))
    expect(b.nextEpoch('parser')).toBe(4)
  })
})

describe('ready and progress', () => {
  it('lists open and expired tasks whose deps are done, by priority then id', () => {
    const w = new EntryWriter()
    const leases = new LeaseTable({ self: 'me', leaseMs: 1000, startedAt: 0 })
    leases.heartbeat('live', 5000)
    const b = boardWith(
      [
        w.task('p0', { id: 'base', priority: 1 }),
        w.task('p0', { id: 'needs-base', deps: ['base'], priority: 9 }),
        w.task('p0', { id: 'low', priority: 0 }),
        w.task('p0', { id: 'alpha', priority: 5 }),
        w.task('p0', { id: 'zeta', priority: 5 }),
        w.task('p0', { id: 'held', priority: 7 }),
        w.task('p0', { id: 'stale', priority: 2 }),
        w.claim('live', 'held', 1),
        w.claim('gone', 'stale', 1)
      ],
      { liveness: leases }
    )
    const now = 5500
    expect(b.ready(now).map(t => t.id)).toEqual(['alpha', 'zeta', 'stale', 'base', 'low'])
    expect(b.task('stale', now)).toMatchObject({ state: 'expired', holder: 'gone', holderLive: false })
    b.apply(w.claim('live', 'base', 1))
    b.apply(w.done('live', 'base', 1))
    expect(b.ready(now).map(t => t.id)).toEqual(['needs-base', 'alpha', 'zeta', 'stale', 'low'])
    expect(b.progress(now)).toEqual([
      { agent: 'gone', live: false, held: [{ task: 'stale', holder: 'gone', epoch: 1, scope: [] }] },
      { agent: 'live', live: true, held: [{ task: 'held', holder: 'live', epoch: 1, scope: [] }] }
    ])
  })
})

describe('lease expiry and takeover', () => {
  it('an expired task is taken over at epoch + 1 with the hand-off; the old holder sees it lost the task', () => {
    const w = new EntryWriter()
    // zoe held the task at epoch 1 and released it with notes; amy took it at epoch 2 and then died.
    const history = [
      w.task('p0', { id: 'parser', scope: ['src/parser/**'] }),
      w.claim('zoe', 'parser', 1),
      w.release('zoe', 'parser', 1, { note: 'the tokenizer is done; grammar left', branch: 'agency/parser@1' })
    ]
    const amyBoard = boardWith(history, { liveness: new LeaseTable({ self: 'amy', leaseMs: 10_000, startedAt: 0 }) })
    const amyPlan = amyBoard.checkClaimable('parser', 'amy', 100)
    expect(amyPlan).toMatchObject({
      epoch: 2,
      alreadyHeld: false,
      scope: ['src/parser/**'],
      takeover: { previousHolder: 'zoe', expired: false, note: 'the tokenizer is done; grammar left', branch: 'agency/parser@1' }
    })
    const amyClaim = w.entry('amy', 'claim', claimFromPlan(amyPlan))

    const bobLeases = new LeaseTable({ self: 'bob', leaseMs: 10_000, startedAt: 0 })
    const bobBoard = boardWith([...history, amyClaim], { liveness: bobLeases })
    bobLeases.heartbeat('amy', 1_000)
    expect(bobBoard.task('parser', 11_000)?.state).toBe('claimed')
    expect(() => bobBoard.checkClaimable('parser', 'bob', 11_000)).toThrow(FailedPreconditionError)

    // no heartbeat from amy for a lease period, on bob's clock
    expect(bobBoard.task('parser', 11_001)).toMatchObject({ state: 'expired', holder: 'amy', holderLive: false })
    expect(bobBoard.ready(11_001).map(t => t.id)).toEqual(['parser'])
    const bobPlan = bobBoard.checkClaimable('parser', 'bob', 11_001)
    expect(bobPlan).toMatchObject({
      epoch: 3,
      takeover: {
        previousHolder: 'amy',
        previousEpoch: 2,
        expired: true,
        note: 'the tokenizer is done; grammar left',
        branch: 'agency/parser@1',
        handoffFrom: 'zoe'
      }
    })
    const bobClaim = w.entry('bob', 'claim', claimFromPlan(bobPlan))
    expect(bobClaim.body).toMatchObject({ takeoverOf: 'amy', epoch: 3, handoff: 'the tokenizer is done; grammar left' })
    bobBoard.apply(bobClaim)
    expect(claimOutcome(bobBoard, 'parser', 'bob', 3)).toEqual({ outcome: 'HELD', task: 'parser', epoch: 3 })

    // amy comes back and syncs: its claim at epoch 2 is superseded
    amyBoard.apply(amyClaim)
    expect(claimOutcome(amyBoard, 'parser', 'amy', 2).outcome).toBe('HELD')
    amyBoard.apply(bobClaim)
    expect(claimOutcome(amyBoard, 'parser', 'amy', 2)).toEqual({
      outcome: 'LOST',
      task: 'parser',
      epoch: 2,
      winner: 'bob',
      reason: 'superseded'
    })
    expect(amyBoard.heldBy('amy')).toEqual([])
    expect(() => amyBoard.checkReleasable('parser', 'amy')).toThrow(FailedPreconditionError)
    expect(() => amyBoard.checkDoable('parser', 'amy')).toThrow(FailedPreconditionError)
  })

  it('a holder that crashed without notes is still named as the previous holder', () => {
    const w = new EntryWriter()
    const leases = new LeaseTable({ self: 'bob', leaseMs: 1000, startedAt: 0 })
    const b = boardWith([w.task('p0', { id: 'parser' }), w.claim('amy', 'parser', 1)], { liveness: leases })
    expect(b.checkClaimable('parser', 'bob', 1000)).toEqual({
      task: 'parser',
      epoch: 2,
      alreadyHeld: false,
      scope: [],
      takeover: { previousHolder: 'amy', previousEpoch: 1, expired: true, note: '', branch: '' }
    })
  })
})

describe('checks before writing: bad input gets a named error and changes nothing', () => {
  const w = new EntryWriter()
  const entries = [
    w.task('p0', { id: 'parser' }),
    w.task('p0', { id: 'lexer' }),
    w.claim('amy', 'parser', 1),
    w.claim('bob', 'lexer', 1),
    w.done('bob', 'lexer', 1)
  ]

  it('claiming an unknown task is NOT_FOUND', () => {
    const b = boardWith(entries)
    const before = snapshot(b, 0)
    expect(() => b.checkClaimable('no-such-task', 'bob', 0)).toThrow(NotFoundError)
    expect(() => b.checkClaimable('Not A Slug', 'bob', 0)).toThrow(InvalidArgumentError)
    expect(snapshot(b, 0)).toEqual(before)
  })

  it('releasing a task you do not hold is FAILED_PRECONDITION', () => {
    const b = boardWith(entries)
    const before = snapshot(b, 0)
    expect(() => b.checkReleasable('parser', 'bob')).toThrow(FailedPreconditionError)
    expect(() => b.checkReleasable('lexer', 'bob')).toThrow(FailedPreconditionError) // done
    expect(() => b.checkReleasable('nope', 'bob')).toThrow(NotFoundError)
    expect(b.checkReleasable('parser', 'amy')).toEqual({ task: 'parser', epoch: 1 })
    expect(snapshot(b, 0)).toEqual(before)
  })

  it('a malformed glob in the scope is INVALID_ARGUMENT', () => {
    const b = boardWith(entries)
    const before = snapshot(b, 0)
    for (const glob of ['src/[a', '/etc/passwd', '../up', '', 'src/{a,b']) {
      const err = (() => {
        try {
          b.checkClaimable('parser', 'cat', 0, [glob])
        } catch (e) {
          return e
        }
      })()
      expect(err).toBeInstanceOf(InvalidArgumentError)
      expect((err as InvalidArgumentError).code).toBe('INVALID_ARGUMENT')
    }
    expect(snapshot(b, 0)).toEqual(before)
  })

  it('claiming a done task or one held live by a peer is FAILED_PRECONDITION; your own is already held', () => {
    const b = boardWith(entries)
    expect(() => b.checkClaimable('lexer', 'cat', 0)).toThrow(FailedPreconditionError)
    expect(() => b.checkClaimable('parser', 'cat', 0)).toThrow(/held by amy at epoch 1/)
    expect(b.checkClaimable('parser', 'amy', 0)).toMatchObject({ alreadyHeld: true, epoch: 1 })
  })
})
