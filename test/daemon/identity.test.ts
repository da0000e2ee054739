import { afterEach, describe, expect, it } from 'vitest'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { loadOrCreateIdentity, signingOnce } from '../../src/daemon/identity.js'

const dirs: string[] = []
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true })
})

describe('the identity key libp2p signs with', () => {
  it("makes the very signatures libp2p's own key makes, and is the same key in every other respect", async () => {
    const key = await generateKeyPair('Ed25519')
    const once = signingOnce(key)
    for (const text of ['', 'a noise handshake payload', 'x'.repeat(5000)]) {
      const msg = new TextEncoder().encode(text)
      expect(Buffer.from(await once.sign(msg))).toEqual(Buffer.from(await key.sign(msg)))
      expect(await key.publicKey.verify(msg, await once.sign(msg))).toBe(true)
    }
    expect(once.type).toBe('Ed25519')
    expect(once.equals(key)).toBe(true)
    expect(once.publicKey.equals(key.publicKey)).toBe(true)
    expect(peerIdFromPrivateKey(once).toString()).toBe(peerIdFromPrivateKey(key).toString())
    expect(() => once.sign(new Uint8Array(1), { signal: AbortSignal.abort() })).toThrow()
  })

  it('is what a daemon loads, the same after a restart', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agency-identity-'))
    dirs.push(dir)
    const first = await loadOrCreateIdentity(dir)
    const again = await loadOrCreateIdentity(dir)
    expect(again.peerId).toBe(first.peerId)
    const msg = new TextEncoder().encode('signed peer record')
    expect(Buffer.from(await again.privateKey.sign(msg))).toEqual(Buffer.from(await first.privateKey.sign(msg)))
    expect(await first.privateKey.publicKey.verify(msg, await again.privateKey.sign(msg))).toBe(true)
  })
})
