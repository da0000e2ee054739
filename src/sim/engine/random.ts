// A small seeded PRNG (sfc32, seeded through splitmix32): the same seed gives
// the same run, so a failing simulation can be replayed exactly.

export interface Random {
  /** uniform in [0, 1) */
  next: () => number
  /** integer in [0, n) */
  int: (n: number) => number
  /** uniform in [min, max) */
  between: (min: number, max: number) => number
  chance: (p: number) => boolean
  pick: <T>(items: readonly T[]) => T
  /** Fisher-Yates, in place; returns the array */
  shuffle: <T>(items: T[]) => T[]
  /** an independent generator derived from this one */
  fork: () => Random
}

export function createRandom(seed: number): Random {
  let s = seed >>> 0
  const splitmix = (): number => {
    s = (s + 0x9e3779b9) >>> 0
    let z = s
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0
    return (z ^ (z >>> 16)) >>> 0
  }
  let a = splitmix()
  let b = splitmix()
  let c = splitmix()
  let d = splitmix()
  const u32 = (): number => {
    const t = (((a + b) >>> 0) + d) >>> 0
    d = (d + 1) >>> 0
    a = b ^ (b >>> 9)
    b = (c + (c << 3)) >>> 0
    c = ((c << 21) | (c >>> 11)) >>> 0
    c = (c + t) >>> 0
    return t
  }
  for (let i = 0; i < 12; i++) u32()

  const next = (): number => u32() / 4294967296
  const int = (n: number): number => Math.floor(next() * n)
  const rng: Random = {
    next,
    int,
    between: (min, max) => min + next() * (max - min),
    chance: p => next() < p,
    pick: items => {
      if (items.length === 0) throw new RangeError('pick from an empty list')
      return items[int(items.length)]
    },
    shuffle: items => {
      for (let i = items.length - 1; i > 0; i--) {
        const j = int(i + 1)
        const tmp = items[i]
        items[i] = items[j]
        items[j] = tmp
      }
      return items
    },
    fork: () => createRandom(u32())
  }
  return rng
}
