// The swarm's gossip topic: one topic per swarm name. Every inbound message
// goes through the topic validator, which hands it to the handler for its type
// and tells gossipsub to accept (deliver and forward), ignore (drop quietly) or
// reject (drop and lower the sender's score). Nothing is forwarded before its
// handler has checked it.
import { TopicValidatorResult } from '@libp2p/gossipsub'
import type { PeerId } from '@libp2p/interface'
import type { Announcement, ForkProof, Presence } from '../gen/agency/v1/wire.js'
import { decodeGossip, encodeAnnouncementGossip, encodeEntryGossip, encodeForkProofGossip, encodePresenceGossip } from './gossip-codec.js'
import { swarmTopic } from './constants.js'
import type { MeshLibp2p } from './node.js'
import type { Logger } from '../logger.js'

export type Verdict = 'accept' | 'ignore' | 'reject'

export interface SwarmGossipHandlers {
  onEntry: (bytes: Uint8Array, from: string) => Verdict | Promise<Verdict>
  onPresence: (p: Presence, from: string) => Verdict
  onAnnouncement: (a: Announcement, from: string) => Verdict
  /** two entries by one author at one seq; default: ignored */
  onForkProof?: (p: ForkProof, from: string) => Verdict | Promise<Verdict>
  /** a message of this kind was published, for metrics */
  onPublished?: (kind: GossipKind) => void
  /** a message was received and judged, for metrics */
  onJudged?: (type: string, verdict: Verdict, from: string) => void
  /**
   * A peer subscribed to the swarm's topic: from now on a publish can reach
   * it. A connection alone is not enough: gossipsub learns a peer's topics
   * only after identify and its first RPC, so a heartbeat sent at connect
   * reaches nobody new.
   */
  onPeerSubscribed?: (peer: string) => void
}

export type GossipKind = 'entry' | 'presence' | 'announcement' | 'fork_proof'

const RESULT: Record<Verdict, TopicValidatorResult> = {
  accept: TopicValidatorResult.Accept,
  ignore: TopicValidatorResult.Ignore,
  reject: TopicValidatorResult.Reject
}

export class SwarmGossip {
  readonly topic: string
  private readonly node: MeshLibp2p
  private readonly handlers: SwarmGossipHandlers
  private readonly log: Logger

  constructor(node: MeshLibp2p, swarm: string, handlers: SwarmGossipHandlers, log: Logger) {
    this.node = node
    this.topic = swarmTopic(swarm)
    this.handlers = handlers
    this.log = log
  }

  start(): void {
    const pubsub = this.node.services.pubsub
    pubsub.topicValidators.set(this.topic, async (peer, msg) => RESULT[await this.judge(peer, msg.data)])
    pubsub.addEventListener('subscription-change', this.onSubscriptionChange)
    pubsub.subscribe(this.topic)
  }

  stop(): void {
    const pubsub = this.node.services.pubsub
    pubsub.removeEventListener('subscription-change', this.onSubscriptionChange)
    pubsub.unsubscribe(this.topic)
    pubsub.topicValidators.delete(this.topic)
  }

  private readonly onSubscriptionChange = (
    evt: CustomEvent<{ peerId: PeerId; subscriptions: Array<{ topic: string; subscribe: boolean }> }>
  ): void => {
    const { peerId, subscriptions } = evt.detail
    if (!subscriptions.some(s => s.subscribe && s.topic === this.topic)) return
    try {
      this.handlers.onPeerSubscribed?.(peerId.toString())
    } catch (err) {
      this.log.warn({ err }, 'peer subscription handler failed')
    }
  }

  private async judge(peer: PeerId, data: Uint8Array): Promise<Verdict> {
    const from = peer.toString()
    let type = 'malformed'
    let verdict: Verdict
    try {
      const payload = decodeGossip(data)
      type = payload.type
      switch (payload.type) {
        case 'entry':
          verdict = await this.handlers.onEntry(payload.bytes, from)
          break
        case 'presence':
          verdict = this.handlers.onPresence(payload.presence, from)
          break
        case 'announcement':
          verdict = this.handlers.onAnnouncement(payload.announcement, from)
          break
        case 'fork_proof':
          verdict = (await this.handlers.onForkProof?.(payload.proof, from)) ?? 'ignore'
          break
      }
    } catch (err) {
      this.log.debug({ from, err: (err as Error).message }, 'rejected gossip')
      verdict = 'reject'
    }
    this.handlers.onJudged?.(type, verdict, from)
    return verdict
  }

  async publishEntry(entryBytes: Uint8Array): Promise<void> {
    await this.publish('entry', encodeEntryGossip(entryBytes))
  }
  /** Publishes a heartbeat; the peers it was sent to. */
  async publishPresence(p: Presence): Promise<string[]> {
    return await this.publish('presence', encodePresenceGossip(p))
  }
  async publishAnnouncement(a: Announcement): Promise<void> {
    await this.publish('announcement', encodeAnnouncementGossip(a))
  }
  async publishForkProof(p: ForkProof): Promise<void> {
    await this.publish('fork_proof', encodeForkProofGossip(p))
  }

  /**
   * The peers the message was sent to (none: nobody to send to yet, which is not an error: anti-entropy and the next heartbeat catch up).
   */
  private async publish(kind: GossipKind, data: Uint8Array): Promise<string[]> {
    try {
      const { recipients } = await this.node.services.pubsub.publish(this.topic, data)
      this.handlers.onPublished?.(kind)
      return recipients.map(r => r.toString())
    } catch (err) {
      this.log.debug({ err: (err as Error).message }, 'publish failed')
      return []
    }
  }

  subscribers(): number {
    return this.node.services.pubsub.getSubscribers(this.topic).length
  }
}
