import { describe, expect, it } from 'vitest'
import { ArrivalTimes } from '../../../src/core/log/arrival-times.js'

describe('ArrivalTimes', () => {
  it('tells when each of its latest cursors was taken in', () => {
    const a = new ArrivalTimes(4)
    a.note([1, 2], 1000)
    a.note([3], 1005)
    expect([a.at(1), a.at(2), a.at(3)]).toEqual([1000, 1000, 1005])
  })

  it('does not know cursors never noted, older than its ring, or 0', () => {
    const a = new ArrivalTimes(4)
    a.note([1, 2, 3, 4, 5, 6], 2000)
    // 1 and 2 shared their slots with 5 and 6
    expect([a.at(1), a.at(2), a.at(3), a.at(6)]).toEqual([0, 0, 2000, 2000])
    expect(a.at(7)).toBe(0)
    expect(a.at(0)).toBe(0)
  })

  it('refuses a ring of no entries', () => {
    expect(() => new ArrivalTimes(0)).toThrow(RangeError)
  })
})
