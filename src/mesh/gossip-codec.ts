// Framing of the swarm topic: one type byte, then a protobuf message.
// The entry id is sha256 of the entry bytes, so the gossip message id of an
// entry equals its entry id and duplicates from sync and gossip collapse.
import { Entry } from '../gen/agency/v1/log.js'
import { Announcement, ForkProof, Presence } from '../gen/agency/v1/wire.js'
import { sha256 } from '../core/log/crypto.js'

export const GossipType = { entry: 1, presence: 2, announcement: 3, forkProof: 4 } as const

export type GossipPayload =
  | { type: 'entry'; bytes: Uint8Array }
  | { type: 'presence'; presence: Presence }
  | { type: 'announcement'; announcement: Announcement }
  | { type: 'fork_proof'; proof: ForkProof }

export class MalformedGossipError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'MalformedGossipError'
  }
}

function frame(type: number, body: Uint8Array): Uint8Array {
  const out = new Uint8Array(body.length + 1)
  out[0] = type
  out.set(body, 1)
  return out
}

export function encodeEntryGossip(entryBytes: Uint8Array): Uint8Array {
  return frame(GossipType.entry, entryBytes)
}

export function encodePresenceGossip(p: Presence): Uint8Array {
  return frame(GossipType.presence, Presence.encode(p).finish())
}

export function encodeAnnouncementGossip(a: Announcement): Uint8Array {
  return frame(GossipType.announcement, Announcement.encode(a).finish())
}

export function encodeForkProofGossip(p: ForkProof): Uint8Array {
  return frame(GossipType.forkProof, ForkProof.encode(p).finish())
}

/** Decodes a gossip payload; throws MalformedGossipError on anything it cannot read. */
export function decodeGossip(data: Uint8Array): GossipPayload {
  if (data.length < 1) throw new MalformedGossipError('empty gossip message')
  const body = data.subarray(1)
  try {
    switch (data[0]) {
      case GossipType.entry:
        return { type: 'entry', bytes: body }
      case GossipType.presence:
        return { type: 'presence', presence: Presence.decode(body) }
      case GossipType.announcement:
        return { type: 'announcement', announcement: Announcement.decode(body) }
      case GossipType.forkProof:
        return { type: 'fork_proof', proof: ForkProof.decode(body) }
      default:
        throw new MalformedGossipError(`unknown gossip type ${data[0]}`)
    }
  } catch (err) {
    if (err instanceof MalformedGossipError) throw err
    throw new MalformedGossipError(`undecodable gossip: ${(err as Error).message}`)
  }
}

/** Gossip message id: for entries the entry id, for the rest the hash of the whole frame. */
export function gossipMessageId(data: Uint8Array): Uint8Array {
  if (data.length > 0 && data[0] === GossipType.entry) return sha256(data.subarray(1))
  return sha256(data)
}

export { Entry }
