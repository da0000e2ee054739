// This agent's dealings with its peers: who is there (from presence and the
// open connections), its status line, direct messages and announcements.
import { randomUUID } from 'node:crypto'
import { performance } from 'node:perf_hooks'
import type { MeshLibp2p } from '../mesh/node.js'
import type { SwarmGossip } from '../mesh/swarm-gossip.js'
import { utf8Length } from '../mesh/direct-messages.js'
import { MAX_ANNOUNCE_TEXT_BYTES } from '../mesh/constants.js'
import type { Signer } from '../core/log/crypto.js'
import { signAnnouncement } from '../core/presence/signed-messages.js'
import { InvalidArgumentError, TooLargeError } from '../core/errors.js'
import type { PeerRecord } from '../core/presence/peer-directory.js'
import type { Metrics } from '../metrics/metrics.js'
import type { InboxRecord, MessageStore } from '../store/index.js'
import type { PresenceService } from './presence-service.js'
import type { MessageOutbox, OutgoingMessage } from './message-outbox.js'

export interface PeerView {
  peerId: string
  name: string
  status: string
  live: boolean
  connected: boolean
  lastSeenMsAgo: number
  addrs: string[]
  claims: Array<{ task: string; epoch: number }>
  /** its agent's harness state, as its heartbeat says ('': none) */
  harness: string
  /** what its agent runs in: bwrap | none ('': no harness) */
  sandbox: string
}

/** The longest status line a heartbeat carries, in bytes. */
const MAX_STATUS_BYTES = 1024

export interface PeerContactComponents {
  me: string
  name: string
  node: MeshLibp2p
  presence: PresenceService
  gossip: SwarmGossip
  outbox: MessageOutbox
  messages: MessageStore
  signer: Signer
  metrics: Metrics
  /** the claims this daemon holds, for its own view */
  held: () => Array<{ task: string; epoch: number }>
  wallClock: () => number
}

export class PeerContact {
  constructor(private readonly c: PeerContactComponents) {}

  listenAddrs(): string[] {
    return addressesOf(this.c.node)
  }

  peers(includeOffline = true): PeerView[] {
    const now = performance.now()
    const connected = new Set(this.c.node.getPeers().map(p => p.toString()))
    return this.c.presence.directory
      .all()
      .map(p => this.peerView(p, now, connected))
      .filter(p => includeOffline || p.live)
      .sort((a, b) => a.name.localeCompare(b.name) || a.peerId.localeCompare(b.peerId))
  }

  selfView(): PeerView {
    const { me, name, presence } = this.c
    return {
      peerId: me,
      name,
      status: presence.status,
      live: true,
      connected: true,
      lastSeenMsAgo: 0,
      addrs: this.listenAddrs(),
      claims: this.c.held(),
      harness: presence.harnessState(),
      sandbox: presence.harnessSandbox()
    }
  }

  private peerView(p: PeerRecord, now: number, connected: Set<string>): PeerView {
    return {
      peerId: p.peerId,
      name: p.name,
      status: p.status,
      live: this.c.presence.directory.isLive(p.peerId, now),
      connected: connected.has(p.peerId),
      lastSeenMsAgo: now - p.lastSeen,
      addrs: p.addrs,
      claims: p.claims,
      harness: p.harness ?? '',
      sandbox: p.sandbox ?? ''
    }
  }

  /** The agent's status line, carried in heartbeats: a change goes out at once. */
  async setStatusLine(status: string): Promise<void> {
    if (utf8Length(status) > MAX_STATUS_BYTES) throw new TooLargeError('status line', utf8Length(status), MAX_STATUS_BYTES)
    this.c.presence.status = status
    await this.c.presence.beat()
  }

  async sendMessage(req: OutgoingMessage): Promise<{ id: string; to: string; thread: string }> {
    return await this.c.outbox.send(req)
  }

  async readMessages(after: number, limit: number): Promise<InboxRecord[]> {
    return await this.c.messages.inboxAfter(after, limit)
  }

  async announce(text: string): Promise<string> {
    const size = utf8Length(text)
    if (size > MAX_ANNOUNCE_TEXT_BYTES) throw new TooLargeError('announcement', size, MAX_ANNOUNCE_TEXT_BYTES)
    if (text.length === 0) throw new InvalidArgumentError('announcement text is empty')
    const a = signAnnouncement(this.c.signer, { id: randomUUID(), name: this.c.name, text, time: this.c.wallClock() })
    await this.c.gossip.publishAnnouncement(a)
    this.c.metrics.announcementsSent.inc()
    return a.id
  }
}

export function addressesOf(node: MeshLibp2p): string[] {
  return node.getMultiaddrs().map(a => a.toString())
}
