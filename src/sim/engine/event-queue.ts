// A binary min-heap of timed events. Ties on time run in scheduling order,
// which keeps a simulation deterministic.

export interface TimedEvent {
  at: number
  seq: number
  run: () => void
}

export class EventQueue {
  private readonly heap: TimedEvent[] = []
  private seq = 0

  get size(): number {
    return this.heap.length
  }

  push(at: number, run: () => void): void {
    this.heap.push({ at, seq: this.seq++, run })
    let i = this.heap.length - 1
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!before(this.heap[i], this.heap[parent])) break
      this.swap(i, parent)
      i = parent
    }
  }

  peek(): TimedEvent | undefined {
    return this.heap[0]
  }

  pop(): TimedEvent | undefined {
    const top = this.heap[0]
    const last = this.heap.pop()
    if (this.heap.length > 0 && last !== undefined) {
      this.heap[0] = last
      let i = 0
      for (;;) {
        const l = 2 * i + 1
        const r = l + 1
        let m = i
        if (l < this.heap.length && before(this.heap[l], this.heap[m])) m = l
        if (r < this.heap.length && before(this.heap[r], this.heap[m])) m = r
        if (m === i) break
        this.swap(i, m)
        i = m
      }
    }
    return top
  }

  private swap(i: number, j: number): void {
    const t = this.heap[i]
    this.heap[i] = this.heap[j]
    this.heap[j] = t
  }
}

function before(a: TimedEvent, b: TimedEvent): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq)
}
