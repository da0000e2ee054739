// Round trips to connected peers, timed on this node's own monotonic clock:
// the settle window's input. A claim must wait out a round trip across the
// mesh (its entry going out, a competitor's written just before it arrived
// coming back), and a round trip needs no other machine's clock, so a peer
// whose clock is behind or ahead changes nothing. Every interval one
// connected peer, picked at random, is pinged (libp2p's ping protocol); a new
// connection is pinged once at once, so a node that just joined soon has a
// sample.
//
// A stall of this node's own event loop during a ping is not part of the
// round trip: the time the loop was busy elsewhere (LoopStalls) is taken off.
// The settle window exists so that a competing claim, written before ours
// arrived at its author, reaches us before we answer; while our loop stalls
// the network still carries it, and the settle timer answers only after the
// I/O already in has been read (board-service). Counting our own stalls
// would make a busy daemon (64 in one process) wait ever longer windows,
// each claim burst widening the next. A peer's stall, and the network's, stay
// in the sample. Should a window still come out too short, a competing
// claim arrives after HELD and the claim protocol resolves it as ever (the
// smaller claim holds, the other is told it lost and is released).
import type { PeerId } from '@libp2p/interface'
import type { MeshLibp2p } from './node.js'
import type { Logger } from '../logger.js'

/**
 * How long this node's event loop has been stalled, summed: a timer armed
 * every `periodMs` while measuring, each firing late by the time the loop
 * spent elsewhere. `stalledMs(now)` also counts a stall still going on (the
 * timer is due but has not run: the code reading it runs in the stall's
 * wake). Only runs between start() and stop(), so an idle node arms nothing.
 */
export class LoopStalls {
  private readonly periodMs: number
  private readonly now: () => number
  private readonly timers: { set: (fn: () => void, ms: number) => unknown, clear: (t: unknown) => void }
  private users = 0
  private timer: unknown
  private due = 0
  private total = 0

  constructor (opts: { periodMs?: number, now?: () => number, timers?: LoopStalls['timers'] } = {}) {
    this.periodMs = opts.periodMs ?? 5
    this.now = opts.now ?? (() => performance.now())
    this.timers = opts.timers ?? {
      set: (fn, ms) => { const t = setTimeout(fn, ms); t.unref(); return t },
      clear: (t) => { clearTimeout(t as NodeJS.Timeout) }
    }
  }

  /** Stalls summed so far, in ms, including the one going on at `now`. */
  stalledMs (now = this.now()): number {
    return this.total + (this.users > 0 ? Math.max(0, now - this.due) : 0)
  }

  /** Starts measuring (counted: each start() needs its stop()). */
  start (): void {
    if (this.users++ > 0) return
    this.arm(this.now())
  }

  stop (): void {
    if (this.users === 0 || --this.users > 0) return
    this.timers.clear(this.timer)
  }

  private arm (from: number): void {
    this.due = from + this.periodMs
    this.timer = this.timers.set(() => {
      const now = this.now()
      this.total += Math.max(0, now - this.due)
      this.arm(now)
    }, this.periodMs)
  }
}

/** The stalls of this process's one event loop, shared by every probe in it (64 daemons in one process arm one timer, not 64). */
export const processLoopStalls = new LoopStalls()

export interface RoundTripProbeInit {
  node: MeshLibp2p
  /** how long between two pings (the heartbeat interval: it grows with the swarm) */
  intervalMs: () => number
  /** a round trip to `peer` took `ms` */
  onSample: (peer: string, ms: number) => void
  logger: Logger
  /** how long one ping may take */
  timeoutMs?: number
  /** this node's monotonic clock */
  now?: () => number
  /** this node's event-loop stalls, taken off each round trip (default: the process's) */
  stalls?: LoopStalls
}

export class RoundTripProbe {
  private readonly init: RoundTripProbeInit
  private readonly now: () => number
  private readonly stalls: LoopStalls
  private timer?: NodeJS.Timeout
  private stopped = true
  private readonly inFlight = new Set<string>()
  private readonly onConnect = (evt: CustomEvent<PeerId>): void => {
    // After the connection's own setup (identify, gossip subscriptions) has had a moment.
    setTimeout(() => { this.probe(evt.detail).catch(() => {}) }, 100)
  }

  constructor (init: RoundTripProbeInit) {
    this.init = init
    this.now = init.now ?? (() => performance.now())
    this.stalls = init.stalls ?? (init.now === undefined ? processLoopStalls : new LoopStalls({ now: init.now }))
  }

  start (): void {
    this.stopped = false
    this.init.node.addEventListener('peer:connect', this.onConnect)
    this.schedule()
  }

  stop (): void {
    this.stopped = true
    clearTimeout(this.timer)
    this.init.node.removeEventListener('peer:connect', this.onConnect)
  }

  private schedule (): void {
    if (this.stopped) return
    const interval = this.init.intervalMs()
    this.timer = setTimeout(() => {
      const peers = this.init.node.getPeers()
      const peer = peers[Math.floor(Math.random() * peers.length)]
      const done = peer === undefined ? Promise.resolve() : this.probe(peer)
      done.catch(() => {}).finally(() => { this.schedule() })
    }, interval * (0.9 + Math.random() * 0.2))
  }

  /** Pings `peer` once; a ping that fails or times out is no sample. */
  async probe (peer: PeerId): Promise<void> {
    const key = peer.toString()
    // Only over a connection that is up: a ping must never dial (a peer cut off stays cut off).
    if (this.stopped || this.inFlight.has(key) || this.init.node.getConnections(peer).length === 0) return
    this.inFlight.add(key)
    this.stalls.start()
    try {
      const started = this.now()
      const stalledBefore = this.stalls.stalledMs(started)
      await this.init.node.services.ping.ping(peer, { signal: AbortSignal.timeout(this.init.timeoutMs ?? 10_000) })
      const ended = this.now()
      if (!this.stopped) this.init.onSample(key, roundTripMs(started, ended, this.stalls.stalledMs(ended) - stalledBefore))
    } catch (err) {
      this.init.logger.debug({ peer: key, err: (err as Error).message }, 'ping failed')
    } finally {
      this.stalls.stop()
      this.inFlight.delete(key)
    }
  }
}

/** A ping's round trip: the time it took less this loop's stalls meanwhile (never below zero). */
export function roundTripMs (started: number, ended: number, stalledMs: number): number {
  return Math.max(0, ended - started - Math.max(0, stalledMs))
}
