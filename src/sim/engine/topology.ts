// Who can reach whom, and when: partitions and crashed nodes as a timeline,
// so that a message can be judged at the time it was sent and at the time it
// arrives (a partition or crash that starts while a message is in flight cuts
// it), and a heartbeat sent a while ago can be judged after the fact.

interface PartitionSpan {
  from: number
  groupOf: Int32Array | undefined
}

export class Topology {
  readonly size: number
  private readonly spans: PartitionSpan[] = [{ from: -Infinity, groupOf: undefined }]
  /** per node: times at which it went down / came back up, alternating, starting with down */
  private readonly toggles = new Map<number, number[]>()

  constructor(size: number) {
    this.size = size
  }

  /** From `at` on, the network is split into `groups`; nodes not named form one more group. */
  partition(groups: readonly number[][], at: number): void {
    const groupOf = new Int32Array(this.size).fill(-1)
    groups.forEach((g, i) => {
      for (const n of g) groupOf[n] = i
    })
    this.push({ from: at, groupOf })
  }

  heal(at: number): void {
    this.push({ from: at, groupOf: undefined })
  }

  /** The node crashes (down) or comes back (up) at `at`. */
  setDown(node: number, down: boolean, at: number): void {
    const list = this.toggles.get(node) ?? []
    if (down === (list.length % 2 === 1)) return
    if (list.length > 0 && at < list[list.length - 1]) throw new RangeError('topology changes must come in time order')
    list.push(at)
    this.toggles.set(node, list)
  }

  isUp(node: number, at: number): boolean {
    const list = this.toggles.get(node)
    if (list === undefined) return true
    // number of toggles at or before `at`: odd means down
    let lo = 0
    let hi = list.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (list[mid] <= at) lo = mid + 1
      else hi = mid
    }
    return lo % 2 === 0
  }

  /** When `node` last came up at or before `at` (0 when it never went down); undefined while it is down. */
  upSince(node: number, at: number): number | undefined {
    if (!this.isUp(node, at)) return undefined
    const list = this.toggles.get(node)
    let since = 0
    if (list !== undefined) for (let i = 1; i < list.length && list[i] <= at; i += 2) since = list[i]
    return since
  }

  /** How often `node` started (at 0, and each time it came back up) in [from, to). */
  startsBetween(node: number, from: number, to: number): number {
    let n = from <= 0 && to > 0 ? 1 : 0
    const list = this.toggles.get(node) ?? []
    for (let i = 1; i < list.length; i += 2) if (list[i] >= from && list[i] < to) n++
    return n
  }

  /** Whether anything ever crashed or partitioned (fast paths skip the checks otherwise). */
  get eventful(): boolean {
    return this.spans.length > 1 || this.toggles.size > 0
  }

  canReach(from: number, to: number, at: number): boolean {
    if (!this.isUp(from, at) || !this.isUp(to, at)) return false
    const span = this.spanAt(at)
    if (span.groupOf === undefined) return true
    return span.groupOf[from] === span.groupOf[to]
  }

  /** Whether `node` went down at any time in (after, until]. */
  wentDownBetween(node: number, after: number, until: number): boolean {
    const list = this.toggles.get(node)
    if (list === undefined) return false
    for (let i = 0; i < list.length; i += 2) if (list[i] > after && list[i] <= until) return true
    return false
  }

  private spanAt(at: number): PartitionSpan {
    for (let i = this.spans.length - 1; i >= 0; i--) if (this.spans[i].from <= at) return this.spans[i]
    return this.spans[0]
  }

  private push(span: PartitionSpan): void {
    if (span.from < this.spans[this.spans.length - 1].from) throw new RangeError('topology changes must come in time order')
    this.spans.push(span)
  }
}
