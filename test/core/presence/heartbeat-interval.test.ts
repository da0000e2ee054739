import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import {
  heartbeatIntervalMs,
  liveTimeoutForMs,
  MAX_QUIET_DOUBLINGS,
  quietIntervalMs,
  type HeartbeatPolicy
} from '../../../src/core/presence/heartbeat-interval.js'
import { PeerDirectory } from '../../../src/core/presence/peer-directory.js'

const policy: HeartbeatPolicy = { baseMs: 2000, liveTimeoutMs: 10_000, maxRatePerSecond: 16, maxIntervalMs: 120_000 }

describe('the heartbeat interval', () => {
  it('is the base interval in a small swarm', () => {
    expect(heartbeatIntervalMs(0, policy)).toBe(2000)
    expect(heartbeatIntervalMs(31, policy)).toBe(2000)
  })

  it('grows with the swarm so that a daemon receives at most the rate', () => {
    expect(heartbeatIntervalMs(128, policy)).toBe(8000)
    expect(heartbeatIntervalMs(1023, policy)).toBe(63_938)
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1920 }), peers => {
        const interval = heartbeatIntervalMs(peers, policy)
        expect((peers * 1000) / interval).toBeLessThanOrEqual(policy.maxRatePerSecond)
      })
    )
  })

  it('never exceeds the largest interval', () => {
    expect(heartbeatIntervalMs(1_000_000, policy)).toBe(120_000)
  })
})

describe('the interval of a quiet daemon', () => {
  it('doubles with each quiet beat, up to eight times the interval', () => {
    expect([0, 1, 2, 3, 4, 50].map(q => quietIntervalMs(2000, q, policy))).toEqual([2000, 4000, 8000, 16_000, 16_000, 16_000])
    expect(2 ** MAX_QUIET_DOUBLINGS).toBe(8)
  })

  it('never goes beyond the largest interval, nor below the interval for the swarm', () => {
    expect(quietIntervalMs(64_000, 3, policy)).toBe(120_000)
    expect(quietIntervalMs(120_000, 3, policy)).toBe(120_000)
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 5000 }), fc.integer({ min: -3, max: 20 }), (peers, quiet) => {
        const interval = heartbeatIntervalMs(peers, policy)
        const q = quietIntervalMs(interval, quiet, policy)
        expect(q).toBeGreaterThanOrEqual(interval)
        expect(q).toBeLessThanOrEqual(Math.max(interval, policy.maxIntervalMs))
        // the receiver's timeout follows: five announced intervals of grace
        expect(liveTimeoutForMs(q, policy)).toBeGreaterThanOrEqual(5 * q)
      })
    )
  })
})

describe('the timeout for a peer', () => {
  it('is the configured timeout for a peer at the base interval, or one that says nothing', () => {
    expect(liveTimeoutForMs(0, policy)).toBe(10_000)
    expect(liveTimeoutForMs(2000, policy)).toBe(10_000)
    expect(liveTimeoutForMs(500, policy)).toBe(10_000)
  })

  it('scales with the interval the peer announced, by the same factor', () => {
    expect(liveTimeoutForMs(8000, policy)).toBe(40_000)
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 5000 }), peers => {
        const interval = heartbeatIntervalMs(peers, policy)
        // Five intervals of grace, as at the base: a lost beat or two never drops a live peer.
        expect(liveTimeoutForMs(interval, policy)).toBeGreaterThanOrEqual(5 * interval)
      })
    )
  })

  it('is capped, so no peer can announce itself live for hours', () => {
    expect(liveTimeoutForMs(24 * 3600_000, policy)).toBe(600_000)
    expect(liveTimeoutForMs(2 ** 32 - 1, policy)).toBe(600_000)
  })
})

describe('a peer directory with announced intervals', () => {
  it('keeps each peer live for its own timeout', () => {
    const dir = new PeerDirectory({ liveTimeoutMs: 10_000 })
    const base = { name: '', status: '', claims: [], addrs: [], seq: 1 }
    dir.observe({ ...base, peerId: 'fast' }, 0)
    dir.observe({ ...base, peerId: 'slow', timeoutMs: liveTimeoutForMs(64_000, policy) }, 0)
    expect(
      dir
        .live(10_000)
        .map(p => p.peerId)
        .sort()
    ).toEqual(['fast', 'slow'])
    expect(dir.expire(10_001).map(p => p.peerId)).toEqual(['fast'])
    expect(dir.isLive('slow', 319_999)).toBe(true)
    expect(dir.expire(320_001).map(p => p.peerId)).toEqual(['slow'])
  })
})
