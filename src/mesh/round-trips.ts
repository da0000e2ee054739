// Round trips to connected peers, timed on this node's own monotonic clock:
// the settle window's input. A claim must wait out a round trip across the
// mesh (its entry going out, a competitor's written just before it arrived
// coming back), and a round trip needs no other machine's clock, so a peer
// whose clock is behind or ahead changes nothing. Every interval one
// connected peer is pinged, the one pinged longest ago; a new connection is
// pinged once at once, so a node that just joined soon has a sample.
//
// The probe is also the node's one connection check: agentd turns libp2p's
// connection monitor off (it pings every connection from both ends every
// 10 s, each ping a new stream: protocol negotiation, a peer-store write, a
// timeout signal; on an idle daemon that was the largest single cost). A ping
// here is the muxer's own (a yamux ping frame on the connection, answered by
// the peer's muxer: no stream), and a connection whose ping fails or times
// out is closed, as the monitor closed it (a timeout that this node's own
// event-loop stall made does not count: 64 daemons in one process stall). The interval is at most
// `checkMs` / connections, so every connection is checked at least every
// `checkMs` from this end, however quiet the daemon.
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
import type { Connection, PeerId } from '@libp2p/interface'
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
  private readonly timers: { set: (fn: () => void, ms: number) => unknown; clear: (t: unknown) => void }
  private users = 0
  private timer: unknown
  private due = 0
  private total = 0

  constructor(opts: { periodMs?: number; now?: () => number; timers?: LoopStalls['timers'] } = {}) {
    this.periodMs = opts.periodMs ?? 5
    this.now = opts.now ?? (() => performance.now())
    this.timers = opts.timers ?? {
      set: (fn, ms) => {
        const t = setTimeout(fn, ms)
        t.unref()
        return t
      },
      clear: t => {
        clearTimeout(t as NodeJS.Timeout)
      }
    }
  }

  /** Stalls summed so far, in ms, including the one going on at `now`. */
  stalledMs(now = this.now()): number {
    return this.total + (this.users > 0 ? Math.max(0, now - this.due) : 0)
  }

  /** Starts measuring (counted: each start() needs its stop()). */
  start(): void {
    if (this.users++ > 0) return
    this.arm(this.now())
  }

  stop(): void {
    if (this.users === 0 || --this.users > 0) return
    this.timers.clear(this.timer)
  }

  private arm(from: number): void {
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
  /** how long one ping may take; a connection whose ping takes longer is closed */
  timeoutMs?: number
  /** every connection is pinged at least this often from this end (default 60 s) */
  checkMs?: number
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
  /** when each peer was last pinged, by this node's clock */
  private readonly lastPinged = new Map<string, number>()
  private readonly onConnect = (evt: CustomEvent<PeerId>): void => {
    // After the connection's own setup (identify, gossip subscriptions) has had a moment.
    setTimeout(() => {
      this.probe(evt.detail).catch(() => {})
    }, 100)
  }

  constructor(init: RoundTripProbeInit) {
    this.init = init
    this.now = init.now ?? (() => performance.now())
    this.stalls = init.stalls ?? (init.now === undefined ? processLoopStalls : new LoopStalls({ now: init.now }))
  }

  start(): void {
    this.stopped = false
    this.init.node.addEventListener('peer:connect', this.onConnect)
    this.schedule()
  }

  stop(): void {
    this.stopped = true
    clearTimeout(this.timer)
    this.init.node.removeEventListener('peer:connect', this.onConnect)
    this.lastPinged.clear()
  }

  private schedule(): void {
    if (this.stopped) return
    const peers = this.init.node.getPeers()
    const interval = probeIntervalMs(this.init.intervalMs(), peers.length, this.init.checkMs ?? 60_000)
    this.timer = setTimeout(
      () => {
        const peer = this.stalest(this.init.node.getPeers())
        const done = peer === undefined ? Promise.resolve() : this.probe(peer)
        done
          .catch(() => {})
          .finally(() => {
            this.schedule()
          })
      },
      interval * (0.9 + Math.random() * 0.2)
    )
  }

  /** The connected peer pinged longest ago (never pinged: first). */
  private stalest(peers: PeerId[]): PeerId | undefined {
    let best: PeerId | undefined
    let bestAt = Infinity
    for (const p of peers) {
      const at = this.lastPinged.get(p.toString()) ?? -Infinity
      if (at < bestAt) {
        best = p
        bestAt = at
      }
    }
    return best
  }

  /** Pings `peer` once over its open connection; a ping that fails or times out is no sample, and closes that connection. */
  async probe(peer: PeerId): Promise<void> {
    const key = peer.toString()
    // Only over a connection that is up: a ping must never dial (a peer cut off stays cut off).
    const conn = this.init.node.getConnections(peer).find(c => c.status === 'open')
    if (this.stopped || this.inFlight.has(key) || conn === undefined) return
    this.inFlight.add(key)
    this.lastPinged.set(key, this.now())
    this.stalls.start()
    const timeoutMs = this.init.timeoutMs ?? 10_000
    const signal = AbortSignal.timeout(timeoutMs)
    const started = this.now()
    const stalledBefore = this.stalls.stalledMs(started)
    try {
      await pingOver(conn, this.init.node, signal)
      const ended = this.now()
      if (!this.stopped) this.init.onSample(key, roundTripMs(started, ended, this.stalls.stalledMs(ended) - stalledBefore))
    } catch (err) {
      if (this.stopped) return
      // A timeout that this node's own stall made (the timer ran first in the
      // stall's wake, the answer may be waiting to be read) says nothing of the
      // connection: only a wait whose part outside our stalls reached the
      // timeout does. The stalls are counted short by up to a period, hence the margin.
      const ended = this.now()
      const waitedMs = roundTripMs(started, ended, this.stalls.stalledMs(ended) - stalledBefore)
      if (signal.aborted && waitedMs < timeoutMs * 0.9) {
        this.init.logger.debug({ peer: key, waitedMs }, 'ping timed out during a stall of this node: no sample')
        return
      }
      // As libp2p's connection monitor did: a connection that cannot carry a ping is dead or hopelessly stuck.
      this.init.logger.debug({ peer: key, err: (err as Error).message }, 'ping failed: closing the connection')
      if (conn.status === 'open') conn.abort(err as Error)
    } finally {
      this.stalls.stop()
      this.inFlight.delete(key)
      if (this.init.node.getConnections(peer).length === 0) this.lastPinged.delete(key)
    }
  }
}

/** A stream multiplexer that can ping its peer without a stream (yamux). */
interface PingingMuxer {
  ping: (options?: { signal?: AbortSignal }) => Promise<number>
}

/**
 * One round trip over `conn`: the muxer's ping frame when the muxer has one
 * (yamux), else libp2p's ping protocol on a new stream.
 */
async function pingOver(conn: Connection, node: MeshLibp2p, signal: AbortSignal): Promise<void> {
  const muxer = (conn as unknown as { muxer?: Partial<PingingMuxer> }).muxer
  if (typeof muxer?.ping === 'function') {
    await (muxer as PingingMuxer).ping({ signal })
    return
  }
  await node.services.ping.ping(conn.remotePeer, { signal })
}

/**
 * How long until the next ping: the heartbeat's interval, but short enough
 * that each of `connections` is pinged at least every `checkMs`.
 */
export function probeIntervalMs(intervalMs: number, connections: number, checkMs: number): number {
  return connections <= 0 ? intervalMs : Math.min(intervalMs, checkMs / connections)
}

/** A ping's round trip: the time it took less this loop's stalls meanwhile (never below zero). */
export function roundTripMs(started: number, ended: number, stalledMs: number): number {
  return Math.max(0, ended - started - Math.max(0, stalledMs))
}
