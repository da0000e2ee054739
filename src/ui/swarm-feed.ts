// The dashboard's one subscription to the daemon: accepted log entries, the
// daemon's events (peers joining and leaving, announcements, messages) and,
// while a page is open, a look at presence once a second (heartbeats raise no
// event). What changed is coalesced into notices, at most one per interval,
// that name the views to refresh and carry a few lines of activity: never the
// state itself, which pages fetch, a page at a time, from the folds.
import type { LogService } from '../daemon/log-service.js'
import type { PresenceService } from '../daemon/presence-service.js'
import type { EventBus } from '../daemon/event-bus.js'
import type { Event } from '../gen/agency/v1/api.js'
import type { StoredEntry } from '../core/log/ingest-result.js'
import { decodeBody, isKnownKind } from '../core/log/kinds.js'
import { clip } from './paging.js'

export const TOPICS = ['summary', 'agents', 'board', 'findings', 'messages', 'runs'] as const
export type Topic = (typeof TOPICS)[number]

/** One line of the live activity ticker. Text is a peer's, clipped; the page shows it as text. */
export interface Activity {
  time: number
  /**
   * an entry kind (claim, release, done, finding, integration, test_run, task, goal) or an event (announcement, message, peer_joined,
   * peer_left)
   */
  kind: string
  peerId: string
  name: string
  task?: string
  epoch?: number
  /** finding kind, integration result, test counts */
  detail?: string
  text?: string
}

export interface FeedNotice {
  seq: number
  topics: Topic[]
  activity: Activity[]
  /** activity lines left out of this notice */
  more: number
}

export interface AnnouncementItem {
  id: string
  from: string
  name: string
  text: string
  /** the sender's clock */
  time: number
  receivedAt: number
}

/** What the feed watches of the daemon. */
export interface FeedSource {
  peerId: string
  name: string
  logService: Pick<LogService, 'onAccepted'>
  events: Pick<EventBus, 'subscribe'>
  presence: Pick<PresenceService, 'directory' | 'status' | 'harnessState' | 'isLive'>
}

export interface SwarmFeedInit {
  daemon: FeedSource
  /** the shortest time between two notices (default 500 ms) */
  intervalMs?: number
  /** how often presence is compared while a page listens (default 1000 ms) */
  presencePollMs?: number
  /** announcements kept for the page (default 1000): the daemon keeps none */
  announcementsKept?: number
}

const MAX_ACTIVITY = 20
const ENTRY_TOPICS: Record<string, Topic[]> = {
  goal: ['board'],
  task: ['board'],
  claim: ['board', 'agents'],
  release: ['board', 'agents'],
  done: ['board', 'agents'],
  finding: ['findings'],
  integration: ['runs'],
  test_run: ['runs'],
  review_request: ['board'],
  verdict: ['board']
}

export class SwarmFeed {
  private readonly daemon: FeedSource
  private readonly intervalMs: number
  private readonly presencePollMs: number
  private readonly kept: number
  private readonly listeners = new Set<(n: FeedNotice) => void>()
  private readonly pending = new Set<Topic>()
  private activity: Activity[] = []
  private more = 0
  private counter = 0
  private flushTimer?: NodeJS.Timeout
  private pollTimer?: NodeJS.Timeout
  private presenceSeen = new Map<string, string>()
  private readonly recent: AnnouncementItem[] = []
  private unsubscribe: Array<() => void> = []

  constructor(init: SwarmFeedInit) {
    this.daemon = init.daemon
    this.intervalMs = init.intervalMs ?? 500
    this.presencePollMs = init.presencePollMs ?? 1000
    this.kept = init.announcementsKept ?? 1000
  }

  start(): void {
    this.unsubscribe = [
      this.daemon.logService.onAccepted(e => {
        this.onEntry(e)
      }),
      this.daemon.events.subscribe(e => {
        this.onEvent(e)
      })
    ]
  }

  stop(): void {
    for (const u of this.unsubscribe) u()
    this.unsubscribe = []
    this.listeners.clear()
    clearTimeout(this.flushTimer)
    clearInterval(this.pollTimer)
    this.flushTimer = undefined
    this.pollTimer = undefined
  }

  /** The notice counter: a page that reconnects with an older one refreshes everything. */
  get seq(): number {
    return this.counter
  }

  /** Calls back with every notice from now on; presence is watched while anyone listens. */
  subscribe(listener: (n: FeedNotice) => void): () => void {
    this.listeners.add(listener)
    if (this.pollTimer == null) {
      this.presenceSeen = this.presenceSignatures()
      this.pollTimer = setInterval(() => {
        this.pollPresence()
      }, this.presencePollMs)
      this.pollTimer.unref()
    }
    return () => {
      this.listeners.delete(listener)
      if (this.listeners.size === 0) {
        clearInterval(this.pollTimer)
        this.pollTimer = undefined
      }
    }
  }

  get listenerCount(): number {
    return this.listeners.size
  }

  /** Announcements heard since the dashboard started, oldest first. */
  announcements(): readonly AnnouncementItem[] {
    return this.recent
  }

  private onEntry(e: StoredEntry): void {
    const kind = e.entry.kind
    const topics = ENTRY_TOPICS[kind]
    if (topics == null) return
    this.mark(topics)
    if (this.listeners.size > 0) this.addActivity(entryActivity(e, this.nameOf(e.entry.author)))
  }

  private onEvent(e: Event): void {
    switch (e.type) {
      case 'announcement': {
        const detail = parseDetail(e.detailJson)
        this.recent.push({
          id: typeof detail.id === 'string' || typeof detail.id === 'number' ? String(detail.id) : '',
          from: e.peerId,
          name: e.peerName,
          text: e.text,
          time: Number(detail.time ?? e.time),
          receivedAt: e.time
        })
        if (this.recent.length > this.kept) this.recent.splice(0, this.recent.length - this.kept)
        this.mark(['messages'])
        this.addActivity({ time: e.time, kind: 'announcement', peerId: e.peerId, name: e.peerName, text: clip(e.text, 300) })
        break
      }
      case 'message':
        this.mark(['messages'])
        this.addActivity({ time: e.time, kind: 'message', peerId: e.peerId, name: e.peerName })
        break
      case 'message_failed':
        this.mark(['messages'])
        break
      case 'peer_joined':
      case 'peer_left':
        // A task's state (claimed or expired) follows its holder's liveness.
        this.mark(['agents', 'board'])
        this.addActivity({ time: e.time, kind: e.type, peerId: e.peerId, name: e.peerName !== '' ? e.peerName : this.nameOf(e.peerId) })
        break
      default:
    }
  }

  private nameOf(peerId: string): string {
    if (peerId === this.daemon.peerId) return this.daemon.name
    return this.daemon.presence.directory.get(peerId)?.name ?? ''
  }

  /** What each agent shows on the page, from presence: a change to any of it is a notice. */
  private presenceSignatures(): Map<string, string> {
    const d = this.daemon
    const out = new Map<string, string>()
    out.set(d.peerId, `${d.presence.status}\u0000${d.presence.harnessState()}`)
    for (const p of d.presence.directory.all()) {
      out.set(
        p.peerId,
        `${p.name}\u0000${p.status}\u0000${p.harness ?? ''}\u0000${p.sandbox ?? ''}\u0000${String(d.presence.isLive(p.peerId))}`
      )
    }
    return out
  }

  private pollPresence(): void {
    const now = this.presenceSignatures()
    const before = this.presenceSeen
    this.presenceSeen = now
    if (now.size !== before.size) {
      this.mark(['agents'])
      return
    }
    for (const [peer, sig] of now) {
      if (before.get(peer) !== sig) {
        this.mark(['agents'])
        return
      }
    }
  }

  private addActivity(a: Activity): void {
    if (this.activity.length >= MAX_ACTIVITY) {
      this.more++
      return
    }
    this.activity.push(a)
  }

  private mark(topics: readonly Topic[]): void {
    if (this.listeners.size === 0) return
    for (const t of topics) this.pending.add(t)
    this.pending.add('summary')
    this.flushTimer ??= setTimeout(() => {
      this.flush()
    }, this.intervalMs)
  }

  private flush(): void {
    this.flushTimer = undefined
    if (this.pending.size === 0) return
    const notice: FeedNotice = {
      seq: ++this.counter,
      topics: TOPICS.filter(t => this.pending.has(t)),
      activity: this.activity,
      more: this.more
    }
    this.pending.clear()
    this.activity = []
    this.more = 0
    for (const l of this.listeners) {
      try {
        l(notice)
      } catch {
        /* a listener's failure is its own */
      }
    }
  }
}

function parseDetail(json: string): Record<string, unknown> {
  if (json === '') return {}
  try {
    return JSON.parse(json) as Record<string, unknown>
  } catch {
    return {}
  }
}

/** The activity line for an accepted entry; a body that does not decode gives a line without details. */
export function entryActivity(e: StoredEntry, name: string): Activity {
  const { kind, author, time } = e.entry
  const a: Activity = { time, kind, peerId: author, name }
  if (!isKnownKind(kind)) return a
  try {
    switch (kind) {
      case 'claim':
      case 'release':
      case 'done': {
        const b = decodeBody(kind, e.entry.body) as { task: string; epoch: number }
        a.task = b.task
        a.epoch = b.epoch
        break
      }
      case 'task':
        a.task = decodeBody('task', e.entry.body).id
        break
      case 'goal':
        a.text = clip(decodeBody('goal', e.entry.body).text, 160)
        break
      case 'finding': {
        const f = decodeBody('finding', e.entry.body)
        a.detail = f.kind
        a.text = clip(f.text, 160)
        break
      }
      case 'integration': {
        const i = decodeBody('integration', e.entry.body)
        a.task = i.task
        a.epoch = i.epoch
        a.detail = i.result
        break
      }
      case 'test_run': {
        const r = decodeBody('test_run', e.entry.body)
        a.detail = `${r.passed}/${r.total}`
        break
      }
      default:
    }
  } catch {
    /* the line stays without details */
  }
  return a
}
