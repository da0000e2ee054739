// Presence heartbeats and announcements are not log entries, but they still
// speak for a peer, so they carry the peer's signature (gossip is StrictNoSign).
import { Announcement, Presence } from '../../gen/agency/v1/wire.js'
import { DOMAIN_ANNOUNCE, DOMAIN_PRESENCE, verifySignature, type Signer } from '../log/crypto.js'

const EMPTY = Buffer.alloc(0)

export function signPresence(signer: Signer, p: Omit<Presence, 'sig' | 'peerId'>): Presence {
  const unsigned: Presence = { ...p, peerId: signer.author, sig: EMPTY }
  return { ...unsigned, sig: Buffer.from(signer.sign(DOMAIN_PRESENCE, Presence.encode(unsigned).finish())) }
}

export function verifyPresence(p: Presence): boolean {
  return verifySignature(DOMAIN_PRESENCE, p.peerId, Presence.encode({ ...p, sig: EMPTY }).finish(), p.sig)
}

export function signAnnouncement(signer: Signer, a: Omit<Announcement, 'sig' | 'from'>): Announcement {
  const unsigned: Announcement = { ...a, from: signer.author, sig: EMPTY }
  return { ...unsigned, sig: Buffer.from(signer.sign(DOMAIN_ANNOUNCE, Announcement.encode(unsigned).finish())) }
}

export function verifyAnnouncement(a: Announcement): boolean {
  return verifySignature(DOMAIN_ANNOUNCE, a.from, Announcement.encode({ ...a, sig: EMPTY }).finish(), a.sig)
}
