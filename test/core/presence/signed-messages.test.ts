import { describe, expect, it } from 'vitest'
import { signPresence, verifyPresence } from '../../../src/core/presence/signed-messages.js'
import { signatureChecks } from '../../../src/core/log/crypto.js'
import { impostor, makeIdentities } from '../../helpers/identity.js'

const beat = {
  name: 'a',
  status: 'idle',
  claims: [{ task: 't1', epoch: 1 }],
  time: 1,
  seq: 1,
  addrs: ['/ip4/127.0.0.1/tcp/1'],
  intervalMs: 2000,
  harness: '',
  sandbox: ''
}

describe('signed heartbeats, checked once per process', () => {
  it('a heartbeat checked by one daemon is not checked again by the next, and a forged one is still refused', async () => {
    const [a, b] = await makeIdentities(2)
    const p = signPresence(a.signer, beat)
    const start = signatureChecks()
    // Each daemon of a process receives the same heartbeat: one Ed25519 check for all of them.
    for (let daemon = 0; daemon < 4; daemon++) expect(verifyPresence(p)).toBe(true)
    expect(signatureChecks()).toEqual({ verified: start.verified + 1, remembered: start.remembered + 3 })

    // With the genuine heartbeat remembered: its signature on other contents,
    // another peer's name on it, and an impostor's signature are all refused.
    expect(verifyPresence({ ...p, claims: [{ task: 't2', epoch: 1 }] })).toBe(false)
    expect(verifyPresence({ ...p, claims: [{ task: 't1', epoch: 2 }] })).toBe(false)
    expect(verifyPresence({ ...p, intervalMs: 120_000 })).toBe(false)
    expect(verifyPresence({ ...p, peerId: b.id })).toBe(false)
    expect(verifyPresence(signPresence(impostor(a, b), beat))).toBe(false)
    expect(verifyPresence(p)).toBe(true)
  })
})
