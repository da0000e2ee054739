// A set with O(1) add, delete and uniform random pick (array + index map), for
// the "pick a random ready task" step that every simulated agent takes.

import type { Random } from './random.js'

export class IndexedSet<T> {
  private readonly items: T[] = []
  private readonly at = new Map<T, number>()

  get size(): number {
    return this.items.length
  }

  has(item: T): boolean {
    return this.at.has(item)
  }

  add(item: T): void {
    if (this.at.has(item)) return
    this.at.set(item, this.items.length)
    this.items.push(item)
  }

  delete(item: T): void {
    const i = this.at.get(item)
    if (i === undefined) return
    const last = this.items.pop() as T
    this.at.delete(item)
    if (i < this.items.length) {
      this.items[i] = last
      this.at.set(last, i)
    }
  }

  pick(rng: Random): T | undefined {
    return this.items.length === 0 ? undefined : this.items[rng.int(this.items.length)]
  }

  values(): readonly T[] {
    return this.items
  }
}
