// Hand-off by speed, the core rule (core/board/handoff-choice.ts) and what the
// board folds of it: when a holder is slow, to whom its task goes, and how a
// release naming a receiver reserves the task for it in claim --next.
import { describe, expect, it } from 'vitest'
import { Board } from '../../../src/core/board/board.js'
import { RecentPeerClaims, readyChoice } from '../../../src/core/board/claim-choice.js'
import {
  RECORD_MIN_DONE,
  chooseHandoff,
  handoffDue,
  handoffLimitMs,
  slowByRecord,
  usualTaskMs,
  type HandoffInput
} from '../../../src/core/board/handoff-choice.js'
import { EntryWriter } from './helpers.js'

const MIN = 60_000
const POLICY = { factor: 2, floorMs: 15 * MIN }

function input(o: Partial<HandoffInput> = {}): HandoffInput {
  return {
    task: 'core',
    holder: 'amy',
    heldMs: 90 * MIN,
    usualMs: 30 * MIN,
    merging: false,
    peers: [{ agent: 'bob', assisting: false }],
    policy: POLICY,
    ...o
  }
}

describe('when a holder hands its task off', () => {
  it('takes the median of the done tasks as the usual time', () => {
    expect(usualTaskMs([])).toBeUndefined()
    expect(usualTaskMs([30, 10, 20])).toBe(20)
    expect(usualTaskMs([40, 10, 20, 30])).toBe(25)
  })

  it('past factor x the usual time and the floor, with nothing on its way to the branch', () => {
    expect(handoffDue(61 * MIN, 30 * MIN, false, POLICY)).toBe(true)
    expect(handoffDue(60 * MIN, 30 * MIN, false, POLICY)).toBe(false)
    // the floor, for tasks that usually take minutes
    expect(handoffDue(14 * MIN, 1 * MIN, false, POLICY)).toBe(false)
    expect(handoffDue(16 * MIN, 1 * MIN, false, POLICY)).toBe(true)
    expect(handoffDue(61 * MIN, 30 * MIN, true, POLICY)).toBe(false)
    expect(handoffDue(10 * 60 * MIN, undefined, false, POLICY)).toBe(false)
    expect(handoffDue(10 * 60 * MIN, 30 * MIN, false, { ...POLICY, factor: 0 })).toBe(false)
  })

  it('earlier for a holder slow by its own record: past the usual time, once it finished 2 tasks', () => {
    const slow = [70 * MIN, 65 * MIN]
    expect(slowByRecord(slow, 30 * MIN, POLICY)).toBe(true)
    expect(handoffLimitMs(30 * MIN, POLICY, slow)).toBe(30 * MIN)
    expect(handoffDue(31 * MIN, 30 * MIN, false, POLICY, slow)).toBe(true)
    expect(handoffDue(29 * MIN, 30 * MIN, false, POLICY, slow)).toBe(false)
    // one task stalled makes no slow agent; a median not above factor x the usual time neither
    expect(handoffDue(31 * MIN, 30 * MIN, false, POLICY, [90 * MIN])).toBe(false)
    expect(handoffDue(31 * MIN, 30 * MIN, false, POLICY, [60 * MIN, 60 * MIN])).toBe(false)
    // the floor still holds, and nothing on its way is handed off
    expect(handoffDue(14 * MIN, 5 * MIN, false, POLICY, [20 * MIN, 30 * MIN])).toBe(false)
    expect(handoffDue(31 * MIN, 30 * MIN, true, POLICY, slow)).toBe(false)
    expect(chooseHandoff(input({ heldMs: 29 * MIN, holderDone: slow }))).toMatchObject({
      refusal: expect.stringContaining("past 30 min (1 x the median claim-to-done time 30 min; amy's own median 68 min over 2 done tasks")
    })
    const d = chooseHandoff(input({ heldMs: 31 * MIN, holderDone: slow }))
    expect(d).toMatchObject({
      receiver: { agent: 'bob' },
      limitMs: 30 * MIN,
      text: expect.stringContaining(
        "amy held core for 31 min, more than the median claim-to-done time of the done tasks (30 min; amy's own median 68 min"
      )
    })
    expect(RECORD_MIN_DONE).toBe(2)
  })

  it('refuses with the reason when the rule does not apply', () => {
    expect(chooseHandoff(input({ policy: { ...POLICY, factor: 0 } }))).toMatchObject({ refusal: expect.stringContaining('off') })
    expect(chooseHandoff(input({ usualMs: undefined }))).toMatchObject({ refusal: expect.stringContaining('no task is done yet') })
    expect(chooseHandoff(input({ heldMs: 50 * MIN }))).toMatchObject({ refusal: expect.stringContaining('handed off past 60 min') })
    expect(chooseHandoff(input({ merging: true }))).toMatchObject({ refusal: expect.stringContaining('on its way') })
    expect(chooseHandoff(input({ peers: [] }))).toMatchObject({ refusal: expect.stringContaining('no live peer') })
    // a slow peer, and the holder itself, are no receivers
    expect(
      chooseHandoff(
        input({
          peers: [
            { agent: 'bob', assisting: true, usualMs: 61 * MIN },
            { agent: 'amy', assisting: false }
          ]
        })
      )
    ).toMatchObject({ refusal: expect.stringContaining('no live peer') })
    expect(chooseHandoff(input({ peers: [{ agent: 'bob', assisting: false, slow: true }] }))).toMatchObject({
      refusal: expect.stringContaining('no live peer')
    })
  })

  it('hands to an assistant first, then to the fastest idle peer; a peer with nothing done counts as usual', () => {
    const peers = [
      { agent: 'cat', assisting: false, usualMs: 5 * MIN },
      { agent: 'bob', assisting: true, usualMs: 50 * MIN },
      { agent: 'dan', assisting: false }
    ]
    expect(chooseHandoff(input({ peers })).receiver?.agent).toBe('bob')
    expect(chooseHandoff(input({ peers: peers.filter(p => p.agent !== 'bob') })).receiver?.agent).toBe('cat')
    const d = chooseHandoff(
      input({
        peers: [
          { agent: 'dan', assisting: false },
          { agent: 'eve', assisting: false, usualMs: 40 * MIN }
        ]
      })
    )
    expect(d.receiver?.agent).toBe('dan')
    expect(d).toMatchObject({ limitMs: 60 * MIN, text: expect.stringContaining('amy held core for 90 min') })
  })
})

describe('a release that hands a task to a receiver', () => {
  function board(live: Set<string>): { b: Board; w: EntryWriter } {
    const w = new EntryWriter()
    const b = new Board({ liveness: { isLive: p => live.has(p) } })
    b.apply(w.task('amy', { id: 'core' }))
    b.apply(w.task('amy', { id: 'other' }))
    b.apply(w.claim('amy', 'core', 1))
    b.apply(w.release('amy', 'core', 1, { note: 'slow', branch: 'refs/agency/wip/core', to: 'bob' }))
    return { b, w }
  }

  it('reserves the task for its receiver while it is live, holds nothing, and nobody claimed since', () => {
    const live = new Set(['amy', 'bob', 'cat'])
    const { b, w } = board(live)
    expect(b.task('core', 0)?.handoff).toMatchObject({ from: 'amy', epoch: 1, to: 'bob', branch: 'refs/agency/wip/core' })
    expect(b.handedTo('core', 0)).toBe('bob')
    live.delete('bob')
    expect(b.handedTo('core', 0)).toBeUndefined()
    live.add('bob')
    b.apply(w.claim('bob', 'other', 1))
    expect(b.handedTo('core', 0)).toBeUndefined()
    b.apply(w.release('bob', 'other', 1))
    expect(b.handedTo('core', 0)).toBe('bob')
    b.apply(w.claim('cat', 'core', 2, { takeoverOf: 'amy' }))
    expect(b.handedTo('core', 0)).toBeUndefined()
  })

  it('leaves it out of claim --next for others for the keep time after the release came, not for the receiver', () => {
    const { b } = board(new Set(['amy', 'bob', 'cat']))
    const recent = new RecentPeerClaims(30_000)
    const ready = (me: string, now: number): string[] => readyChoice(b, me, now, recent, 500).ready.map(t => t.id)
    // not seen as a hand-off here yet (a daemon that folded the release at start, long ago): anyone may claim
    expect(ready('cat', 0)).toEqual(['core', 'other'])
    recent.recordHandoff('core', 'bob', 1000)
    expect(ready('cat', 2000)).toEqual(['other'])
    expect(ready('bob', 2000)).toEqual(['core', 'other'])
    expect(ready('cat', 1000 + 30_001)).toEqual(['core', 'other'])
  })
})
