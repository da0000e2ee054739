// Events for the local agent (WatchEvents): peers joining and leaving,
// announcements, messages, and board events such as a lost claim.
import { EventEmitter } from 'node:events'
import type { Event } from '../gen/agency/v1/api.js'

export type EventType =
  | 'peer_joined'
  | 'peer_left'
  | 'announcement'
  | 'message'
  | 'message_failed'
  | 'entry'
  | 'claim_lost'
  | 'claim_superseded'
  | 'overlap'
  | 'fork'
  /** the agent's ACP session: a turn, a tool call, a plan, a permission answered */
  | 'session'

export interface EventInput {
  type: EventType
  peerId?: string
  peerName?: string
  text?: string
  task?: string
  detail?: Record<string, unknown>
}

export class EventBus {
  private readonly emitter = new EventEmitter()

  constructor() {
    // Every WatchEvents stream is a listener.
    this.emitter.setMaxListeners(0)
  }

  emit(e: EventInput): void {
    const event: Event = {
      type: e.type,
      time: Date.now(),
      peerId: e.peerId ?? '',
      peerName: e.peerName ?? '',
      text: e.text ?? '',
      task: e.task ?? '',
      detailJson: e.detail != null ? JSON.stringify(e.detail) : ''
    }
    this.emitter.emit('event', event)
  }

  subscribe(listener: (e: Event) => void): () => void {
    this.emitter.on('event', listener)
    return () => {
      this.emitter.off('event', listener)
    }
  }
}
