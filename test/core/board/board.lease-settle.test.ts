import { describe, expect, it } from 'vitest'
import { Board } from '../../../src/core/board/board.js'
import { LeaseTable } from '../../../src/core/board/lease-table.js'
import { SettleWindow, claimOutcome } from '../../../src/core/board/settle.js'
import { InvalidArgumentError } from '../../../src/core/errors.js'
import { heartbeatPolicy, liveTimeoutForMs } from '../../../src/core/presence/heartbeat-interval.js'
import { EntryWriter } from './helpers.js'

describe('LeaseTable', () => {
  it("a lease lasts one lease period from the receipt of the last heartbeat, on the receiver's clock", () => {
    const leases = new LeaseTable({ self: 'me', leaseMs: 3000, startedAt: 100_000 })
    leases.heartbeat('amy', 101_000)
    expect(leases.isLive('amy', 104_000)).toBe(true)
    expect(leases.isLive('amy', 104_001)).toBe(false)
    leases.heartbeat('amy', 105_000)
    expect(leases.isLive('amy', 107_000)).toBe(true)
    expect(leases.lastSeen('amy')).toBe(105_000)
    // a reordered (older) receipt time never shortens the lease
    leases.heartbeat('amy', 102_000)
    expect(leases.lastSeen('amy')).toBe(105_000)
    expect(leases.livePeers(107_000)).toEqual(['amy'])
    leases.forget('amy')
    expect(leases.isLive('amy', 107_000)).toBe(false)
  })

  it('a heartbeat announcing a longer interval gives a longer lease, scaled as presence scales it, and capped', () => {
    const policy = heartbeatPolicy(2_000, 10_000)
    const leases = new LeaseTable({ self: 'me', policy, startedAt: 0 })
    leases.heartbeat('big-swarm', 1_000, 8_000)
    expect(leases.isLive('big-swarm', 1_000 + 40_000)).toBe(true)
    expect(leases.isLive('big-swarm', 1_000 + 40_001)).toBe(false)
    // an interval of hours counts as the longest one: nobody makes itself live for hours
    leases.heartbeat('liar', 1_000, 36_000_000)
    expect(leases.isLive('liar', 1_000 + liveTimeoutForMs(policy.maxIntervalMs, policy) + 1)).toBe(false)
  })

  it('this node is always live to itself', () => {
    const leases = new LeaseTable({ self: 'me', leaseMs: 10, startedAt: 0 })
    expect(leases.isLive('me', 1e12)).toBe(true)
  })

  it('a peer never heard from is live for the start-up grace, which grows with the swarm the node knows of', () => {
    const small = new LeaseTable({ self: 'me', leaseMs: 3000, startedAt: 50 })
    expect(small.isLive('stranger', 3049)).toBe(true)
    expect(small.isLive('stranger', 3050)).toBe(false)

    // 320 other daemons at 16 heartbeats a second: a 20 s interval, so the grace is ten times the lease
    const policy = heartbeatPolicy(2_000, 3_000)
    const big = new LeaseTable({ self: 'me', policy, startedAt: 0, knownPeers: () => 320 })
    expect(big.isLive('stranger', 29_999)).toBe(true)
    expect(big.isLive('stranger', 30_000)).toBe(false)
    // a peer that was heard from has its own lease, grace or not
    big.heartbeat('amy', 0)
    expect(big.isLive('amy', 3_001)).toBe(false)
  })

  it('rejects a non-positive lease period', () => {
    expect(() => new LeaseTable({ self: 'me', leaseMs: 0, startedAt: 0 })).toThrow(InvalidArgumentError)
  })
})

describe('SettleWindow', () => {
  it('uses the default until latencies are observed, then k * p99 clamped', () => {
    const w = new SettleWindow({ k: 3, minMs: 100, maxMs: 1000, defaultMs: 700 })
    expect(w.windowMs()).toBe(700)
    for (let i = 1; i <= 100; i++) w.addSample(i)
    expect(w.p99()).toBe(99)
    expect(w.windowMs()).toBe(297)
    w.addSample(5000)
    expect(w.windowMs()).toBe(300) // p99 of 101 samples is now 100
    for (let i = 0; i < 10; i++) w.addSample(5000)
    expect(w.windowMs()).toBe(1000)
  })

  it('clamps to the minimum on a fast network and ignores nonsense samples', () => {
    const w = new SettleWindow({ minMs: 250 })
    w.addSample(-5)
    w.addSample(Number.NaN)
    expect(w.sampleCount).toBe(0)
    w.addSample(1)
    expect(w.windowMs()).toBe(250)
  })

  it('keeps only the most recent samples', () => {
    const w = new SettleWindow({ k: 1, minMs: 0, maxSamples: 4 })
    for (const s of [900, 900, 900, 900]) w.addSample(s)
    expect(w.windowMs()).toBe(900)
    for (const s of [10, 20, 30, 40]) w.addSample(s)
    expect(w.windowMs()).toBe(40)
  })

  it('lets samples older than maxAgeMs go once enough younger ones are in', () => {
    const w = new SettleWindow({ k: 1, minMs: 0, maxAgeMs: 60_000, minSamples: 3 })
    // start-up: slow round trips
    for (let t = 0; t < 10; t++) w.addSample(4000, t * 1000)
    expect(w.windowMs(10_000)).toBe(4000)
    // a quiet mesh later: fast ones, but the start-up ones still count within the age
    for (let t = 20; t < 25; t++) w.addSample(20, t * 1000)
    expect(w.windowMs(25_000)).toBe(4000)
    // once the slow ones are older than a minute, only the young ones count
    expect(w.windowMs(69_500)).toBe(20)
    // and a newer slow one counts at once
    w.addSample(300, 70_000)
    expect(w.windowMs(70_000)).toBe(300)
  })

  it('keeps the newest minSamples whatever their age, so a quiet daemon keeps a window from what it last saw', () => {
    const w = new SettleWindow({ k: 1, minMs: 0, defaultMs: 2000, maxAgeMs: 1000, minSamples: 2 })
    w.addSample(900, 0)
    w.addSample(50, 10)
    w.addSample(60, 20)
    // nothing young at all: the newest two, not the default and not the oldest
    expect(w.windowMs(1_000_000)).toBe(60)
    w.addSample(70, 1_000_000)
    expect(w.windowMs(1_000_000)).toBe(70)
  })

  it('counts by age the same whether the window is asked often or once', () => {
    const often = new SettleWindow({ k: 1, minMs: 0, maxAgeMs: 100, minSamples: 1 })
    const once = new SettleWindow({ k: 1, minMs: 0, maxAgeMs: 100, minSamples: 1 })
    const samples = [
      [500, 0],
      [10, 50],
      [20, 120],
      [700, 130],
      [30, 260],
      [5, 400]
    ]
    for (const [ms, at] of samples) {
      often.addSample(ms, at)
      once.addSample(ms, at)
      for (let t = at; t < at + 150; t += 7) often.windowMs(t)
    }
    for (const now of [400, 450, 499, 500, 501, 1000]) expect(often.windowMs(now)).toBe(once.windowMs(now))
    const fresh = new SettleWindow({ k: 1, minMs: 0, maxAgeMs: 100, minSamples: 1 })
    for (const [ms, at] of samples.slice(0, 5)) fresh.addSample(ms, at)
    expect(fresh.windowMs(300)).toBe(30) // 700 (at 130) is older than 100 ms now, 30 (at 260) is not
    expect(fresh.windowMs(230)).toBe(700) // 700 is 100 ms old: it counts
    expect(once.windowMs(1000)).toBe(5) // nothing young: the newest one
  })

  it('rejects inconsistent options', () => {
    expect(() => new SettleWindow({ minMs: 10, maxMs: 5 })).toThrow(InvalidArgumentError)
    expect(() => new SettleWindow({ k: 0 })).toThrow(InvalidArgumentError)
  })
})

describe('claimOutcome', () => {
  it('answers HELD for the holder and LOST naming the winner for everyone else', () => {
    const w = new EntryWriter()
    const b = new Board()
    for (const e of [
      w.task('p', { id: 't' }, 1),
      w.claim('amy', 't', 1, {}, 2),
      w.claim('bob', 't', 1, {}, 2),
      w.claim('cat', 't', 1, {}, 3)
    ])
      b.apply(e)
    expect(claimOutcome(b, 't', 'amy', 1)).toEqual({ outcome: 'HELD', task: 't', epoch: 1 })
    expect(claimOutcome(b, 't', 'bob', 1)).toEqual({ outcome: 'LOST', task: 't', epoch: 1, winner: 'amy', reason: 'outbid' })
    expect(claimOutcome(b, 't', 'dan', 1)).toEqual({ outcome: 'LOST', task: 't', epoch: 1, winner: 'amy', reason: 'missing' })

    b.apply(w.claim('dan', 't', 2, {}, 4))
    expect(claimOutcome(b, 't', 'amy', 1)).toMatchObject({ outcome: 'LOST', winner: 'dan', reason: 'superseded' })

    b.apply(w.release('dan', 't', 2, {}, 5))
    expect(claimOutcome(b, 't', 'dan', 2)).toEqual({ outcome: 'LOST', task: 't', epoch: 2, reason: 'released' })

    b.apply(w.claim('eve', 't', 3, {}, 6))
    b.apply(w.done('eve', 't', 3, {}, 7))
    expect(claimOutcome(b, 't', 'eve', 3)).toEqual({ outcome: 'HELD', task: 't', epoch: 3 })
    expect(claimOutcome(b, 't', 'amy', 1)).toMatchObject({ outcome: 'LOST', winner: 'eve', reason: 'done' })
  })
})
