// The round-trip probe's arithmetic, with an injected clock and timers: a
// stall of this node's own event loop is taken off a round trip; the network's
// time is not.
import { describe, expect, it } from 'vitest'
import { LoopStalls, roundTripMs } from '../../src/mesh/round-trips.js'

/** A clock and timers moved by hand: `run(to)` fires every timer due by `to`, each at the time the loop got to it. */
function manualLoop() {
  let now = 0
  let nextId = 1
  const timers = new Map<number, { at: number; fn: () => void }>()
  return {
    now: () => now,
    timers: {
      set: (fn: () => void, ms: number) => {
        const id = nextId++
        timers.set(id, { at: now + ms, fn })
        return id
      },
      clear: (t: unknown) => {
        timers.delete(t as number)
      }
    },
    pending: () => timers.size,
    /** the loop runs freely until `to`: timers fire on time */
    run(to: number) {
      for (;;) {
        const due = [...timers].filter(([, t]) => t.at <= to).sort((a, b) => a[1].at - b[1].at)[0]
        if (due === undefined) break
        timers.delete(due[0])
        now = Math.max(now, due[1].at)
        due[1].fn()
      }
      now = to
    },
    /** the loop is busy for `ms`: nothing fires meanwhile */
    stall(ms: number) {
      now += ms
    }
  }
}

describe('LoopStalls', () => {
  it('counts nothing while the loop keeps its timers', () => {
    const loop = manualLoop()
    const s = new LoopStalls({ periodMs: 5, now: loop.now, timers: loop.timers })
    s.start()
    loop.run(1000)
    expect(s.stalledMs()).toBe(0)
    s.stop()
  })

  it('sums the stalls, the one going on included, and stops arming timers when stopped', () => {
    const loop = manualLoop()
    const s = new LoopStalls({ periodMs: 5, now: loop.now, timers: loop.timers })
    s.start()
    loop.run(12) // timers at 5 and 10 on time; the next is due at 15
    loop.stall(300) // busy from 12 to 312
    expect(s.stalledMs()).toBe(297) // due at 15, still not run at 312
    loop.run(400) // the late timer fires at 312 and counts the 297 ms
    expect(s.stalledMs()).toBe(297)
    loop.stall(50)
    loop.run(500)
    expect(s.stalledMs()).toBeGreaterThanOrEqual(297 + 45)
    expect(s.stalledMs()).toBeLessThanOrEqual(297 + 50)
    s.stop()
    expect(loop.pending()).toBe(0)
  })

  it('runs once for nested users and stops with the last', () => {
    const loop = manualLoop()
    const s = new LoopStalls({ periodMs: 5, now: loop.now, timers: loop.timers })
    s.start()
    s.start()
    expect(loop.pending()).toBe(1)
    s.stop()
    expect(loop.pending()).toBe(1)
    s.stop()
    expect(loop.pending()).toBe(0)
    s.stop() // one too many changes nothing
    expect(loop.pending()).toBe(0)
  })

  it('a ping across a stall of its own loop measures the network part only', () => {
    const loop = manualLoop()
    const s = new LoopStalls({ periodMs: 5, now: loop.now, timers: loop.timers })
    s.start()
    const started = loop.now()
    const before = s.stalledMs(started)
    loop.run(3) // 3 ms on the wire
    loop.stall(800) // the answer is in, but the loop is busy elsewhere
    const ended = loop.now()
    expect(ended - started).toBe(803)
    // the stall counts from when the next timer was due (at 5): what is
    // taken off errs short by up to a period, never long
    const rtt = roundTripMs(started, ended, s.stalledMs(ended) - before)
    expect(rtt).toBeGreaterThanOrEqual(3)
    expect(rtt).toBeLessThanOrEqual(3 + 5)
    s.stop()
  })
})

describe('roundTripMs', () => {
  it('takes the stall off and never goes below zero', () => {
    expect(roundTripMs(100, 180, 30)).toBe(50)
    expect(roundTripMs(100, 180, 0)).toBe(80)
    expect(roundTripMs(100, 180, 200)).toBe(0)
    expect(roundTripMs(100, 180, -5)).toBe(80)
  })
})
