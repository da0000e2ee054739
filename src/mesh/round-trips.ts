// Round trips to connected peers, timed on this node's own monotonic clock:
// the settle window's input. A claim must wait out a round trip across the
// mesh (its entry going out, a competitor's written just before it arrived
// coming back), and a round trip needs no other machine's clock, so a peer
// whose clock is behind or ahead changes nothing. Every interval one
// connected peer, picked at random, is pinged (libp2p's ping protocol); a new
// connection is pinged once at once, so a node that just joined soon has a
// sample.
import type { PeerId } from '@libp2p/interface'
import type { MeshLibp2p } from './node.js'
import type { Logger } from '../logger.js'

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
}

export class RoundTripProbe {
  private readonly init: RoundTripProbeInit
  private readonly now: () => number
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
    try {
      const started = this.now()
      await this.init.node.services.ping.ping(peer, { signal: AbortSignal.timeout(this.init.timeoutMs ?? 10_000) })
      if (!this.stopped) this.init.onSample(key, this.now() - started)
    } catch (err) {
      this.init.logger.debug({ peer: key, err: (err as Error).message }, 'ping failed')
    } finally {
      this.inFlight.delete(key)
    }
  }
}
