// Sending a direct message: checked, named to a known peer, written to the
// outbox (on disk before the call returns, so it survives a crash) and handed
// to the direct-message protocol, which retries it until the peer acks.
import { randomUUID } from 'node:crypto'
import { InvalidArgumentError, NotFoundError, TooLargeError } from '../core/errors.js'
import type { PeerDirectory } from '../core/presence/peer-directory.js'
import type { DirectMessage } from '../gen/agency/v1/wire.js'
import { MAX_DM_TEXT_BYTES } from '../mesh/constants.js'
import { utf8Length, type DirectMessaging } from '../mesh/direct-messages.js'
import type { MessageStore } from '../store/index.js'

export interface MessageOutboxInit {
  me: string
  name: string
  /** who has been seen: a recipient is named by peer id or name */
  directory: PeerDirectory
  store: MessageStore
  messaging: DirectMessaging
  /** how long an undelivered message is retried */
  ttlMs: number
  wallClock: () => number
}

export interface OutgoingMessage {
  to: string
  text: string
  thread?: string
  replyTo?: string
}

export class MessageOutbox {
  private readonly init: MessageOutboxInit

  constructor(init: MessageOutboxInit) {
    this.init = init
  }

  async send(req: OutgoingMessage): Promise<{ id: string; to: string; thread: string }> {
    const { me, name, wallClock } = this.init
    const size = utf8Length(req.text)
    if (size > MAX_DM_TEXT_BYTES) throw new TooLargeError('message', size, MAX_DM_TEXT_BYTES)
    if (req.text.length === 0) throw new InvalidArgumentError('message text is empty')
    const target = req.to.trim()
    if (target === '') throw new InvalidArgumentError('no recipient: give a peer id or name')
    if (target === me || target === name) throw new InvalidArgumentError('cannot send a direct message to yourself')
    const peer = this.init.directory.resolve(target)
    if (peer == null) throw new NotFoundError(`unknown peer "${target}": no peer with that id or name has been seen (see \`agency peers\`)`)
    const id = randomUUID()
    const msg: DirectMessage = {
      id,
      from: me,
      fromName: name,
      to: peer.peerId,
      thread: req.thread != null && req.thread !== '' ? req.thread : id,
      replyTo: req.replyTo ?? '',
      text: req.text,
      time: wallClock()
    }
    await this.init.store.enqueue(msg, { expiresAt: wallClock() + this.init.ttlMs })
    this.init.messaging.flushPeer(peer.peerId).catch(() => {})
    return { id, to: peer.peerId, thread: msg.thread }
  }
}
