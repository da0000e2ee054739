// Growable typed columns (core/log/columns.ts): adopting a whole array keeps
// its chunks as views, and the column reads, grows and copies out the same as
// one filled value by value.
import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { float64Column, int32Column, RecordColumn, uint16Column } from '../../../src/core/log/columns.js'

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

describe('number columns', () => {
  it("keep every value pushed, one at a time or in runs, across the first chunk's growth and later chunks", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.integer({ min: -1000, max: 1000 }),
            fc.integer({ min: 1, max: 2 * CHUNK + 10 }).map(n => -n - 1000)
          ),
          { maxLength: 12 }
        ),
        steps => {
          const col = int32Column()
          const want: number[] = []
          for (const s of steps) {
            if (s >= -1000) {
              col.push(s)
              want.push(s)
            } else {
              const run = Int32Array.from({ length: -s - 1000 }, (_, k) => want.length + k)
              col.pushAll(run)
              for (const x of run) want.push(x)
            }
          }
          expect(col.length).toBe(want.length)
          for (const i of [0, 1, 15, 16, 17, CHUNK - 1, CHUNK, CHUNK + 1, want.length - 1])
            if (i >= 0 && i < want.length) expect(col.at(i)).toBe(want[i])
          const all = col.toArray()
          expect(all.length).toBe(want.length)
          expect(all.every((x, i) => x === want[i])).toBe(true)
        }
      ),
      { numRuns: 30 }
    )
  })

  it('change a value in place after growing', () => {
    const col = float64Column()
    for (let i = 0; i < 40; i++) col.push(i)
    col.set(3, 0.5)
    col.push(40)
    expect(col.at(3)).toBe(0.5)
    expect(col.at(40)).toBe(40)
  })

  it('cost a few bytes, not a chunk, while they hold a few values (a feed per author)', () => {
    const before = process.memoryUsage().arrayBuffers
    const cols = Array.from({ length: 1000 }, (_, i) => {
      const c = int32Column()
      c.push(i)
      return c
    })
    // a whole chunk apiece would be 1000 x 256 KiB
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(16 << 20)
    expect(cols.every((c, i) => c.at(0) === i)).toBe(true)
  })
})
