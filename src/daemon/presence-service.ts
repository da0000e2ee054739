// Presence: a signed heartbeat every few seconds, and the directory of peers
// built from everyone else's. Liveness uses this process's monotonic clock.
import { performance } from 'node:perf_hooks'
import type { Presence } from '../gen/agency/v1/wire.js'
import { PeerDirectory, type PeerRecord } from '../core/presence/peer-directory.js'
import { signPresence, verifyPresence } from '../core/presence/signed-messages.js'
import type { Signer } from '../core/log/crypto.js'
import type { SwarmGossip, Verdict } from '../mesh/swarm-gossip.js'

export interface PresenceServiceInit {
  signer: Signer
  name: string
  heartbeatMs: number
  liveTimeoutMs: number
  /** the addresses peers can dial us at */
  addrs: () => string[]
  /** the claims we hold, carried as leases */
  heldClaims: () => Array<{ task: string, epoch: number }>
  onJoined: (p: PeerRecord) => void
  onLeft: (p: PeerRecord) => void
  onHeartbeat?: (p: PeerRecord, sentAt: number) => void
}

export class PresenceService {
  readonly directory: PeerDirectory
  status = ''
  private readonly init: PresenceServiceInit
  private gossip?: SwarmGossip
  private heartbeatTimer?: NodeJS.Timeout
  private expireTimer?: NodeJS.Timeout
  private seq = 0

  constructor (init: PresenceServiceInit) {
    this.init = init
    this.directory = new PeerDirectory({ liveTimeoutMs: init.liveTimeoutMs })
  }

  start (gossip: SwarmGossip): void {
    this.gossip = gossip
    const beat = (): void => { this.beat().catch(() => {}) }
    beat()
    this.heartbeatTimer = setInterval(beat, this.init.heartbeatMs)
    this.expireTimer = setInterval(() => { this.expire() }, Math.max(100, Math.min(1000, this.init.liveTimeoutMs / 4)))
  }

  stop (): void {
    clearInterval(this.heartbeatTimer)
    clearInterval(this.expireTimer)
  }

  /** Sends a heartbeat now (also used when the status line or claims change). */
  async beat (): Promise<void> {
    if (this.gossip == null) return
    this.seq = Math.max(this.seq + 1, Date.now())
    const p = signPresence(this.init.signer, {
      name: this.init.name,
      status: this.status,
      claims: this.init.heldClaims(),
      time: Date.now(),
      seq: this.seq,
      addrs: this.init.addrs()
    })
    await this.gossip.publishPresence(p)
  }

  /** Gossip handler for a received heartbeat. */
  receive (p: Presence, _from: string): Verdict {
    if (!verifyPresence(p)) return 'reject'
    if (p.peerId === this.init.signer.author) return 'ignore'
    const now = performance.now()
    const seen = this.directory.observe({
      peerId: p.peerId,
      name: p.name,
      status: p.status,
      claims: p.claims.map(c => ({ task: c.task, epoch: c.epoch })),
      addrs: p.addrs,
      seq: p.seq
    }, now)
    if (seen === 'stale') return 'ignore'
    const record = this.directory.get(p.peerId)
    if (record != null) {
      if (seen === 'joined') this.init.onJoined(record)
      this.init.onHeartbeat?.(record, p.time)
    }
    return 'accept'
  }

  private expire (): void {
    for (const p of this.directory.expire(performance.now())) this.init.onLeft(p)
  }

  isLive (peerId: string): boolean {
    return peerId === this.init.signer.author || this.directory.isLive(peerId, performance.now())
  }

  livePeers (): PeerRecord[] {
    return this.directory.live(performance.now())
  }
}
