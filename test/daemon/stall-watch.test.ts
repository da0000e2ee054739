// The process's stall watch, on a clock and timers the test moves by hand:
// a timer that fires late reports the stall once to every listener; a stall
// still going on is reported by poll, before the timer's turn; short delays
// are not stalls, and nothing runs without a listener.
import { describe, expect, it } from 'vitest'
import { StallWatch } from '../../src/daemon/stall-watch.js'

function scripted() {
  let now = 0
  let pending: { fn: () => void; at: number } | undefined
  const watch = new StallWatch({
    periodMs: 250,
    floorMs: 500,
    now: () => now,
    timers: {
      set: (fn, ms) => {
        pending = { fn, at: now + ms }
        return pending
      },
      clear: t => {
        if (pending === t) pending = undefined
      }
    }
  })
  /** The clock moves to `to`; the timer fires if it is due by then (late by however far the clock jumped). */
  const advance = (to: number): void => {
    now = to
    while (pending !== undefined && pending.at <= now) {
      const p = pending
      pending = undefined
      p.fn()
    }
  }
  return { watch, advance, armed: () => pending !== undefined, at: () => now }
}

describe('the stall watch', () => {
  it('reports a timer that fired late by a stall, with its length, to every listener, once', () => {
    const { watch, advance } = scripted()
    const a: number[][] = []
    const b: number[][] = []
    watch.subscribe((ms, now) => a.push([ms, now]))
    watch.subscribe((ms, now) => b.push([ms, now]))
    for (let t = 250; t <= 1_000; t += 250) advance(t)
    expect(a).toEqual([])
    advance(1_250 + 13_600) // stopped for 13.6 s
    expect(a).toEqual([[13_600, 14_850]])
    expect(b).toEqual(a)
    advance(15_100)
    expect(a).toHaveLength(1)
  })

  it('poll reports a stall still going on (the timer overdue) before the timer runs, and the timer then reports nothing more', () => {
    const { watch, advance } = scripted()
    const seen: number[] = []
    watch.subscribe(ms => seen.push(ms))
    watch.poll(5_250) // the clock says 5.25 s, the timer due at 250 ms has not run yet
    expect(seen).toEqual([5_000])
    advance(5_250)
    advance(5_500)
    expect(seen).toEqual([5_000])
  })

  it('a delay under the floor is no stall; without listeners no timer runs', () => {
    const { watch, advance, armed } = scripted()
    const seen: number[] = []
    const stop = watch.subscribe(ms => seen.push(ms))
    advance(250 + 400)
    watch.poll(650 + 250 + 300)
    expect(seen).toEqual([])
    stop()
    expect(armed()).toBe(false)
    watch.poll(60_000)
    expect(seen).toEqual([])
  })
})
