// The fault checks over a history given as plain data, as the real-process
// campaign records it: pauses and degraded links separate like crashes, a
// node in two groups bridges them, and a send cut off (info) may be
// delivered once but not twice.
import { describe, expect, it } from 'vitest'
import { checkRun } from '../../../src/sim/faults/checks.js'
import type { HistoryEvent, NemesisEvent } from '../../../src/sim/faults/history.js'
import type { RunRecord } from '../../../src/sim/faults/run-record.js'

function record(events: HistoryEvent[]): RunRecord {
  const replicas = ['a', 'b', 'c'].map(node => ({ node, up: true, entryIds: ['ca', 'cb'], board: ['t1 claimed a@1'] }))
  return { history: { events }, branch: { landed: [] }, replicas, winners: new Map([['t1@1', 'a']]) }
}

/** a and b both told HELD for t1@1; b is told it lost after the heal. */
function twoHeld(faults: NemesisEvent[]): HistoryEvent[] {
  return [
    ...faults,
    { kind: 'invoke', op: 1, time: 1000, node: 'a', f: 'claim', task: 't1' },
    { kind: 'append', time: 1000, node: 'a', id: 'ca', entryKind: 'claim', task: 't1', epoch: 1 },
    { kind: 'invoke', op: 2, time: 1100, node: 'b', f: 'claim', task: 't1' },
    { kind: 'append', time: 1100, node: 'b', id: 'cb', entryKind: 'claim', task: 't1', epoch: 1 },
    { kind: 'complete', op: 1, time: 1600, node: 'a', type: 'ok', outcome: 'HELD', epoch: 1 },
    { kind: 'complete', op: 2, time: 1700, node: 'b', type: 'ok', outcome: 'HELD', epoch: 1 },
    { kind: 'notice', time: 9000, node: 'b', task: 't1', epoch: 1, reason: 'outbid', winner: 'a' }
  ]
}

const check = (events: HistoryEvent[]): string[] => checkRun(record(events), { minSettleMs: 250 }).map(v => `(${v.check}) ${v.text}`)

describe('the fault checks over a recorded history', () => {
  it('find two HELD for one claim with nothing between them', () => {
    expect(check(twoHeld([]))).toEqual([expect.stringMatching(/^\(a\) a and b were both told HELD for t1@1/)])
  })

  it('excuse it when one was paused, or its link degraded, while they settled', () => {
    expect(
      check(
        twoHeld([
          { kind: 'nemesis', time: 500, f: 'pause', node: 'b' },
          { kind: 'nemesis', time: 1200, f: 'resume', node: 'b' }
        ])
      )
    ).toEqual([])
    expect(
      check(
        twoHeld([
          { kind: 'nemesis', time: 500, f: 'slow', node: 'a' },
          { kind: 'nemesis', time: 5000, f: 'fast', node: 'a' }
        ])
      )
    ).toEqual([])
    // A pause over before the claims is no excuse.
    expect(
      check(
        twoHeld([
          { kind: 'nemesis', time: 100, f: 'pause', node: 'b' },
          { kind: 'nemesis', time: 200, f: 'resume', node: 'b' }
        ])
      )
    ).toHaveLength(1)
  })

  it('read a node in two groups as a bridge: the ends are apart, each end is with the middle', () => {
    const bridge = (groups: string[][]): HistoryEvent[] =>
      twoHeld([
        { kind: 'nemesis', time: 500, f: 'partition', groups },
        { kind: 'nemesis', time: 5000, f: 'heal' }
      ])
    expect(
      check(
        bridge([
          ['a', 'c'],
          ['b', 'c']
        ])
      )
    ).toEqual([])
    expect(
      check(
        bridge([
          ['a', 'b'],
          ['b', 'c']
        ])
      )
    ).toHaveLength(1)
  })

  it('let a send whose call was cut off be delivered once, not twice', () => {
    const send: HistoryEvent[] = [
      { kind: 'invoke', op: 1, time: 100, node: 'a', f: 'send', to: 'b' },
      { kind: 'complete', op: 1, time: 200, node: 'a', type: 'info' }
    ]
    const deliver = (id: string): HistoryEvent => ({ kind: 'deliver', time: 300, node: 'b', from: 'a', id })
    const run = (events: HistoryEvent[]): string[] =>
      checkRun({ ...record(events), winners: new Map() }, { minSettleMs: 250 }).map(v => v.text)
    expect(run([...send])).toEqual([])
    expect(run([...send, deliver('m1')])).toEqual([])
    expect(run([...send, deliver('m1'), deliver('m2')])).toEqual(['a message no one sent reached an inbox: b m2'])
  })
})
