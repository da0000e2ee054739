// A simulated daemon for board tests: it holds its own set of entries and its
// own Board, gossips every entry it writes, answers anti-entropy requests,
// sends presence heartbeats and keeps a LeaseTable on the network's virtual
// clock. Entries are plain BoardEntry objects (no signatures; author = node
// name; id = "<author>/<seq>").

import { Board } from '../core/board/board.js'
import { LeaseTable } from '../core/board/lease-table.js'
import { SettleWindow, type SettleWindowInit } from '../core/board/settle.js'
import type { BoardBodies, BoardEntry, BoardKind } from '../core/board/types.js'
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

export class SimBoardNode {
  readonly name: string
  readonly settle: SettleWindow
  private readonly network: SimNetwork<SimMessage>
  private readonly leaseMs: number | undefined
  private readonly heartbeatMs: number
  private readonly syncEveryMs: number
  private readonly rng: Random | undefined
  private readonly byAuthor = new Map<string, Map<number, BoardEntry>>()
  private leaseTable: LeaseTable
  private currentBoard: Board
  private maxLamport = 0
  private seq = 0
  private up = true
  private incarnation = 0

  constructor (init: SimBoardNodeInit) {
    this.name = init.name
    this.network = init.network
    this.leaseMs = init.leaseMs
    this.heartbeatMs = init.heartbeatMs ?? 0
    this.syncEveryMs = init.syncEveryMs ?? 0
    this.rng = init.rng
    if (this.syncEveryMs > 0 && this.rng === undefined) throw new Error('syncEveryMs needs an rng')
    this.settle = new SettleWindow(init.settle)
    this.leaseTable = new LeaseTable({ self: this.name, leaseMs: this.leaseMs, startedAt: this.network.now })
    this.currentBoard = new Board({ liveness: this.leaseTable })
    this.network.register(this.name, (msg, from, sentAt) => this.receive(msg, from, sentAt))
    this.startTimers()
  }

  get board (): Board {
    return this.currentBoard
  }

  get leases (): LeaseTable {
    return this.leaseTable
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
    return this.currentBoard.has(id)
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
    this.network.setDown(this.name, true)
  }

  /** The process starts again: a fresh monotonic clock for leases, the board rebuilt from stored entries, a sync with `syncFrom`. */
  restart (syncFrom: readonly string[] = []): void {
    this.up = true
    this.network.setDown(this.name, false)
    this.leaseTable = new LeaseTable({ self: this.name, leaseMs: this.leaseMs, startedAt: this.network.now })
    this.currentBoard = new Board({ liveness: this.leaseTable })
    for (const e of this.entries()) this.currentBoard.apply(e)
    this.startTimers()
    for (const peer of syncFrom) this.requestSync(peer)
  }

  private receive (msg: SimMessage, from: string, sentAt: number): void {
    if (!this.up) return
    const now = this.network.now
    switch (msg.type) {
      case 'entry':
        this.settle.addSample(now - sentAt)
        this.hold(msg.entry)
        break
      case 'presence':
        this.settle.addSample(now - sentAt)
        this.leaseTable.heartbeat(msg.peer, now)
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
    this.currentBoard.apply(entry)
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
