import { describe, expect, it } from 'vitest'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { createSigner, signatureChecks, verifySignature, DOMAIN_ENTRY, DOMAIN_PRESENCE } from '../../../src/core/log/crypto.js'
import { makeIdentities, makeIdentity } from '../../helpers/identity.js'

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
    const tampered = Uint8Array.from(msg)
    tampered[0] ^= 1
    expect(verifySignature(DOMAIN_ENTRY, idA, tampered, sig)).toBe(false)
  })
})

describe('the process-wide record of good signatures', () => {
  it('remembers a good signature for the same bytes and nothing else', async () => {
    const [a, b] = await makeIdentities(2)
    const msg = new TextEncoder().encode('remember me')
    const sig = a.signer.sign(DOMAIN_ENTRY, msg)
    const start = signatureChecks()
    expect(verifySignature(DOMAIN_ENTRY, a.id, msg, sig)).toBe(true)
    expect(verifySignature(DOMAIN_ENTRY, a.id, msg, sig)).toBe(true)
    expect(signatureChecks()).toEqual({ verified: start.verified + 1, remembered: start.remembered + 1 })

    // With the good signature remembered, every variation is checked anew and refused.
    const tampered = Uint8Array.from(msg)
    tampered[tampered.length - 1] ^= 1
    const flipped = Uint8Array.from(sig)
    flipped[63] ^= 1
    expect(verifySignature(DOMAIN_ENTRY, a.id, tampered, sig)).toBe(false)
    expect(verifySignature(DOMAIN_ENTRY, a.id, msg, flipped)).toBe(false)
    expect(verifySignature(DOMAIN_PRESENCE, a.id, msg, sig)).toBe(false)
    expect(verifySignature(DOMAIN_ENTRY, b.id, msg, sig)).toBe(false)
    expect(signatureChecks()).toEqual({ verified: start.verified + 5, remembered: start.remembered + 1 })
    // A refused signature is not remembered: it is refused again, by a check.
    expect(verifySignature(DOMAIN_ENTRY, a.id, msg, flipped)).toBe(false)
    expect(signatureChecks().verified).toBe(start.verified + 6)
  })

  it('keeps the author and the signed bytes apart: moving bytes between them is another key', async () => {
    const a = await makeIdentity()
    const sig = a.signer.sign(DOMAIN_ENTRY, new TextEncoder().encode('x'))
    expect(verifySignature(DOMAIN_ENTRY, a.id, new TextEncoder().encode('x'), sig)).toBe(true)
    // The same bytes end to end, cut differently between domain and message, are another signed text.
    expect(verifySignature(DOMAIN_ENTRY + '\0', a.id, new TextEncoder().encode('x').subarray(1), sig)).toBe(false)
  })
})
