// Direct messages on disk: the outbox (kept until the peer acks or the TTL
// runs out) and the inbox (exactly once, with cursors that survive restarts).
//
// Layout (sublevels of the one LevelDB):
//   dm-outbox  message id            -> { message (base64 DirectMessage), attempts, expiresAt, lastAttemptAt }
//   dm-inbox   <cursor padded>       -> { message (base64 DirectMessage), receivedAt }
//   dm-seen    <from>/<message id>   -> cursor (decimal)
// Seen ids are scoped by sender so that one peer cannot suppress another's
// message by sending its id first.
import { DirectMessage } from '../gen/agency/v1/wire.js'
import { InvalidArgumentError } from '../core/errors.js'
import { componentLogger } from '../logger.js'
import { StoreCorruptError } from './errors.js'
import type { LevelBatch, LevelDb } from './level-db.js'
import { assertNonEmptyString, assertNonNegativeInteger, assertPositiveInteger, padNumber, parsePadded } from './keys.js'
import { SerialQueue } from './serial-queue.js'

export interface OutboxRecord {
  message: DirectMessage
  /** delivery attempts made so far */
  attempts: number
  /** ms since the epoch after which the sender gives up */
  expiresAt: number
  /** ms since the epoch of the last attempt, if any */
  lastAttemptAt?: number
}

export interface InboxRecord {
  /** position in this daemon's inbox, from 1 */
  cursor: number
  receivedAt: number
  message: DirectMessage
}

export interface DeliverResult {
  /** false when the message was seen before; nothing was written */
  stored: boolean
  /** the cursor of the message in the inbox (the earlier one for a duplicate) */
  cursor: number
}

interface OutboxValue {
  message: string
  attempts: number
  expiresAt: number
  lastAttemptAt?: number
}
interface InboxValue {
  message: string
  receivedAt: number
}

const log = componentLogger('store')

export class MessageStore {
  private readonly db: LevelDb
  private readonly outbox
  private readonly inbox
  private readonly seen
  private readonly queue = new SerialQueue()
  private last: number
  private total: number

  private constructor(db: LevelDb, last: number, total: number) {
    this.db = db
    const s = MessageStore.sublevels(db)
    this.outbox = s.outbox
    this.inbox = s.inbox
    this.seen = s.seen
    this.last = last
    this.total = total
  }

  private static sublevels(db: LevelDb) {
    return {
      outbox: db.sublevel<string, OutboxValue>('dm-outbox', { keyEncoding: 'utf8', valueEncoding: 'json' }),
      inbox: db.sublevel<string, InboxValue>('dm-inbox', { keyEncoding: 'utf8', valueEncoding: 'json' }),
      seen: db.sublevel<string, string>('dm-seen', { keyEncoding: 'utf8', valueEncoding: 'utf8' })
    }
  }

  static async open(db: LevelDb): Promise<MessageStore> {
    const s = MessageStore.sublevels(db)
    const lastKeys = await s.inbox.keys({ reverse: true, limit: 1 }).all()
    const last = lastKeys.length > 0 ? parsePadded(lastKeys[0]) : 0
    let total = 0
    for await (const _ of s.inbox.keys()) total++
    return new MessageStore(db, last, total)
  }

  // ---- outbox ----

  /** Queues a message for sending; on disk before this returns. */
  async enqueue(msg: DirectMessage, opts: { expiresAt: number }): Promise<void> {
    assertNonEmptyString('message id', msg.id)
    assertNonEmptyString('message recipient', msg.to)
    assertNonNegativeInteger('expiresAt', opts.expiresAt)
    const value: OutboxValue = { message: encodeMessage(msg), attempts: 0, expiresAt: opts.expiresAt }
    await this.queue.run(async () => {
      if (await this.outbox.has(msg.id)) throw new InvalidArgumentError(`message ${msg.id} is already in the outbox`)
      const ops: LevelBatch = [{ type: 'put', sublevel: this.outbox, key: msg.id, value }]
      await this.db.batch(ops, { sync: true })
    })
  }

  /** Every queued message, oldest (by message time, then id) first. */
  async listOutbox(): Promise<OutboxRecord[]> {
    const out: OutboxRecord[] = []
    for await (const [id, value] of this.outbox.iterator()) out.push(decodeOutbox(id, value))
    return out.sort((a, b) => a.message.time - b.message.time || (a.message.id < b.message.id ? -1 : 1))
  }

  async getOutbox(id: string): Promise<OutboxRecord | undefined> {
    assertNonEmptyString('message id', id)
    const value = await this.outbox.get(id)
    return value == null ? undefined : decodeOutbox(id, value)
  }

  /** Counts a delivery attempt; returns the updated record, or undefined if it is no longer queued. */
  async recordAttempt(id: string, at: number): Promise<OutboxRecord | undefined> {
    assertNonEmptyString('message id', id)
    assertNonNegativeInteger('attempt time', at)
    return await this.queue.run(async () => {
      const value = await this.outbox.get(id)
      if (value == null) return undefined
      const next: OutboxValue = { ...value, attempts: value.attempts + 1, lastAttemptAt: at }
      await this.outbox.put(id, next)
      return decodeOutbox(id, next)
    })
  }

  /** The peer acked the message: it leaves the outbox. Returns whether it was queued. */
  async markDelivered(id: string): Promise<boolean> {
    return await this.removeFromOutbox(id)
  }

  /** Gives up on a message (TTL passed, peer refused it). Returns whether it was queued. */
  async drop(id: string, reason: string): Promise<boolean> {
    const removed = await this.removeFromOutbox(id)
    if (removed) log.warn({ id, reason }, 'direct message dropped from the outbox')
    return removed
  }

  async outboxCount(): Promise<number> {
    let n = 0
    for await (const _ of this.outbox.keys()) n++
    return n
  }

  private async removeFromOutbox(id: string): Promise<boolean> {
    assertNonEmptyString('message id', id)
    return await this.queue.run(async () => {
      if (!(await this.outbox.has(id))) return false
      const ops: LevelBatch = [{ type: 'del', sublevel: this.outbox, key: id }]
      await this.db.batch(ops, { sync: true })
      return true
    })
  }

  // ---- inbox ----

  /**
   * Stores a received message exactly once: the seen marker and the inbox
   * record go in one synced batch, so an ack sent after this returns is never
   * followed by a second copy, across restarts too.
   */
  async deliver(msg: DirectMessage, receivedAt: number): Promise<DeliverResult> {
    assertNonEmptyString('message id', msg.id)
    if (typeof msg.from !== 'string' || msg.from.includes('/')) {
      throw new InvalidArgumentError(`message sender ${JSON.stringify(msg.from)} must be a peer id`)
    }
    assertNonNegativeInteger('receivedAt', receivedAt)
    const seenKey = `${msg.from}/${msg.id}`
    const value: InboxValue = { message: encodeMessage(msg), receivedAt }
    return await this.queue.run(async () => {
      const earlier = await this.seen.get(seenKey)
      if (earlier != null) return { stored: false, cursor: Number(earlier) }
      const cursor = this.last + 1
      const ops: LevelBatch = [
        { type: 'put', sublevel: this.seen, key: seenKey, value: String(cursor) },
        { type: 'put', sublevel: this.inbox, key: padNumber(cursor), value }
      ]
      await this.db.batch(ops, { sync: true })
      this.last = cursor
      this.total++
      return { stored: true, cursor }
    })
  }

  /** Up to `limit` inbox messages with cursor > `after`, in cursor order. */
  async inboxAfter(after: number, limit: number): Promise<InboxRecord[]> {
    assertNonNegativeInteger('cursor', after)
    assertPositiveInteger('limit', limit)
    const out: InboxRecord[] = []
    for await (const [key, value] of this.inbox.iterator({ gt: padNumber(after), limit })) {
      out.push({ cursor: parsePadded(key), receivedAt: value.receivedAt, message: decodeMessage(key, value.message) })
    }
    return out
  }

  inboxCount(): number {
    return this.total
  }

  /** The cursor of the newest inbox message; 0 when the inbox is empty. */
  lastCursor(): number {
    return this.last
  }
}

function encodeMessage(msg: DirectMessage): string {
  return Buffer.from(DirectMessage.encode(msg).finish()).toString('base64')
}

function decodeMessage(key: string, base64: unknown): DirectMessage {
  if (typeof base64 !== 'string') throw new StoreCorruptError(`stored direct message ${key} has no message bytes`)
  try {
    return DirectMessage.decode(Buffer.from(base64, 'base64'))
  } catch (err) {
    throw new StoreCorruptError(`stored direct message ${key} cannot be decoded`, { cause: err })
  }
}

function decodeOutbox(id: string, value: OutboxValue): OutboxRecord {
  const record: OutboxRecord = { message: decodeMessage(id, value.message), attempts: value.attempts, expiresAt: value.expiresAt }
  if (value.lastAttemptAt != null) record.lastAttemptAt = value.lastAttemptAt
  return record
}
