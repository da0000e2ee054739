// A schedule of the real-process campaign: which faults the nemesis plays on
// which hosts, when (ms after the agents start) and for how long, drawn from
// a seed. Plain data: a failing schedule is printed, and the same seed draws
// it again (real processes do not replay to the millisecond, but the faults
// and the agents' choices do).

export type RealFaultKind = 'partition' | 'bridge' | 'isolate' | 'kill' | 'pause' | 'clock' | 'disk' | 'slow' | 'remote-slow' | 'remote-cut'

export interface RealFault {
  kind: RealFaultKind
  at: number
  until: number
  /** kill, pause, clock, disk, slow, isolate: the host (1-based) */
  host?: number
  /** partition: the hosts on one side (the rest on the other); bridge: [left, middle, right] */
  groups?: number[][]
  /** clock: how far the host's wall clock jumps, ms (back when negative); it jumps back at `until` */
  offsetMs?: number
}

export interface RealSchedule {
  seed: number
  hosts: number
  /** the agents act, and the faults happen, for this long; then everything heals */
  activeMs: number
  faults: RealFault[]
}

export const FAULT_KINDS: readonly RealFaultKind[] = [
  'partition',
  'bridge',
  'isolate',
  'kill',
  'pause',
  'clock',
  'disk',
  'slow',
  'remote-slow',
  'remote-cut'
]

/** A small seeded generator (mulberry32): the same seed, the same schedule and the same agents' choices. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export interface ScheduleOptions {
  hosts: number
  activeMs: number
  /** faults per schedule: [min, max] */
  faults?: [number, number]
  /** only these kinds (a pinned schedule, a short test) */
  kinds?: readonly RealFaultKind[]
}

export function randomRealSchedule(seed: number, o: ScheduleOptions): RealSchedule {
  const r = seeded(seed)
  const int = (n: number): number => Math.floor(r() * n)
  const between = (min: number, max: number): number => Math.round(min + r() * (max - min))
  const hosts = Array.from({ length: o.hosts }, (_, i) => i + 1)
  const shuffled = (): number[] => {
    const h = [...hosts]
    for (let i = h.length - 1; i > 0; i--) {
      const j = int(i + 1)
      ;[h[i], h[j]] = [h[j], h[i]]
    }
    return h
  }
  const kinds = o.kinds ?? FAULT_KINDS
  const [min, max] = o.faults ?? [3, 5]
  const n = min + int(max - min + 1)
  const faults: RealFault[] = []
  for (let i = 0; i < n; i++) {
    const kind = kinds[int(kinds.length)]
    const at = between(1_000, o.activeMs * 0.6)
    const until = Math.min(o.activeMs - 1_000, at + between(3_000, 15_000))
    const host = 1 + int(o.hosts)
    const f: RealFault = { kind, at, until }
    if (kind === 'partition') {
      const h = shuffled()
      f.groups = [h.slice(0, Math.max(1, Math.floor(h.length / 2))).sort()]
    } else if (kind === 'bridge') {
      const h = shuffled()
      f.groups = [[h[0]], [h[1]], h.slice(2).sort()]
    } else if (kind === 'clock') {
      f.host = host
      f.offsetMs = (r() < 0.5 ? -1 : 1) * between(30_000, 3_600_000)
    } else if (kind !== 'remote-slow' && kind !== 'remote-cut') {
      f.host = host
    }
    if (kind === 'kill') f.until = Math.min(o.activeMs - 1_000, at + between(500, 6_000))
    faults.push(f)
  }
  return { seed, hosts: o.hosts, activeMs: o.activeMs, faults: faults.sort((a, b) => a.at - b.at) }
}

/** One line per fault, for a report. */
export function describeSchedule(s: RealSchedule): string {
  const lines = s.faults.map(f => {
    const where = f.groups != null ? ` ${f.groups.map(g => `[${g.join(',')}]`).join(' ')}` : f.host != null ? ` host${f.host}` : ''
    const what = f.offsetMs != null ? ` ${f.offsetMs > 0 ? '+' : ''}${Math.round(f.offsetMs / 1000)} s` : ''
    return `  ${f.kind}${where}${what} from ${f.at} to ${f.until} ms`
  })
  return [`seed ${s.seed}: ${s.hosts} hosts, ${s.activeMs} ms`, ...lines].join('\n')
}
