// Ed25519 signing and verification with domain separation, on node:crypto.
// Keys are derived from libp2p peer ids (the Ed25519 public key is inlined in
// the peer id), and cached, because verification is the bound on sync speed.
import * as crypto from 'node:crypto'
import { createHash, createPrivateKey, createPublicKey, sign as edSign, verify as edVerify, type KeyObject } from 'node:crypto'
import { peerIdFromString } from '@libp2p/peer-id'

export const DOMAIN_ENTRY = 'agency/entry/v1'
export const DOMAIN_PRESENCE = 'agency/presence/v1'
export const DOMAIN_ANNOUNCE = 'agency/announce/v1'

const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex')
const SPKI_ED25519_PREFIX = Buffer.from('302a300506032b6570032100', 'hex')

/** Signs on behalf of one author (this daemon's identity). */
export interface Signer {
  /** the author's peer id string */
  readonly author: string
  sign: (domain: string, message: Uint8Array) => Uint8Array
}

// crypto.hash (node 20.12 on) hashes in one call, about twice as fast as a Hash object for an entry's few hundred bytes
const oneShot = (crypto as { hash?: (algorithm: string, data: Uint8Array, encoding: 'buffer' | 'hex') => Buffer | string }).hash

export function sha256(data: Uint8Array): Uint8Array {
  return oneShot !== undefined ? (oneShot('sha256', data, 'buffer') as Buffer) : createHash('sha256').update(data).digest()
}

/** sha256 of `parts` end to end, without joining them first. */
export function sha256OfParts(parts: readonly Uint8Array[]): Uint8Array {
  const h = createHash('sha256')
  for (const p of parts) h.update(p)
  return h.digest()
}

/** sha256 of `data` in lower-case hex. */
export function sha256Hex(data: Uint8Array): string {
  return oneShot !== undefined ? (oneShot('sha256', data, 'hex') as string) : createHash('sha256').update(data).digest('hex')
}

export function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')
}

/** The bytes that are signed: domain tag, a zero byte, then the message. */
function framed(domain: string, message: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from(domain, 'utf8'), Buffer.from([0]), message])
}

/** node:crypto's key object for a raw Ed25519 key: the 32-byte seed, or libp2p's 64-byte form (seed followed by public key). */
export function ed25519PrivateKeyObject(rawPrivateKey: Uint8Array): KeyObject {
  return createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, rawPrivateKey.subarray(0, 32)]), format: 'der', type: 'pkcs8' })
}

/**
 * A signer from a raw Ed25519 key: either the 32-byte seed or libp2p's 64-byte
 * form (seed followed by public key).
 */
export function createSigner(author: string, rawPrivateKey: Uint8Array): Signer {
  const key = ed25519PrivateKeyObject(rawPrivateKey)
  return {
    author,
    sign: (domain, message) => edSign(null, framed(domain, message), key)
  }
}

const keyCache = new Map<string, KeyObject | null>()
const KEY_CACHE_LIMIT = 8192

/** The verifying key an author names, or null when the author is not an Ed25519 peer id. */
export function authorKey(author: string): KeyObject | null {
  const cached = keyCache.get(author)
  if (cached !== undefined) return cached
  let key: KeyObject | null = null
  try {
    const peerId = peerIdFromString(author)
    if (peerId.type === 'Ed25519' && peerId.publicKey != null) {
      key = createPublicKey({ key: Buffer.concat([SPKI_ED25519_PREFIX, peerId.publicKey.raw]), format: 'der', type: 'spki' })
    }
  } catch {
    key = null
  }
  if (keyCache.size >= KEY_CACHE_LIMIT) keyCache.clear()
  keyCache.set(author, key)
  return key
}

/**
 * Signatures this process has checked and found good, each with what it
 * signed: the author (whose peer id names the key) and the signed bytes with
 * their domain. Several daemons of one process (`agentd --agents`) receive the
 * same heartbeats and entries, and each checked every one; now the second
 * check of the same signature over the same bytes by the same author is a
 * comparison. Ed25519 verification is a function of exactly these inputs, so
 * a match says what a check would say again; anything else is checked. Only
 * good signatures are kept (a peer cannot fill the set with garbage, only
 * with messages it really signed), of small messages (heartbeats, most
 * entries), oldest out first: the set only has to outlast a message's spread
 * over the daemons of one process.
 */
const verified = new Map<string, { author: string; signed: Buffer }>()
const VERIFIED_LIMIT = 2048
const VERIFIED_MAX_BYTES = 2048
const checks = { verified: 0, remembered: 0 }

/** How many signatures this process has checked with Ed25519, and how many it found already checked. */
export function signatureChecks(): { verified: number; remembered: number } {
  return { ...checks }
}

/** True when `sig` is `author`'s signature over `message` in `domain`. Never throws. */
export function verifySignature(domain: string, author: string, message: Uint8Array, sig: Uint8Array): boolean {
  if (sig.length !== 64) return false
  const key = authorKey(author)
  if (key == null) return false
  const signed = framed(domain, message)
  const bySig = Buffer.from(sig.buffer, sig.byteOffset, sig.byteLength).toString('latin1')
  const known = verified.get(bySig)
  if (known !== undefined && known.author === author && known.signed.equals(signed)) {
    checks.remembered++
    return true
  }
  let good: boolean
  try {
    checks.verified++
    good = edVerify(null, signed, key, sig)
  } catch {
    good = false
  }
  if (good && signed.length <= VERIFIED_MAX_BYTES) {
    if (verified.size >= VERIFIED_LIMIT) verified.delete(verified.keys().next().value as string)
    // A copy of its own: `signed` may be a slice of Buffer's shared pool, which it would keep alive.
    const kept = Buffer.alloc(signed.length)
    signed.copy(kept)
    verified.set(bySig, { author, signed: kept })
  }
  return good
}
