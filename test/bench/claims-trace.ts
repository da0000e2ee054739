// bench:claims --trace: where a claim's time goes, per agent, for daemons in
// the bench's own process. Wraps (never changes) the objects the claim runs
// through and records, on one clock (performance.now(), ms from the first
// claim call): the call sent, the claim entry accepted in its own log (the
// window opens), the window's end, the protocol's HELD (the settle timer
// ran), the claim's append resolved (on disk and published), the
// daemon's claim --next answer, and the client's HELD; with the event loop's
// delay over the claims.
import { monitorEventLoopDelay } from 'node:perf_hooks'
import type { Daemon } from '../../src/daemon/daemon.js'

export interface AgentTrace {
  call?: number
  written?: number
  deadline?: number
  settled?: number
  appended?: number
  answered?: number
  received?: number
  /** the daemon's first heartbeat sent after its claim entry was written */
  beat?: number
}

const STEPS: Array<[keyof AgentTrace, string]> = [
  ['written', 'entry written'],
  ['deadline', 'window end'],
  ['settled', 'protocol HELD'],
  ['appended', 'append resolved'],
  ['answered', 'daemon answered'],
  ['received', 'client got HELD']
]

/** Milliseconds since the epoch, fine-grained, on one clock across the bench's processes. */
export const absoluteNow = (): number => performance.timeOrigin + performance.now()

/** Gossip over the claims, summed over the daemons traced: heartbeats sent and received, entries received. */
export interface GossipCounts {
  beatsSent: number
  beatsReceived: number
  entriesReceived: number
}

/** The event loop's delay over the claims in one process: p50, p99 and the most, in ms. */
export interface LoopDelay {
  p50: number
  p99: number
  max: number
}

export class ClaimsTrace {
  readonly agents: AgentTrace[]
  private t0 = 0
  private readonly loop = monitorEventLoopDelay({ resolution: 10 })
  /** the loop delays of the processes the daemons ran in, when not this one */
  private readonly loops: LoopDelay[] = []
  /** counted from start() on */
  readonly counts: GossipCounts = { beatsSent: 0, beatsReceived: 0, entriesReceived: 0 }
  private counting = false

  /** Traces `daemons` (in this process), or `n` agents whose steps other processes record (merge). */
  constructor(daemons: Daemon[] | number) {
    this.agents = typeof daemons === 'number' ? Array.from({ length: daemons }, () => ({})) : daemons.map(() => ({}))
    if (typeof daemons !== 'number')
      daemons.forEach((d, i) => {
        this.wrap(d, this.agents[i])
      })
  }

  /** From now (or from `t0`, on absoluteNow's clock), the steps are timed. */
  start(t0 = absoluteNow()): void {
    this.t0 = t0
    this.counting = true
    this.loop.reset()
    this.loop.enable()
  }

  private at(): number {
    return absoluteNow() - this.t0
  }

  /** Steps another process recorded for agent `i` (on the same t0), and that process's loop delay. */
  merge(i: number, steps: AgentTrace): void {
    for (const [k, v] of Object.entries(steps) as Array<[keyof AgentTrace, number | undefined]>)
      if (v !== undefined && k !== 'call' && k !== 'received') this.agents[i][k] ??= v
  }

  mergeCounts(c: GossipCounts): void {
    this.counts.beatsSent += c.beatsSent
    this.counts.beatsReceived += c.beatsReceived
    this.counts.entriesReceived += c.entriesReceived
  }

  mergeLoop(d: LoopDelay): void {
    this.loops.push(d)
  }

  loopDelay(): LoopDelay {
    const d = { p50: this.loop.percentile(50) / 1e6, p99: this.loop.percentile(99) / 1e6, max: this.loop.max / 1e6 }
    this.loop.disable()
    return d
  }

  private wrap(d: Daemon, a: AgentTrace): void {
    const b = d.boardService
    const p = b.protocol
    const me = p.me
    d.logService.onAccepted(e => {
      if (e.entry.author !== me || e.entry.kind !== 'claim' || a.written !== undefined) return
      a.written = this.at()
      a.deadline = a.written + b.settleMs()
    })
    const tick = p.tick.bind(p)
    p.tick = (now: number) => {
      const out = tick(now)
      if (out.answers.some(v => v.outcome === 'HELD') && a.settled === undefined) a.settled = this.at()
      return out
    }
    const placed = d.logService.appendPlaced.bind(d.logService)
    d.logService.appendPlaced = (async (kind: any, body: any) => {
      const r = await placed(kind, body)
      if (kind === 'claim' && a.appended === undefined) a.appended = this.at()
      return r
    }) as typeof d.logService.appendPlaced
    // the daemon's gossip handlers call these through closures: counted here
    const beat = d.presence.beat.bind(d.presence)
    d.presence.beat = async () => {
      if (this.counting) this.counts.beatsSent++
      if (a.written !== undefined) a.beat ??= this.at()
      return await beat()
    }
    const receive = d.presence.receive.bind(d.presence)
    d.presence.receive = (p, from) => {
      if (this.counting) this.counts.beatsReceived++
      return receive(p, from)
    }
    const gossiped = d.logService.receiveGossip.bind(d.logService)
    d.logService.receiveGossip = async (bytes, from) => {
      if (this.counting) this.counts.entriesReceived++
      return await gossiped(bytes, from)
    }
    const next = b.claimNext.bind(b)
    b.claimNext = async (scope: string[]) => {
      const r = await next(scope)
      if (r.outcome === 'HELD' && a.answered === undefined) a.answered = this.at()
      return r
    }
  }

  call(i: number): void {
    this.agents[i].call ??= this.at()
  }
  received(i: number): void {
    this.agents[i].received ??= this.at()
  }

  /** Per step: the median and the slowest agent's time from the step before, and when the last agent reached it. */
  summary(): string {
    const lines: string[] = []
    let prev: keyof AgentTrace = 'call'
    for (const [k, name] of STEPS) {
      const gaps = this.agents
        .filter(a => a[k] !== undefined && a[prev] !== undefined)
        .map(a => (a[k] as number) - (a[prev] as number))
        .sort((x, y) => x - y)
      const reached = this.agents
        .map(a => a[k])
        .filter((x): x is number => x !== undefined)
        .sort((x, y) => x - y)
      if (gaps.length > 0)
        lines.push(
          `      ${name.padEnd(16)} after ${String(prev).padEnd(8)} median ${gaps[gaps.length >> 1].toFixed(0).padStart(6)} ms, most ${gaps[gaps.length - 1].toFixed(0).padStart(6)} ms; ${reached.length} agents, the last at ${(reached[reached.length - 1] / 1000).toFixed(2)} s`
        )
      prev = k
    }
    const beats = this.agents
      .filter(a => a.beat !== undefined && a.written !== undefined)
      .map(a => (a.beat as number) - (a.written as number))
      .sort((x, y) => x - y)
    if (beats.length > 0)
      lines.push(
        `      first heartbeat after the entry written: median ${beats[beats.length >> 1].toFixed(0)} ms, least ${beats[0].toFixed(0)} ms (${beats.length} agents)`
      )
    const c = this.counts
    lines.push(
      `      gossip over the claims: ${c.beatsSent} heartbeats sent, ${c.beatsReceived} received; ${c.entriesReceived} entries received (each daemon's handlers, duplicates that gossipsub drops not counted)`
    )
    const loops = this.loops.length > 0 ? this.loops : [this.loopDelay()]
    const worst = (k: keyof LoopDelay): string => Math.max(...loops.map(l => l[k])).toFixed(0)
    lines.push(
      `      event loop delay over the claims${this.loops.length > 0 ? ` (the worst of ${loops.length} processes)` : ''}: p50 ${worst('p50')} ms, p99 ${worst('p99')} ms, max ${worst('max')} ms`
    )
    return lines.join('\n')
  }

  /** One line per agent, in the order they were HELD at the client: ms from the first call. */
  rows(): string {
    return this.agents
      .map((a, i) => ({ i, a }))
      .sort((x, y) => (x.a.received ?? Infinity) - (y.a.received ?? Infinity))
      .map(
        ({ i, a }) =>
          `      a${i}: ${(['call', ...STEPS.map(s => s[0])] as Array<keyof AgentTrace>).map(k => (a[k] === undefined ? '-' : a[k].toFixed(0))).join(' ')}`
      )
      .join('\n')
  }
}
