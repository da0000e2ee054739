// A simulated daemon for board tests and the fault-schedule checker: it holds
// its own set of entries, runs the core claim protocol on them (its Board,
// LeaseTable and SettleWindow) in the network's virtual time, gossips every
// entry it writes, answers anti-entropy requests, sends presence heartbeats,
// pings a peer now and then for the settle window, and keeps an outbox and an
// inbox of direct messages. Entries are plain BoardEntry objects (no
// signatures; author = node name; id = "<author>/<seq>").
//
// What survives a crash is what agentd keeps on disk: its own entries (an
// append is synced before it is acknowledged, and a synced write carries every
// write before it), the claims it holds, the outbox and the inbox (synced
// too). Entries received from peers since the last sync are lost when the
// crash loses unsynced writes; anti-entropy brings them back.

import type { Board, TaskView } from '../../core/board/board.js'
import {
  ClaimProtocol,
  type ClaimNotice,
  type ClaimProtocolInit,
  type ClaimTicket,
  type ClaimVerdict,
  type MyClaim
} from '../../core/board/claim-protocol.js'
import { DEFAULT_HEARTBEAT_MS, type LeaseTable } from '../../core/board/lease-table.js'
import type { SettleWindow, SettleWindowInit } from '../../core/board/settle.js'
import type { BoardBodies, BoardEntry, BoardKind } from '../../core/board/types.js'
import { heartbeatPolicy, type HeartbeatPolicy } from '../../core/presence/heartbeat-interval.js'
import { SimClaimRunner } from '../engine/claim-runner.js'
import type { SimNetwork } from '../engine/network.js'
import type { Random } from '../engine/random.js'

export type SimMessage =
  | { type: 'entry'; entry: BoardEntry }
  | { type: 'presence'; peer: string; intervalMs: number; time: number }
  | { type: 'sync-request'; have: Record<string, number> }
  | { type: 'sync-batch'; entries: BoardEntry[] }
  | { type: 'ping'; nonce: number }
  | { type: 'pong'; nonce: number }
  | { type: 'dm'; id: string; text: string }
  | { type: 'dm-ack'; id: string }

export interface SimBoardNodeInit {
  name: string
  network: SimNetwork<SimMessage>
  leaseMs?: number
  /** heartbeat period; 0 sends none */
  heartbeatMs?: number
  /** how often one peer is pinged for the settle window; default: the heartbeat period (0: never) */
  pingEveryMs?: number
  settle?: SettleWindowInit
  /** anti-entropy period: sync with one random peer; 0 (default) never */
  syncEveryMs?: number
  /** picks the anti-entropy and ping peers; required when either runs */
  rng?: Random
  /** this node's monotonic clock reads the network's time plus this */
  clockOffsetMs?: number
  /** this node's wall clock (the time its entries carry) reads the network's time plus this */
  wallOffsetMs?: number
  /** how often received entries are synced to disk; 0 (default): at once */
  diskSyncMs?: number
  /** how often the outbox is retried */
  dmRetryMs?: number
  /** builds the claim protocol of each process life (default: the core's); checks plant bugs here */
  createProtocol?: (init: ClaimProtocolInit) => ClaimProtocol
}

/** What the node's agent hears from its daemon. */
export interface SimNodeListener {
  verdict?: (v: ClaimVerdict) => void
  notice?: (n: ClaimNotice) => void
  /** a direct message stored in the inbox (once per message) */
  message?: (from: string, id: string, text: string) => void
  /** a direct message of ours was acknowledged by its recipient */
  delivered?: (to: string, id: string) => void
  /** a new entry was folded in (its own or a peer's) */
  entry?: (e: BoardEntry) => void
}

export class SimBoardNode {
  readonly name: string
  protected readonly network: SimNetwork<SimMessage>
  private readonly heartbeatMs: number
  private readonly pingEveryMs: number
  private readonly policy: HeartbeatPolicy
  private readonly settleInit: SettleWindowInit | undefined
  private readonly syncEveryMs: number
  private readonly rng: Random | undefined
  private readonly clockOffsetMs: number
  private readonly wallOffsetMs: number
  private readonly diskSyncMs: number
  private readonly dmRetryMs: number
  private readonly buildProtocol: (init: ClaimProtocolInit) => ClaimProtocol
  private readonly byAuthor = new Map<string, Map<number, BoardEntry>>()
  /** entries from peers written since the last sync */
  private readonly unsynced = new Set<BoardEntry>()
  protected protocol!: ClaimProtocol
  private runner!: SimClaimRunner
  /** the claims this daemon holds or settles, as its state store keeps them across a crash */
  private savedClaims: MyClaim[] = []
  private readonly listeners: SimNodeListener[] = []
  /** direct messages not yet acknowledged: id -> recipient, text */
  private readonly outbox = new Map<string, { to: string; text: string }>()
  /** "from/id" of every message stored in the inbox */
  private readonly seen = new Set<string>()
  /** pings in flight: nonce -> send time on this node's clock */
  private readonly pings = new Map<number, number>()
  private nextNonce = 0
  private nextMessage = 0
  private maxLamport = 0
  private seq = 0
  private up = true
  private incarnation = 0

  constructor(init: SimBoardNodeInit) {
    this.name = init.name
    this.network = init.network
    this.heartbeatMs = init.heartbeatMs ?? 0
    this.pingEveryMs = init.pingEveryMs ?? this.heartbeatMs
    this.policy = heartbeatPolicy(this.heartbeatMs > 0 ? this.heartbeatMs : DEFAULT_HEARTBEAT_MS, init.leaseMs ?? 15_000)
    this.settleInit = init.settle
    this.syncEveryMs = init.syncEveryMs ?? 0
    this.rng = init.rng
    this.clockOffsetMs = init.clockOffsetMs ?? 0
    this.wallOffsetMs = init.wallOffsetMs ?? 0
    this.diskSyncMs = init.diskSyncMs ?? 0
    this.dmRetryMs = init.dmRetryMs ?? 1_000
    this.buildProtocol = init.createProtocol ?? (i => new ClaimProtocol(i))
    if ((this.syncEveryMs > 0 || this.pingEveryMs > 0) && this.rng === undefined) throw new Error('anti-entropy and pings need an rng')
    this.boot()
    this.network.register(this.name, (msg, from, sentAt) => {
      this.receive(msg, from, sentAt)
    })
    this.startTimers()
  }

  get board(): Board {
    return this.protocol.board
  }

  get leases(): LeaseTable {
    return this.protocol.leases
  }

  get settle(): SettleWindow {
    return this.protocol.settle
  }

  get isUp(): boolean {
    return this.up
  }

  /** This node's monotonic clock. */
  get now(): number {
    return this.network.now + this.clockOffsetMs
  }

  /** This node's wall clock. */
  get wallNow(): number {
    return this.network.now + this.wallOffsetMs
  }

  /** Answers to this node's claims, notices about claims it held, and its direct messages. */
  listen(listener: SimNodeListener): void {
    this.listeners.push(listener)
  }

  /** Claims `task` as agentd does: the answer comes to the listeners after the settle window. Throws like `agency claim`. */
  claim(task: string, scope: readonly string[] = [], opts: { wait?: boolean } = {}): ClaimTicket {
    this.mustBeUp()
    return this.runner.claim(task, scope, opts)
  }

  /** Gives a held task back, with hand-off notes. */
  release(task: string, note = '', branch = ''): TaskView | undefined {
    const held = this.board.checkReleasable(task, this.name)
    this.append('release', { task, epoch: held.epoch, note, branch, to: '' })
    this.runner.forget(task)
    return this.board.task(task, this.now)
  }

  /**
   * An integration at `epoch` was refused by the remote's fence at `remote`
   * (as agentd's BoardService.fenced): later claims go above the fence.
   * Returns whether the fence closed a claim this node holds, which the
   * caller then releases.
   */
  fenced(task: string, epoch: number, remote: { epoch: number; agent: string }): boolean {
    return this.protocol.fencedAt(task, epoch, remote)
  }

  /** Marks a held task done. */
  done(task: string, commit = ''): void {
    const held = this.board.checkDoable(task, this.name)
    this.append('done', { task, epoch: held.epoch, commit, paths: [] })
    this.runner.forget(task)
  }

  /** Writes an entry (lamport = 1 + highest seen), folds it in and gossips it. Returned: it is on disk. */
  append<K extends BoardKind>(kind: K, body: BoardBodies[K]): BoardEntry {
    this.mustBeUp()
    const seq = ++this.seq
    const entry = {
      id: `${this.name}/${seq}`,
      author: this.name,
      seq,
      lamport: this.maxLamport + 1,
      time: this.wallNow,
      kind,
      body
    } as BoardEntry
    // The synced write of an own entry carries every write before it.
    this.unsynced.clear()
    this.hold(entry)
    this.network.broadcast(this.name, { type: 'entry', entry })
    return entry
  }

  /** Queues a direct message (on disk when this returns) and tries to deliver it; returns its id. */
  send(to: string, text: string): string {
    this.mustBeUp()
    const id = `${this.name}#${this.incarnation}.${++this.nextMessage}`
    this.outbox.set(id, { to, text })
    this.network.send(this.name, to, { type: 'dm', id, text })
    return id
  }

  /** Messages waiting for their recipient's acknowledgement. */
  get outboxSize(): number {
    return this.outbox.size
  }

  has(id: string): boolean {
    return this.board.has(id)
  }

  /** All entries held, by author then seq. */
  entries(): BoardEntry[] {
    const out: BoardEntry[] = []
    for (const author of [...this.byAuthor.keys()].sort()) {
      const feed = this.byAuthor.get(author) as Map<number, BoardEntry>
      out.push(...[...feed.values()].sort((a, b) => a.seq - b.seq))
    }
    return out
  }

  /** author -> highest contiguous seq held. */
  versionVector(): Record<string, number> {
    const v: Record<string, number> = {}
    for (const [author, feed] of this.byAuthor) {
      let n = 0
      while (feed.has(n + 1)) n++
      v[author] = n
    }
    return v
  }

  /** Asks `peer` for the entries this node lacks. */
  requestSync(peer: string): void {
    if (this.up) this.network.send(this.name, peer, { type: 'sync-request', have: this.versionVector() })
  }

  /**
   * The process dies: it stops sending and receiving. What is on disk
   * survives; with `loseUnsynced`, the entries received since the last sync
   * do not (a machine that lost power).
   */
  crash(opts: { loseUnsynced?: boolean } = {}): void {
    this.up = false
    this.incarnation++
    this.runner.end()
    this.network.setDown(this.name, true)
    this.pings.clear()
    if (opts.loseUnsynced === true) {
      for (const e of this.unsynced) this.byAuthor.get(e.author)?.delete(e.seq)
      for (const [author, feed] of this.byAuthor) if (feed.size === 0) this.byAuthor.delete(author)
      this.maxLamport = 0
      for (const feed of this.byAuthor.values()) for (const e of feed.values()) this.maxLamport = Math.max(this.maxLamport, e.lamport)
    }
    this.unsynced.clear()
  }

  /**
   * The process starts again: a fresh monotonic clock for leases, the board
   * rebuilt from stored entries, the claims it held checked again, a sync
   * with `syncFrom`, the outbox retried.
   */
  restart(syncFrom: readonly string[] = []): void {
    this.up = true
    this.network.setDown(this.name, false)
    this.boot()
    const now = this.now
    for (const e of this.entries()) this.protocol.apply(e, now)
    this.runner.execute(this.protocol.restore(this.savedClaims, now))
    this.startTimers()
    for (const peer of syncFrom) this.requestSync(peer)
  }

  /** A new process life: a claim protocol started now and the runner that drives it. */
  private boot(): void {
    this.runner?.end()
    this.protocol = this.createProtocol()
    const incarnation = this.incarnation
    this.runner = new SimClaimRunner({
      protocol: this.protocol,
      now: () => this.now,
      at: (at, fn) => {
        this.network.schedule(at - this.now, () => {
          if (this.up && incarnation === this.incarnation) fn()
        })
      },
      write: req => {
        this.append(req.kind, req.body)
      },
      persist: mine => {
        this.savedClaims = mine
      },
      onVerdict: v => {
        for (const l of this.listeners) l.verdict?.(v)
      },
      onNotice: n => {
        for (const l of this.listeners) l.notice?.(n)
      }
    })
  }

  /** The claim protocol of one process life. */
  private createProtocol(): ClaimProtocol {
    return this.buildProtocol({
      me: this.name,
      startedAt: this.now,
      heartbeats: this.policy,
      knownPeers: () => this.byAuthor.size - 1,
      settle: this.settleInit
    })
  }

  protected receive(msg: SimMessage, from: string, _sentAt: number): void {
    if (!this.up) return
    switch (msg.type) {
      case 'entry':
        this.hold(msg.entry)
        break
      case 'presence':
        this.protocol.heard(msg.peer, this.now, msg.intervalMs)
        break
      case 'ping':
        this.network.send(this.name, from, { type: 'pong', nonce: msg.nonce })
        break
      case 'pong': {
        const sent = this.pings.get(msg.nonce)
        if (sent === undefined) break
        this.pings.delete(msg.nonce)
        this.protocol.observeRoundTrip(this.now - sent)
        break
      }
      case 'sync-request': {
        const missing = this.entries().filter(e => e.seq > (msg.have[e.author] ?? 0))
        if (missing.length > 0) this.network.send(this.name, from, { type: 'sync-batch', entries: missing })
        // the exchange runs both ways: ask back when the requester has more
        const mine = this.versionVector()
        if (Object.entries(msg.have).some(([author, seq]) => seq > (mine[author] ?? 0))) this.requestSync(from)
        break
      }
      case 'sync-batch':
        for (const e of msg.entries) this.hold(e)
        break
      case 'dm': {
        // Stored (synced) before the ack: a retry after a lost ack is recognised.
        const key = `${from}/${msg.id}`
        if (!this.seen.has(key)) {
          this.seen.add(key)
          for (const l of this.listeners) l.message?.(from, msg.id, msg.text)
        }
        this.network.send(this.name, from, { type: 'dm-ack', id: msg.id })
        break
      }
      case 'dm-ack':
        if (this.outbox.get(msg.id)?.to === from) {
          this.outbox.delete(msg.id)
          for (const l of this.listeners) l.delivered?.(from, msg.id)
        }
        break
    }
  }

  private hold(entry: BoardEntry): void {
    let feed = this.byAuthor.get(entry.author)
    if (feed === undefined) {
      feed = new Map()
      this.byAuthor.set(entry.author, feed)
    }
    if (feed.has(entry.seq)) return
    feed.set(entry.seq, entry)
    if (entry.author !== this.name && this.diskSyncMs > 0) this.unsynced.add(entry)
    this.maxLamport = Math.max(this.maxLamport, entry.lamport)
    this.runner.execute(this.protocol.apply(entry, this.now))
    for (const l of this.listeners) l.entry?.(entry)
  }

  private mustBeUp(): void {
    if (!this.up) throw new Error(`${this.name} is down`)
  }

  private others(): string[] {
    return this.network.nodes().filter(p => p !== this.name)
  }

  // Periodic work of one incarnation: it stops when the node crashes.
  private startTimers(): void {
    const incarnation = this.incarnation
    const every = (ms: number, fn: () => void): void => {
      if (ms <= 0) return
      const tick = (): void => {
        if (!this.up || incarnation !== this.incarnation) return
        fn()
        this.network.schedule(ms, tick)
      }
      tick()
    }
    every(this.heartbeatMs, () => {
      this.network.broadcast(this.name, { type: 'presence', peer: this.name, intervalMs: this.heartbeatMs, time: this.wallNow })
    })
    every(this.pingEveryMs, () => {
      const peers = this.others()
      if (peers.length === 0 || this.rng === undefined) return
      const nonce = ++this.nextNonce
      this.pings.set(nonce, this.now)
      this.network.send(this.name, this.rng.pick(peers), { type: 'ping', nonce })
    })
    every(this.syncEveryMs, () => {
      const peers = this.others()
      if (peers.length > 0 && this.rng !== undefined) this.requestSync(this.rng.pick(peers))
    })
    every(this.diskSyncMs, () => {
      this.unsynced.clear()
    })
    if (this.outbox.size > 0 || this.dmRetryMs > 0) {
      every(this.dmRetryMs, () => {
        for (const [id, m] of this.outbox) this.network.send(this.name, m.to, { type: 'dm', id, text: m.text })
      })
    }
  }
}
