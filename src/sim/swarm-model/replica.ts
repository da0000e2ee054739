// One simulated agentd's state: the entries it holds (a bitset over the run's
// EntryPool), and the real core folded from them: the claim protocol (its
// Board, LeaseTable through ModelledLiveness, SettleWindow) run by a
// SimClaimRunner, and a view of the findings (SharedFindings). Gossip is
// delivered lazily: before its agent looks at the board, a replica folds in
// every entry that has reached it by now, judged by the link latency, loss,
// partitions and crashes; entries that never arrive are left to anti-entropy.

import type { Board } from '../../core/board/board.js'
import { ClaimProtocol, type ClaimNotice, type ClaimTicket, type ClaimVerdict, type MyClaim } from '../../core/board/claim-protocol.js'
import type { SettleWindow, SettleWindowInit } from '../../core/board/settle.js'
import type { HeartbeatPolicy } from '../../core/presence/heartbeat-interval.js'
import { SimClaimRunner } from '../engine/claim-runner.js'
import type { Scheduler } from '../engine/scheduler.js'
import type { BoardBodies, BoardEntry, BoardKind } from '../../core/board/types.js'
import type { FindingHit, FindingQuery } from '../../core/findings/findings-index.js'
import { Entry, Finding } from '../../gen/agency/v1/log.js'
import { entryBytes } from './cost-model.js'
import type { EntryPool, PoolEntry } from './entry-pool.js'
import { hash32, hashUnit } from '../engine/hash.js'
import { ModelledLiveness, type HeartbeatModel } from './heartbeat-model.js'
import type { PingModel } from './ping-model.js'
import type { LinkLatency } from '../engine/link-latency.js'
import { ReadyIndex } from './ready-index.js'
import type { SharedFindings } from './shared-findings.js'
import type { Topology } from '../engine/topology.js'
import type { Project } from './workload.js'

const LOSS_SALT = 0x4c4f // "LO"
const EMPTY = Buffer.alloc(0)

export interface ReplicaShared {
  seed: number
  pool: EntryPool
  project: Project
  topology: Topology
  latency: LinkLatency
  heartbeats: HeartbeatModel
  /** round trips to peers, for the settle window */
  pings: PingModel
  /** probability that one gossip delivery is lost */
  loss: number
  /** the heartbeat policy leases scale from (agentd's) */
  heartbeatPolicy: HeartbeatPolicy
  settle: SettleWindowInit
  indexOf: (name: string) => number | undefined
  findings: SharedFindings
  /** the run's virtual time: settle windows end on it */
  scheduler: Scheduler
  /** an entry was written (to count its gossip) */
  onWrite?: (e: PoolEntry) => void
}

/** What the replica's agent hears from its daemon. */
export interface ReplicaListener {
  verdict: (v: ClaimVerdict) => void
  notice: (n: ClaimNotice) => void
}

export class Replica {
  readonly index: number
  readonly name: string
  ready!: ReadyIndex
  private protocol!: ClaimProtocol
  private runner!: SimClaimRunner
  private liveness!: ModelledLiveness
  private listener: ReplicaListener | undefined
  /** the claims this daemon holds or settles, as its state store keeps them */
  private savedClaims: MyClaim[] = []
  /** pings sent up to this time have been taken in (or were lost) */
  private pingedUntil = 0
  private readonly shared: ReplicaShared
  private held = new Uint32Array(64)
  private heldCount = 0
  private digestXor = 0
  private readonly authorSeen: Uint8Array
  private authorCount = 0
  /** every pool entry below this index has been folded in or judged lost */
  private cursor = 0
  private seq = 0
  private maxLamport = 0
  /** searchable findings folded in: what this replica's findings searches can answer changes only when it grows */
  findingsFolded = 0

  constructor(index: number, name: string, nodes: number, shared: ReplicaShared, startedAt: number) {
    this.index = index
    this.name = name
    this.shared = shared
    this.authorSeen = new Uint8Array(nodes)
    this.reset(startedAt)
  }

  get board(): Board {
    return this.protocol.board
  }

  get settle(): SettleWindow {
    return this.protocol.settle
  }

  get leases(): ModelledLiveness['leases'] {
    return this.liveness.leases
  }

  /** The agent's ear: answers to its claims and notices about claims it held. */
  listen(listener: ReplicaListener): void {
    this.listener = listener
  }

  /**
   * The agent claims `task`, as `agency claim` does; the answer comes to the
   * listener. The settle window takes in the round trips of the pings
   * answered since the last claim first.
   */
  claim(task: string, now: number): ClaimTicket {
    this.drain(now)
    for (const rtt of this.shared.pings.roundTrips(this.index, this.pingedUntil, now, this.settle.options.maxSamples))
      this.protocol.observeRoundTrip(rtt)
    this.pingedUntil = now
    return this.runner.claim(task)
  }

  /** Whether `task` waits for another agent a hand-off by speed named (agentd's claim --next leaves it out for a while). */
  handedAway(task: string, now: number): boolean {
    this.drain(now)
    return this.protocol.handedAway(task, now)
  }

  /** The agent marked `task` done or released it. */
  forget(task: string): void {
    this.runner.forget(task)
  }

  /** The process dies: nothing it scheduled runs any more (its entries and claims are on disk). */
  crash(): void {
    this.runner.end()
  }

  /** Entries held. */
  get size(): number {
    return this.heldCount
  }

  /** Authors in this replica's version vector. */
  get authors(): number {
    return this.authorCount
  }

  /** Stand-in for the sync protocol's digest: equal digests mean (with overwhelming probability) equal entry sets. */
  get digest(): string {
    return `${this.heldCount}:${this.digestXor}`
  }

  /** Whether this replica's digest is (count, xor); cheaper than comparing digest strings. */
  digestIs(count: number, xor: number): boolean {
    return this.heldCount === count && this.digestXor === xor
  }

  get digestParts(): [number, number] {
    return [this.heldCount, this.digestXor]
  }

  holds(index: number): boolean {
    return ((this.held[index >>> 5] ?? 0) & (1 << (index & 31))) !== 0
  }

  /** Pool indices held, ascending. */
  heldIndices(): number[] {
    const out: number[] = []
    for (let w = 0; w < this.held.length; w++) {
      let bits = this.held[w]
      while (bits !== 0) {
        const b = 31 - Math.clz32(bits & -bits)
        out.push(w * 32 + b)
        bits &= bits - 1
      }
    }
    return out
  }

  /** Indices `other` holds and this replica lacks. */
  lacksFrom(other: Replica): number[] {
    const out: number[] = []
    const words = Math.min(other.held.length, Math.ceil(this.shared.pool.size / 32))
    for (let w = 0; w < words; w++) {
      let bits = (other.held[w] & ~(this.held[w] ?? 0)) >>> 0
      while (bits !== 0) {
        const b = 31 - Math.clz32(bits & -bits)
        out.push(w * 32 + b)
        bits = (bits & (bits - 1)) >>> 0
      }
    }
    return out
  }

  /** Folds in every gossiped entry that has reached this replica by `now`. */
  drain(now: number): void {
    const { pool, latency, topology, loss, seed } = this.shared
    const entries = pool.entries
    let advancing = true
    for (let i = this.cursor; i < entries.length; i++) {
      const e = entries[i]
      if (e.sentAt > now) break
      let resolved = true
      if (!this.holds(i)) {
        const at = e.sentAt + latency.delay(e.author, this.index, i)
        if (at > now) {
          resolved = false
        } else {
          const lost = loss > 0 && hashUnit(seed, i, this.index, LOSS_SALT) < loss
          const cut =
            topology.eventful && !(topology.canReach(e.author, this.index, e.sentAt) && topology.canReach(e.author, this.index, at))
          if (!lost && !cut) this.fold(e, now)
        }
      }
      if (advancing && resolved) this.cursor = i + 1
      else advancing = false
    }
  }

  /** Folds in entries received by anti-entropy at `now`. */
  receive(indices: readonly number[], now: number): void {
    for (const i of indices) if (!this.holds(i)) this.fold(this.shared.pool.entries[i], now)
  }

  /** Writes an entry of a board kind: it is folded in here at once and gossiped from `now`. */
  write<K extends BoardKind>(kind: K, body: BoardBodies[K], now: number, task?: number): PoolEntry {
    const seq = ++this.seq
    const lamport = ++this.maxLamport
    const board = { id: `${this.name}/${seq}`, author: this.name, seq, lamport, time: now, kind, body } as BoardEntry
    const e = this.shared.pool.add({
      author: this.index,
      sentAt: now,
      bytes: entryBytes(kind, body as never, seq, lamport),
      kind,
      board,
      task
    })
    this.shared.onWrite?.(e)
    this.fold(e, now)
    return e
  }

  /**
   * Writes a finding entry. `indexed: false` leaves it out of the shared
   * findings index (it is still written, gossiped and counted): for notes the
   * simulated agents never search, which would only slow every search down.
   */
  writeFinding(finding: Finding, now: number, opts: { indexed?: boolean } = {}): PoolEntry {
    const seq = ++this.seq
    const lamport = ++this.maxLamport
    const body = Buffer.from(Finding.encode(finding).finish())
    const entry = Entry.fromPartial({ author: this.name, seq, lamport, time: now, kind: 'finding', body })
    const stored = { id: `${this.name}/${seq}`, entry, bytes: EMPTY, cursor: 0 }
    const searchable = opts.indexed !== false
    const e = this.shared.pool.add({
      author: this.index,
      sentAt: now,
      bytes: entryBytes('finding', finding, seq, lamport),
      kind: 'finding',
      finding: stored,
      searchable
    })
    if (searchable) this.shared.findings.add(stored, e.index)
    this.shared.onWrite?.(e)
    this.fold(e, now)
    return e
  }

  /** Searches the findings this replica holds (filters only; see SharedFindings). */
  searchFindings(q: Omit<FindingQuery, 'query' | 'limit'>): FindingHit[] {
    return this.shared.findings.search(q, i => this.holds(i))
  }

  /**
   * The process restarts: its entries are on disk, everything else is
   * rebuilt (a fresh monotonic clock for leases, no latency samples); the
   * claims it held are checked against the board, those still settling wait
   * a window again.
   */
  restart(now: number): void {
    this.runner.end()
    const indices = this.heldIndices()
    this.held = new Uint32Array(this.held.length)
    this.heldCount = 0
    this.digestXor = 0
    this.authorSeen.fill(0)
    this.authorCount = 0
    this.reset(now)
    this.receive(indices, now)
    this.runner.execute(this.protocol.restore(this.savedClaims, now))
  }

  private reset(startedAt: number): void {
    const s = this.shared
    this.pingedUntil = startedAt
    this.protocol = new ClaimProtocol({
      me: this.name,
      startedAt,
      heartbeats: s.heartbeatPolicy,
      knownPeers: () => this.authorCount - 1,
      settle: s.settle,
      liveness: leases => {
        this.liveness = new ModelledLiveness({ model: s.heartbeats, self: this.index, leases, indexOf: s.indexOf })
        return this.liveness
      }
    })
    this.runner = new SimClaimRunner({
      protocol: this.protocol,
      now: () => s.scheduler.now,
      at: (at, fn) => {
        s.scheduler.at(at, fn)
      },
      write: req => {
        this.write(req.kind, req.body, s.scheduler.now, s.project.task(req.body.task).index)
      },
      beforeTick: () => {
        this.drain(s.scheduler.now)
      },
      persist: mine => {
        this.savedClaims = mine
      },
      onVerdict: v => {
        this.listener?.verdict(v)
      },
      onNotice: n => {
        this.listener?.notice(n)
      }
    })
    this.ready = new ReadyIndex(this.board, s.project)
  }

  private fold(e: PoolEntry, now: number): void {
    const w = e.index >>> 5
    if (w >= this.held.length) {
      const grown = new Uint32Array(Math.max(w + 1, this.held.length * 2))
      grown.set(this.held)
      this.held = grown
    }
    this.held[w] |= 1 << (e.index & 31)
    this.heldCount++
    this.digestXor = (this.digestXor ^ hash32(this.shared.seed, e.index)) >>> 0
    if (this.authorSeen[e.author] === 0) {
      this.authorSeen[e.author] = 1
      this.authorCount++
    }
    if (e.searchable === true) this.findingsFolded++
    if (e.author === this.index) this.seq = Math.max(this.seq, e.board?.seq ?? e.finding?.entry.seq ?? 0)
    const lamport = e.board?.lamport ?? e.finding?.entry.lamport ?? 0
    if (lamport > this.maxLamport) this.maxLamport = lamport
    if (e.board !== undefined) {
      const out = this.protocol.apply(e.board, now)
      if (e.task !== undefined) this.ready.touch(e.task, e.kind)
      this.runner.execute(out)
    }
  }
}
