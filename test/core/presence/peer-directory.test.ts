import { describe, expect, it } from 'vitest'
import { PeerDirectory } from '../../../src/core/presence/peer-directory.js'

const update = (peerId: string, seq: number, timeoutMs?: number): Parameters<PeerDirectory['observe']>[0] => ({
  peerId,
  name: peerId,
  status: '',
  claims: [],
  addrs: [],
  seq,
  timeoutMs
})

describe('PeerDirectory.nextExpiry', () => {
  it('is the first deadline of a peer still marked live, and moves as heartbeats and expiry do', () => {
    const d = new PeerDirectory({ liveTimeoutMs: 10_000 })
    expect(d.nextExpiry()).toBeUndefined()
    d.observe(update('a', 1), 0)
    d.observe(update('b', 1, 80_000), 0)
    expect(d.nextExpiry()).toBe(10_000)
    d.observe(update('a', 2), 5000)
    expect(d.nextExpiry()).toBe(15_000)
    expect(d.expire(15_001).map(p => p.peerId)).toEqual(['a'])
    expect(d.nextExpiry()).toBe(80_000)
    d.touch('b', 20_000)
    expect(d.nextExpiry()).toBe(100_000)
    expect(d.expire(100_001).map(p => p.peerId)).toEqual(['b'])
    expect(d.nextExpiry()).toBeUndefined()
  })
})
