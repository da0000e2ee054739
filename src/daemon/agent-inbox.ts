// The agent's inbox as the agent reads it: peers' direct messages and the
// daemon's own notices (a claim lost, an overlap, a review asked of you, ...)
// in one sequence, with one read cursor kept by the daemon. A print-mode agent
// that starts from nothing each run asks for what it has not read yet and
// never misses a notice that came while it was not running.
import { randomUUID } from 'node:crypto'
import type { InboxRecord, MessageStore, StateStore } from '../store/index.js'
import { InvalidArgumentError } from '../core/errors.js'

export type NoticeKind =
  | 'claim_lost'
  | 'claim_superseded'
  | 'overlap'
  | 'review_requested'
  | 'integration'
  | 'goal_changed'
  | 'harness'
  | 'assist'
  | 'handoff'
  | 'operator'
  | 'paused'
  | 'resumed'
  | 'approval'

/** Notices are stored as messages from the daemon to itself, on a thread that names their kind. */
const NOTICE_THREAD = 'agentd-notice:'
const READ_CURSOR_KEY = 'inbox/read-cursor'
const MAX_READ = 10_000
const DEFAULT_READ = 100

export interface InboxItem {
  record: InboxRecord
  /** 'message' for a peer's message, else the notice kind */
  kind: string
  task: string
}

export interface AgentInboxInit {
  me: string
  messages: MessageStore
  state: StateStore
  /** a notice was stored (so waiters wake up) */
  onStored: (cursor: number) => void
}

export class AgentInbox {
  private readCursor = 0
  private readonly init: AgentInboxInit

  constructor(init: AgentInboxInit) {
    this.init = init
  }

  async beforeStart(): Promise<void> {
    const saved = await this.init.state.get<number>(READ_CURSOR_KEY)
    this.readCursor = typeof saved === 'number' && Number.isSafeInteger(saved) && saved >= 0 ? saved : 0
  }

  /** Items stored and not read yet. */
  unread(): number {
    return Math.max(0, this.init.messages.lastCursor() - this.readCursor)
  }

  /**
   * What the agent has not read yet (and marks it read unless `peek`), or
   * with `all` the history after `after` without touching the read cursor.
   */
  async read(o: { after?: number; limit?: number; all?: boolean; peek?: boolean } = {}): Promise<InboxItem[]> {
    const limit = o.limit === undefined || o.limit === 0 ? DEFAULT_READ : o.limit
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_READ)
      throw new InvalidArgumentError(`limit must be between 1 and ${MAX_READ}`)
    const after = o.all === true ? (o.after ?? 0) : Math.max(this.readCursor, o.after ?? 0)
    const records = await this.init.messages.inboxAfter(after, limit)
    if (o.all !== true && o.peek !== true && records.length > 0) await this.markRead(records[records.length - 1].cursor)
    return records.map(r => this.item(r))
  }

  /** Moves the read cursor forward to `cursor` (never back). */
  async markRead(cursor: number): Promise<void> {
    if (cursor <= this.readCursor) return
    this.readCursor = cursor
    await this.init.state.put(READ_CURSOR_KEY, cursor, { sync: true })
  }

  /**
   * Stores a notice of this daemon for its agent. With `once`, a key of what
   * the notice is about: a notice with that key is stored once ever (a second
   * one, after a restart say, is dropped); its cursor is returned either way.
   */
  async notice(kind: NoticeKind, text: string, task = '', once?: string): Promise<number> {
    const id = once !== undefined ? `once:${once}` : randomUUID()
    const r = await this.init.messages.deliver(
      {
        id,
        from: this.init.me,
        fromName: 'agentd',
        to: this.init.me,
        thread: `${NOTICE_THREAD}${kind}${task !== '' ? `:${task}` : ''}`,
        replyTo: '',
        text,
        time: Date.now()
      },
      Date.now()
    )
    if (r.stored) this.init.onStored(r.cursor)
    return r.cursor
  }

  item(record: InboxRecord): InboxItem {
    const m = record.message
    if (m.from === this.init.me && m.thread.startsWith(NOTICE_THREAD)) {
      const [kind, task] = splitOnce(m.thread.slice(NOTICE_THREAD.length), ':')
      return { record, kind, task }
    }
    return { record, kind: 'message', task: '' }
  }
}

function splitOnce(text: string, sep: string): [string, string] {
  const at = text.indexOf(sep)
  return at < 0 ? [text, ''] : [text.slice(0, at), text.slice(at + 1)]
}
