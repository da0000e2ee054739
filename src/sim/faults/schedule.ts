// A fault schedule: everything that goes wrong in one simulated run, drawn
// from a seed. Crashes (some lose the writes not yet synced) with their
// restarts, partitions with their heals, loss, duplication and reordering of
// messages, and each node's clock off by its own amount. The workload (who
// claims what, when) comes from the same seed. A schedule is plain data, so
// a failing one can be printed, shrunk and replayed.

import { createRandom, type Random } from '../engine/random.js'

export interface CrashFault {
  kind: 'crash'
  node: number
  at: number
  restartAt: number
  /** the machine lost power: entries received since the last disk sync are gone */
  loseUnsynced: boolean
}

export interface PartitionFault {
  kind: 'partition'
  at: number
  until: number
  /** node groups; nodes named in none form one more group */
  groups: number[][]
}

export type Fault = CrashFault | PartitionFault

export interface ClockSkew {
  /** this node's monotonic clock reads virtual time plus this */
  clockMs: number
  /** this node's wall clock reads virtual time plus this */
  wallMs: number
}

export interface FaultSchedule {
  /** drives the workload, the latencies and the message faults */
  seed: number
  nodes: number
  tasks: number
  /** agents act (and faults happen) until this virtual time; then the network heals and goes quiet */
  activeMs: number
  /** probability that a message is lost, duplicated, held back */
  loss: number
  duplicate: number
  reorder: number
  /** how far a held-back message is held back, at most */
  reorderMs: number
  skew: ClockSkew[]
  faults: Fault[]
}

/** The schedule for `seed`: 3 to 6 nodes, a few tasks, a minute or two of faults. */
export function randomSchedule(seed: number): FaultSchedule {
  const rng = createRandom(seed)
  const nodes = 3 + rng.int(4)
  const activeMs = 60_000 + rng.int(60_001)
  const skew = Array.from({ length: nodes }, () => ({
    clockMs: Math.round(rng.between(-600_000, 600_000)),
    wallMs: rng.chance(0.5) ? 0 : Math.round(rng.between(-3_600_000, 3_600_000))
  }))
  return {
    seed,
    nodes,
    tasks: 3 + rng.int(8),
    activeMs,
    loss: rng.chance(0.5) ? 0 : round(rng.between(0, 0.2)),
    duplicate: rng.chance(0.5) ? 0 : round(rng.between(0, 0.2)),
    reorder: rng.chance(0.5) ? 0 : round(rng.between(0, 0.2)),
    reorderMs: 40 + rng.int(61),
    skew,
    faults: [...crashes(rng, nodes, activeMs), ...partitions(rng, nodes, activeMs)].sort((a, b) => a.at - b.at)
  }
}

/** Up to two crashes per node, apart in time; a few lose their unsynced writes. */
function crashes(rng: Random, nodes: number, activeMs: number): CrashFault[] {
  const out: CrashFault[] = []
  for (let node = 0; node < nodes; node++) {
    let t = 2_000
    for (let i = 0; i < 2; i++) {
      if (!rng.chance(0.35)) continue
      const at = Math.round(t + rng.between(0, activeMs / 2))
      const restartAt = Math.round(at + rng.between(200, 15_000))
      if (restartAt >= activeMs) break
      out.push({ kind: 'crash', node, at, restartAt, loseUnsynced: rng.chance(0.5) })
      t = restartAt + 1_000
    }
  }
  return out
}

/** Up to three partitions, one after another: two sides, or one node cut off. */
function partitions(rng: Random, nodes: number, activeMs: number): PartitionFault[] {
  const out: PartitionFault[] = []
  let t = 1_000
  for (let i = 0; i < 3; i++) {
    if (!rng.chance(0.5)) continue
    const at = Math.round(t + rng.between(0, activeMs / 3))
    const until = Math.round(at + rng.between(300, 20_000))
    if (until >= activeMs) break
    const order = rng.shuffle(Array.from({ length: nodes }, (_, n) => n))
    const cut = rng.chance(0.5) ? 1 : 1 + rng.int(nodes - 1)
    out.push({ kind: 'partition', at, until, groups: [order.slice(0, cut).sort((a, b) => a - b)] })
    t = until + 500
  }
  return out
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000
}

/** A schedule with no faults at all, for the same workload. */
export function quietSchedule(s: FaultSchedule): FaultSchedule {
  return { ...s, loss: 0, duplicate: 0, reorder: 0, skew: s.skew.map(() => ({ clockMs: 0, wallMs: 0 })), faults: [] }
}
