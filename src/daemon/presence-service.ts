// Presence: a signed heartbeat every few seconds (less often as the swarm
// grows: see core/presence/heartbeat-interval), and the directory of peers
// built from everyone else's. Liveness uses this process's monotonic clock.
// A peer that goes silent is told of (onLeft) by one timer armed for the
// first deadline in the directory, not by polling: an idle daemon wakes for
// it about once per lease, not every second.
import { performance } from 'node:perf_hooks'
import type { Presence } from '../gen/agency/v1/wire.js'
import { PeerDirectory, type PeerRecord } from '../core/presence/peer-directory.js'
import { signPresence, verifyPresence } from '../core/presence/signed-messages.js'
import type { Signer } from '../core/log/crypto.js'
import type { SwarmGossip, Verdict } from '../mesh/swarm-gossip.js'
import {
  heartbeatIntervalMs,
  heartbeatPolicy,
  liveTimeoutForMs,
  quietIntervalMs,
  type HeartbeatPolicy
} from '../core/presence/heartbeat-interval.js'

export interface PresenceServiceInit {
  signer: Signer
  name: string
  heartbeatMs: number
  liveTimeoutMs: number
  /** heartbeats per second this daemon may receive from the swarm; the interval grows to stay under it */
  heartbeatMaxRate?: number
  /** the addresses peers can dial us at */
  addrs: () => string[]
  /** the claims we hold, carried as leases */
  heldClaims: () => Array<{ task: string; epoch: number }>
  onJoined: (p: PeerRecord) => void
  onLeft: (p: PeerRecord) => void
  /** a heartbeat that changed the directory (not a stale or reordered one) */
  onHeartbeat?: (p: PeerRecord, heartbeat: Presence) => void
  /** a live peer's fresh entry counted as its heartbeat (heardFrom) */
  onSignOfLife?: (p: PeerRecord) => void
  /** the wall clock heartbeats carry (informational: liveness never reads it) */
  wallClock?: () => number
  /** the directory to keep the peers in (default: a new one) */
  directory?: PeerDirectory
  /** a peer whose heartbeats and entries say nothing of its presence (a member the operator removed) */
  excluded?: (peerId: string) => boolean
  /** what heartbeats go out on, once started */
  gossip?: SwarmGossip
}

/** A peer that subscribed is greeted this many times at most, until a heartbeat reaches it. */
const GREET_TRIES = 5
/** Greetings coalesce: one heartbeat for them at most this often. */
const GREET_SPACING_MS = 250

export class PresenceService {
  readonly directory: PeerDirectory
  status = ''
  /** where the harness state heartbeats carry comes from ('' without a harness) */
  private harnessSource: () => string = () => ''
  /** what the harness runs in, carried beside its state ('' without a harness) */
  private sandbox = ''
  private readonly init: PresenceServiceInit
  private gossip?: SwarmGossip
  private heartbeatTimer?: NodeJS.Timeout
  /** when the armed beat is due (monotonic ms) */
  private nextBeatAt = 0
  private expireTimer?: NodeJS.Timeout
  /** when the armed expiry timer fires (monotonic ms; Infinity: none armed) */
  private expireAt = Number.POSITIVE_INFINITY
  private seq = 0
  private stopped = true
  /** beats in a row that held no claim and said what the one before said */
  private quietBeats = 0
  private lastSaid = ''
  /** the claims and what else the last heartbeat said, as beatIfChanged compares them */
  private lastBeat = ''
  /** how many claims the last heartbeat carried */
  private lastHeld = 0
  readonly policy: HeartbeatPolicy
  /** peers that subscribed lately and have not had a heartbeat yet -> greetings left (greet) */
  private readonly greeting = new Map<string, number>()
  private greetTimer?: NodeJS.Timeout
  private lastGreetAt = Number.NEGATIVE_INFINITY

  constructor(init: PresenceServiceInit) {
    this.init = init
    this.policy = heartbeatPolicy(init.heartbeatMs, init.liveTimeoutMs, init.heartbeatMaxRate)
    this.directory = init.directory ?? new PeerDirectory({ liveTimeoutMs: init.liveTimeoutMs })
  }

  /** The state of the agent beside the daemon, carried in every heartbeat ('' without a harness). */
  harnessState(): string {
    return this.harnessSource()
  }

  /** What the agent beside the daemon runs in, carried in every heartbeat ('' without a harness). */
  harnessSandbox(): string {
    return this.sandbox
  }

  /**
   * From now on heartbeats carry the harness state `state` returns and what
   * the harness runs in (the harness is built after presence, which it updates).
   */
  reportHarness(state: () => string, sandbox = ''): void {
    this.harnessSource = state
    this.sandbox = sandbox
  }

  start(gossip: SwarmGossip | undefined = this.init.gossip): void {
    this.gossip = gossip
    this.stopped = false
    this.scheduleBeat(0)
    this.armExpiry()
  }

  stop(): void {
    this.stopped = true
    clearTimeout(this.greetTimer)
    this.greetTimer = undefined
    this.greeting.clear()
    clearTimeout(this.heartbeatTimer)
    clearTimeout(this.expireTimer)
    this.expireTimer = undefined
    this.expireAt = Number.POSITIVE_INFINITY
  }

  /** The interval for the number of live peers this daemon sees (before quiet beats stretch it). */
  intervalMs(): number {
    return heartbeatIntervalMs(this.livePeers().length, this.policy)
  }

  /** The interval this daemon's last heartbeat announced: longer while it holds nothing and has nothing new to say. */
  get announcedIntervalMs(): number {
    return quietIntervalMs(this.intervalMs(), this.quietBeats, this.policy)
  }

  // One timer, re-armed after every beat with the interval for the swarm's
  // size now, less up to a tenth at random so that beats do not fall into step.
  private scheduleBeat(delayMs: number): void {
    clearTimeout(this.heartbeatTimer)
    this.nextBeatAt = performance.now() + delayMs
    this.heartbeatTimer = setTimeout(() => {
      if (this.stopped) return
      this.beat().catch(() => {})
    }, delayMs)
  }

  /**
   * Sends a heartbeat now if it would say something the last one did not:
   * other claims held, another status line, address or harness state. The
   * board reports a change of its claims more often than the claims change
   * (a claim that settles is held as before), and every heartbeat costs each
   * peer a signature check, so an unchanged one waits for its turn.
   *
   * A daemon whose last heartbeat already held a claim, and that still holds
   * one, has its lease at the swarm's interval at every peer: a change in
   * which claims it holds (and nothing else) goes out with its next beat,
   * due within that interval. Its lease is its liveness, not the list (the
   * claim's own entry tells the swarm of the claim), and in a busy swarm
   * these extra beats were a fifth of the heartbeats. A daemon that was quiet
   * and now holds a claim (and has nothing else new to say) has its next beat
   * brought forward to within the swarm's interval, at a random point of its
   * second half, rather than beating at once: the swarm's claims come in
   * bursts (a plan lands and every idle agent claims), and one extra beat per
   * claim doubled a burst's gossip (each verified and forwarded by every
   * peer) while the claims settled. Until that beat its peers keep the
   * longer lease of its last quiet beat, never a shorter one, so no claim of
   * it is taken over early; a crash in that interval is noticed within the
   * quiet lease instead of the swarm's.
   */
  async beatIfChanged(): Promise<void> {
    const now = this.saying()
    if (now.beat === this.lastBeat) return
    if (now.claims.length > 0 && now.said === this.lastSaid) {
      if (this.lastHeld === 0) this.beatWithin(this.intervalMs())
      return
    }
    await this.beat()
  }

  /** Brings the next beat forward to within `ms` (in its second half, at random), unless it is due sooner. */
  private beatWithin(ms: number): void {
    if (this.stopped || this.gossip == null) return
    const delay = Math.round(ms * (0.5 + Math.random() * 0.5))
    if (this.nextBeatAt - performance.now() > delay) this.scheduleBeat(delay)
  }

  private saying(): { claims: Array<{ task: string; epoch: number }>; addrs: string[]; harness: string; said: string; beat: string } {
    const claims = this.init.heldClaims()
    const addrs = this.init.addrs()
    const harness = this.harnessState()
    const said = JSON.stringify([this.init.name, this.status, addrs, harness, this.sandbox])
    return { claims, addrs, harness, said, beat: JSON.stringify([claims.map(c => [c.task, c.epoch]), said]) }
  }

  /**
   * A peer subscribed to the swarm's topic (a new connection, once gossipsub
   * knows the peer's topics): a heartbeat soon tells it who this daemon is
   * and where to dial it, and through it the swarm. Beating at the
   * connection itself reached nobody new (gossipsub had not learned the
   * peer's topics yet): a hub that trims its connections and the newcomers
   * that redial it then never heard of each other, and every newcomer's only
   * peer stayed the hub. Greetings coalesce into one beat at most every
   * GREET_SPACING_MS; a peer the beat did not reach (our stream to it not
   * open yet) is greeted again, GREET_TRIES times at most.
   */
  greet(peer: string): void {
    if (this.gossip == null || this.stopped) return
    this.greeting.set(peer, GREET_TRIES)
    this.scheduleGreeting()
  }

  private scheduleGreeting(): void {
    if (this.greetTimer !== undefined || this.stopped) return
    const wait = Math.max(0, this.lastGreetAt + GREET_SPACING_MS - performance.now())
    this.greetTimer = setTimeout(() => {
      this.greetTimer = undefined
      this.sendGreeting().catch(() => {})
    }, wait)
  }

  private async sendGreeting(): Promise<void> {
    if (this.stopped || this.greeting.size === 0) return
    this.lastGreetAt = performance.now()
    const reached = new Set(await this.beat())
    for (const [peer, left] of this.greeting) {
      if (reached.has(peer) || left <= 1) this.greeting.delete(peer)
      else this.greeting.set(peer, left - 1)
    }
    if (this.greeting.size > 0) this.scheduleGreeting()
  }

  /** Sends a heartbeat now (also used when the status line or claims change); the peers it was sent to. */
  async beat(): Promise<string[]> {
    if (this.gossip == null || this.stopped) return []
    const wall = this.init.wallClock?.() ?? Date.now()
    this.seq = Math.max(this.seq + 1, wall)
    const { claims, addrs, harness, said, beat } = this.saying()
    // An idle swarm's heartbeats are most of its traffic and of each daemon's
    // idle CPU: one that holds nothing and has nothing new to say slows down.
    this.quietBeats = claims.length === 0 && said === this.lastSaid ? this.quietBeats + 1 : 0
    this.lastSaid = said
    this.lastBeat = beat
    this.lastHeld = claims.length
    const intervalMs = this.announcedIntervalMs
    // The next beat is armed before this one is sent: a beat that fails to
    // publish (no peers yet) must not stop the heartbeat.
    this.scheduleBeat(Math.round(intervalMs * (0.9 + Math.random() * 0.1)))
    const p = signPresence(this.init.signer, {
      name: this.init.name,
      status: this.status,
      claims,
      time: wall,
      seq: this.seq,
      addrs,
      intervalMs,
      harness,
      sandbox: this.sandbox
    })
    return await this.gossip.publishPresence(p)
  }

  /** Gossip handler for a received heartbeat. */
  receive(p: Presence, _from: string): Verdict {
    if (!verifyPresence(p)) return 'reject'
    if (p.peerId === this.init.signer.author || this.init.excluded?.(p.peerId) === true) return 'ignore'
    const now = performance.now()
    const seen = this.directory.observe(
      {
        peerId: p.peerId,
        name: p.name,
        status: p.status,
        claims: p.claims.map(c => ({ task: c.task, epoch: c.epoch })),
        addrs: p.addrs,
        seq: p.seq,
        harness: p.harness,
        sandbox: p.sandbox,
        timeoutMs: liveTimeoutForMs(p.intervalMs, this.policy),
        intervalMs: p.intervalMs
      },
      now
    )
    if (seen === 'stale') return 'ignore'
    const record = this.directory.get(p.peerId)
    this.armExpiry()
    if (record != null) {
      if (seen === 'joined') this.init.onJoined(record)
      this.init.onHeartbeat?.(record, p)
    }
    return 'accept'
  }

  /**
   * A peer's entry came by gossip, new here: signed by it and published
   * just now, it says the peer is up as its heartbeat would, and the peer
   * postpones its next heartbeat (published). Only a peer that is live
   * already is refreshed: a heartbeat first says who it is and how often
   * it beats. An entry relayed late keeps its author live for one timeout
   * at most, at a peer that lacked it.
   */
  heardFrom(author: string): void {
    if (author === this.init.signer.author || this.init.excluded?.(author) === true) return
    const record = this.directory.touch(author, performance.now())
    if (record != null) this.init.onSignOfLife?.(record)
  }

  /**
   * This daemon published an entry of its own: its peers count it as a
   * heartbeat (heardFrom), so the next beat is due an interval from now.
   * In a busy swarm a holder's beats at the swarm's interval were most of
   * the messages; each entry it writes now stands in for one.
   */
  published(): void {
    if (this.gossip == null || this.stopped || this.lastBeat === '') return
    this.scheduleBeat(Math.round(this.announcedIntervalMs * (0.9 + Math.random() * 0.1)))
  }

  /** Drops a peer from the directory at once (a member the operator removed), telling onLeft if it was there. */
  forget(peerId: string): void {
    const record = this.directory.forget(peerId)
    if (record !== undefined) this.init.onLeft(record)
  }

  private expire(): void {
    for (const p of this.directory.expire(performance.now())) this.init.onLeft(p)
  }

  /**
   * Arms the expiry timer for the directory's first deadline, unless it is
   * armed for that or sooner (a heartbeat only moves a deadline later, or adds
   * one: when it fires early it expires nobody and arms for the next).
   */
  private armExpiry(): void {
    if (this.stopped) return
    const next = this.directory.nextExpiry()
    if (next === undefined || (this.expireTimer !== undefined && this.expireAt <= next)) return
    clearTimeout(this.expireTimer)
    this.expireAt = next
    // A peer is live through its deadline: the timer fires just past it.
    this.expireTimer = setTimeout(
      () => {
        this.expireTimer = undefined
        this.expireAt = Number.POSITIVE_INFINITY
        if (this.stopped) return
        this.expire()
        this.armExpiry()
      },
      Math.max(0, next - performance.now()) + 1
    )
  }

  isLive(peerId: string): boolean {
    return peerId === this.init.signer.author || this.directory.isLive(peerId, performance.now())
  }

  livePeers(): PeerRecord[] {
    return this.directory.live(performance.now())
  }
}
