// Who is out there and who is live. A peer is live while its heartbeats
// arrive: liveness is measured on the receiver's monotonic clock from the
// moment of receipt, never from the sender's wall clock, for as long as the
// peer's last heartbeat said its next one may take. Pure: the caller passes
// the time in.

export interface PeerRecord {
  peerId: string
  name: string
  status: string
  claims: Array<{ task: string; epoch: number }>
  addrs: string[]
  /** receiver's monotonic time of the last heartbeat */
  lastSeen: number
  /** sender's heartbeat counter, to drop reordered heartbeats */
  seq: number
  /** the state of the peer's agent harness, as its heartbeat says ('' or absent: none) */
  harness?: string
  /** what the peer's agent runs in (bwrap | none), as its heartbeat says ('' or absent: no harness) */
  sandbox?: string
  /** how long after lastSeen the peer stays live (from the interval it announced) */
  timeoutMs: number
  /** the interval its last heartbeat announced (absent: not said) */
  intervalMs?: number
  live: boolean
}

export interface PresenceUpdate {
  peerId: string
  name: string
  status: string
  claims: Array<{ task: string; epoch: number }>
  addrs: string[]
  seq: number
  harness?: string
  sandbox?: string
  /** how long to wait for its next heartbeat; default: the directory's liveTimeoutMs */
  timeoutMs?: number
  /** the interval the heartbeat announced */
  intervalMs?: number
}

export interface PeerDirectoryInit {
  /** a peer whose last heartbeat is older than this is not live */
  liveTimeoutMs: number
}

export class PeerDirectory {
  private readonly peers = new Map<string, PeerRecord>()
  readonly liveTimeoutMs: number

  constructor(init: PeerDirectoryInit) {
    this.liveTimeoutMs = init.liveTimeoutMs
  }

  /** Records a heartbeat. Returns 'joined' when the peer was not live before. */
  observe(update: PresenceUpdate, now: number): 'joined' | 'refreshed' | 'stale' {
    const known = this.peers.get(update.peerId)
    if (known != null && update.seq <= known.seq && this.isLive(update.peerId, now)) return 'stale'
    const wasLive = known != null && this.isLive(update.peerId, now)
    this.peers.set(update.peerId, { ...update, timeoutMs: update.timeoutMs ?? this.liveTimeoutMs, lastSeen: now, live: true })
    return wasLive ? 'refreshed' : 'joined'
  }

  /**
   * A sign of life from a live peer other than its heartbeat (a fresh entry
   * it signed): it stays live as if its heartbeat had come now. A peer not
   * live stays so: only a heartbeat brings it back, with what it says.
   * Returns the refreshed record.
   */
  touch(peerId: string, now: number): PeerRecord | undefined {
    const p = this.peers.get(peerId)
    if (p == null || !this.isLive(peerId, now)) return undefined
    p.lastSeen = now
    return p
  }

  isLive(peerId: string, now: number): boolean {
    const p = this.peers.get(peerId)
    return p != null && now - p.lastSeen <= p.timeoutMs
  }

  /** Marks peers whose heartbeats stopped; returns those that just left. */
  expire(now: number): PeerRecord[] {
    const left: PeerRecord[] = []
    for (const p of this.peers.values()) {
      const live = now - p.lastSeen <= p.timeoutMs
      if (p.live && !live) left.push(p)
      p.live = live
    }
    return left
  }

  /** When the first peer still marked live stops being live (expire then returns it), or undefined if none is marked live. */
  nextExpiry(): number | undefined {
    let next: number | undefined
    for (const p of this.peers.values()) {
      if (!p.live) continue
      const at = p.lastSeen + p.timeoutMs
      if (next === undefined || at < next) next = at
    }
    return next
  }

  /** Drops a peer from the directory (a member the operator removed); its record, if it had one. */
  forget(peerId: string): PeerRecord | undefined {
    const record = this.peers.get(peerId)
    this.peers.delete(peerId)
    return record
  }

  get(peerId: string): PeerRecord | undefined {
    return this.peers.get(peerId)
  }

  /** Resolves a peer id or a name (exact) to a known peer. */
  resolve(idOrName: string): PeerRecord | undefined {
    const byId = this.peers.get(idOrName)
    if (byId != null) return byId
    let found: PeerRecord | undefined
    for (const p of this.peers.values()) {
      if (p.name === idOrName && (found == null || p.lastSeen > found.lastSeen)) found = p
    }
    return found
  }

  all(): PeerRecord[] {
    return [...this.peers.values()]
  }

  live(now: number): PeerRecord[] {
    return this.all().filter(p => this.isLive(p.peerId, now))
  }
}
