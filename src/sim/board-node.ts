// A simulated daemon for board tests: it holds its own set of entries, runs
// the core claim protocol on them (its Board, LeaseTable and SettleWindow) in
// the network's virtual time, gossips every entry it writes, answers
// anti-entropy requests and sends presence heartbeats. Entries are plain
// BoardEntry objects (no signatures; author = node name; id = "<author>/<seq>").

import type { Board } from '../core/board/board.js'
import { ClaimProtocol, type ClaimNotice, type ClaimTicket, type ClaimVerdict, type MyClaim } from '../core/board/claim-protocol.js'
import { DEFAULT_HEARTBEAT_MS, type LeaseTable } from '../core/board/lease-table.js'
import type { SettleWindow, SettleWindowInit } from '../core/board/settle.js'
import type { BoardBodies, BoardEntry, BoardKind } from '../core/board/types.js'
import type { TaskView } from '../core/board/board.js'
import { heartbeatPolicy, type HeartbeatPolicy } from '../core/presence/heartbeat-interval.js'
import { SimClaimRunner } from './claim-runner.js'
import type { SimNetwork } from './network.js'
import type { Random } from './random.js'

export type SimMessage =
  | { type: 'entry', entry: BoardEntry }
  | { type: 'presence', peer: string }
  | { type: 'sync-request', have: Record<string, number> }
  | { type: 'sync-batch', entries: BoardEntry[] }

export interface SimBoardNodeInit {
  name: string
  network: SimNetwork<SimMessage>
  leaseMs?: number
  /** heartbeat period; 0 sends none */
  heartbeatMs?: number
  settle?: SettleWindowInit
  /** anti-entropy period: sync with one random peer; 0 (default) never */
  syncEveryMs?: number
  /** picks the anti-entropy peer; required when syncEveryMs > 0 */
  rng?: Random
}

/** What the node's agent hears from its daemon. */
export interface SimNodeListener {
  verdict?: (v: ClaimVerdict) => void
  notice?: (n: ClaimNotice) => void
}

export class SimBoardNode {
  readonly name: string
  private readonly network: SimNetwork<SimMessage>
  private readonly heartbeatMs: number
  private readonly policy: HeartbeatPolicy
  private readonly settleInit: SettleWindowInit | undefined
  private readonly syncEveryMs: number
  private readonly rng: Random | undefined
  private readonly byAuthor = new Map<string, Map<number, BoardEntry>>()
  private protocol!: ClaimProtocol
  private runner!: SimClaimRunner
  /** the claims this daemon holds or settles, as its state store keeps them across a crash */
  private savedClaims: MyClaim[] = []
  private readonly listeners: SimNodeListener[] = []
  private maxLamport = 0
  private seq = 0
  private up = true
  private incarnation = 0

  constructor (init: SimBoardNodeInit) {
    this.name = init.name
    this.network = init.network
    this.heartbeatMs = init.heartbeatMs ?? 0
    this.policy = heartbeatPolicy(this.heartbeatMs > 0 ? this.heartbeatMs : DEFAULT_HEARTBEAT_MS, init.leaseMs ?? 15_000)
    this.settleInit = init.settle
    this.syncEveryMs = init.syncEveryMs ?? 0
    this.rng = init.rng
    if (this.syncEveryMs > 0 && this.rng === undefined) throw new Error('syncEveryMs needs an rng')
    this.boot()
    this.network.register(this.name, (msg, from, sentAt) => this.receive(msg, from, sentAt))
    this.startTimers()
  }

  get board (): Board {
    return this.protocol.board
  }

  get leases (): LeaseTable {
    return this.protocol.leases
  }

  get settle (): SettleWindow {
    return this.protocol.settle
  }

  /** Answers to this node's claims and notices about claims it held. */
  listen (listener: SimNodeListener): void {
    this.listeners.push(listener)
  }

  /** Claims `task` as agentd does: the answer comes to the listeners after the settle window. Throws like `agency claim`. */
  claim (task: string, scope: readonly string[] = [], opts: { wait?: boolean } = {}): ClaimTicket {
    if (!this.up) throw new Error(`${this.name} is down`)
    return this.runner.claim(task, scope, opts)
  }

  /** Gives a held task back, with hand-off notes. */
  release (task: string, note = '', branch = ''): TaskView | undefined {
    const held = this.board.checkReleasable(task, this.name)
    this.append('release', { task, epoch: held.epoch, note, branch })
    this.runner.forget(task)
    return this.board.task(task, this.now)
  }

  /** Marks a held task done. */
  done (task: string, commit = ''): void {
    const held = this.board.checkDoable(task, this.name)
    this.append('done', { task, epoch: held.epoch, commit, paths: [] })
    this.runner.forget(task)
  }

  get isUp (): boolean {
    return this.up
  }

  get now (): number {
    return this.network.now
  }

  /** Writes an entry (lamport = 1 + highest seen), folds it in and gossips it. */
  append<K extends BoardKind>(kind: K, body: BoardBodies[K]): BoardEntry {
    if (!this.up) throw new Error(`${this.name} is down`)
    const seq = ++this.seq
    const entry = { id: `${this.name}/${seq}`, author: this.name, seq, lamport: this.maxLamport + 1, time: this.network.now, kind, body } as BoardEntry
    this.hold(entry)
    this.network.broadcast(this.name, { type: 'entry', entry })
    return entry
  }

  has (id: string): boolean {
    return this.board.has(id)
  }

  /** All entries held, by author then seq. */
  entries (): BoardEntry[] {
    const out: BoardEntry[] = []
    for (const author of [...this.byAuthor.keys()].sort()) {
      const feed = this.byAuthor.get(author) as Map<number, BoardEntry>
      out.push(...[...feed.values()].sort((a, b) => a.seq - b.seq))
    }
    return out
  }

  /** author -> highest contiguous seq held. */
  versionVector (): Record<string, number> {
    const v: Record<string, number> = {}
    for (const [author, feed] of this.byAuthor) {
      let n = 0
      while (feed.has(n + 1)) n++
      v[author] = n
    }
    return v
  }

  /** Asks `peer` for the entries this node lacks. */
  requestSync (peer: string): void {
    if (this.up) this.network.send(this.name, peer, { type: 'sync-request', have: this.versionVector() })
  }

  /** The process dies: it stops sending and receiving; its entries survive (they are on disk). */
  crash (): void {
    this.up = false
    this.incarnation++
    this.runner.end()
    this.network.setDown(this.name, true)
  }

  /**
   * The process starts again: a fresh monotonic clock for leases, the board
   * rebuilt from stored entries, the claims it held checked again, a sync
   * with `syncFrom`.
   */
  restart (syncFrom: readonly string[] = []): void {
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
  private boot (): void {
    this.runner?.end()
    this.protocol = new ClaimProtocol({
      me: this.name,
      startedAt: this.now,
      heartbeats: this.policy,
      knownPeers: () => this.byAuthor.size - 1,
      settle: this.settleInit
    })
    const incarnation = this.incarnation
    this.runner = new SimClaimRunner({
      protocol: this.protocol,
      now: () => this.now,
      at: (at, fn) => { this.network.schedule(at - this.now, () => { if (this.up && incarnation === this.incarnation) fn() }) },
      write: req => { this.append(req.kind, req.body) },
      persist: mine => { this.savedClaims = mine },
      onVerdict: v => { for (const l of this.listeners) l.verdict?.(v) },
      onNotice: n => { for (const l of this.listeners) l.notice?.(n) }
    })
  }

  private receive (msg: SimMessage, from: string, sentAt: number): void {
    if (!this.up) return
    const now = this.network.now
    switch (msg.type) {
      case 'entry':
        this.protocol.observeLatency(now - sentAt)
        this.hold(msg.entry)
        break
      case 'presence':
        this.protocol.observeLatency(now - sentAt)
        this.protocol.heard(msg.peer, now, this.heartbeatMs)
        break
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
    }
  }

  private hold (entry: BoardEntry): void {
    let feed = this.byAuthor.get(entry.author)
    if (feed === undefined) {
      feed = new Map()
      this.byAuthor.set(entry.author, feed)
    }
    if (feed.has(entry.seq)) return
    feed.set(entry.seq, entry)
    this.maxLamport = Math.max(this.maxLamport, entry.lamport)
    this.runner.execute(this.protocol.apply(entry, this.now))
  }

  // Periodic work of one incarnation: it stops when the node crashes.
  private startTimers (): void {
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
    every(this.heartbeatMs, () => this.network.broadcast(this.name, { type: 'presence', peer: this.name }))
    every(this.syncEveryMs, () => {
      const peers = this.network.nodes().filter(p => p !== this.name)
      if (peers.length > 0 && this.rng !== undefined) this.requestSync(this.rng.pick(peers))
    })
  }
}
