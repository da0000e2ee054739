// Growable typed columns (core/log/columns.ts): adopting a whole array keeps
// its chunks as views, and the column reads, grows and copies out the same as
// one filled value by value.
import { describe, expect, it } from 'vitest'
import { float64Column, RecordColumn, uint16Column } from '../../../src/core/log/columns.js'

const CHUNK = 1 << 16

describe('columns', () => {
  it('adopts an array into an empty column: the same values, and it grows past them', () => {
    for (const n of [0, 5, CHUNK, CHUNK * 2 + 7]) {
      const values = Float64Array.from({ length: n }, (_, i) => i * 1.5)
      const adopted = float64Column()
      adopted.adopt(values)
      adopted.push(-1)
      const pushed = float64Column()
      for (const v of values) pushed.push(v)
      pushed.push(-1)
      expect(adopted.length).toBe(n + 1)
      expect(Array.from(adopted.toArray())).toEqual(Array.from(pushed.toArray()))
      expect(adopted.at(n)).toBe(-1)
    }
  })

  it('copies instead when the column is not empty or the array is of another kind', () => {
    const c = uint16Column()
    c.push(9)
    const values = Uint16Array.from({ length: CHUNK + 3 }, (_, i) => i & 0xffff)
    c.adopt(values)
    values[0] = 1234
    expect(c.length).toBe(CHUNK + 4)
    expect(c.at(1)).toBe(0)
    expect(c.at(CHUNK + 3)).toBe((CHUNK + 2) & 0xffff)
  })

  it('adopts fixed-size records the same way', () => {
    const records = new Uint8Array((CHUNK + 2) * 8).map((_, i) => i % 251)
    const adopted = new RecordColumn(8)
    adopted.adopt(records)
    const pushed = new RecordColumn(8)
    pushed.pushAll(records)
    expect(adopted.length).toBe(CHUNK + 2)
    expect(Buffer.from(adopted.toBytes()).equals(Buffer.from(pushed.toBytes()))).toBe(true)
    expect(Array.from(adopted.at(CHUNK + 1))).toEqual(Array.from(pushed.at(CHUNK + 1)))
  })
})
