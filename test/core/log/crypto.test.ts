import { describe, expect, it } from 'vitest'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { createSigner, verifySignature, DOMAIN_ENTRY, DOMAIN_PRESENCE } from '../../../src/core/log/crypto.js'

describe('domain-separated Ed25519 signatures', () => {
  it('verifies against the key the author names, and only in its domain', async () => {
    const a = await generateKeyPair('Ed25519')
    const b = await generateKeyPair('Ed25519')
    const idA = peerIdFromPrivateKey(a).toString()
    const idB = peerIdFromPrivateKey(b).toString()
    const signerA = createSigner(idA, a.raw)
    const msg = new TextEncoder().encode('hello')
    const sig = signerA.sign(DOMAIN_ENTRY, msg)
    expect(verifySignature(DOMAIN_ENTRY, idA, msg, sig)).toBe(true)
    expect(verifySignature(DOMAIN_PRESENCE, idA, msg, sig)).toBe(false)
    expect(verifySignature(DOMAIN_ENTRY, idB, msg, sig)).toBe(false)
    expect(verifySignature(DOMAIN_ENTRY, 'not-a-peer-id', msg, sig)).toBe(false)
    const tampered = Uint8Array.from(msg); tampered[0] ^= 1
    expect(verifySignature(DOMAIN_ENTRY, idA, tampered, sig)).toBe(false)
  })
})
