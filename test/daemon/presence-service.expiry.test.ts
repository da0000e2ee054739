// A peer that goes silent is told of (onLeft) once its lease has run out,
// by a timer armed for the directory's first deadline: a heartbeat that
// renews the lease moves the peer's departure with it, and a peer that
// announced a longer interval is given the longer lease.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { performance } from 'node:perf_hooks'
import { PresenceService } from '../../src/daemon/presence-service.js'
import { signPresence } from '../../src/core/presence/signed-messages.js'
import type { SwarmGossip } from '../../src/mesh/swarm-gossip.js'
import type { Presence } from '../../src/gen/agency/v1/wire.js'
import { makeIdentities } from '../helpers/identity.js'

const services: PresenceService[] = []
afterEach(() => {
  for (const s of services.splice(0)) s.stop()
  vi.useRealTimers()
  vi.restoreAllMocks()
})

describe('peers leaving', () => {
  it('tells of each silent peer once its lease has run out, and not before', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] })
    let now = 1_000_000
    vi.spyOn(performance, 'now').mockImplementation(() => now)
    const step = async (ms: number): Promise<void> => {
      now += ms
      await vi.advanceTimersByTimeAsync(ms)
    }
    const [me, a, b] = await makeIdentities(3)
    const left: string[] = []
    const p = new PresenceService({
      signer: me.signer,
      name: 'me',
      heartbeatMs: 2000,
      liveTimeoutMs: 10_000,
      addrs: () => [],
      heldClaims: () => [],
      onJoined: () => {},
      onLeft: r => {
        left.push(r.name)
      }
    })
    services.push(p)
    p.start({ publishPresence: async (_h: Presence) => [] } as unknown as SwarmGossip)
    const beat = (who: typeof a, name: string, seq: number, intervalMs: number): Presence =>
      signPresence(who.signer, { name, status: '', claims: [], time: seq, seq, addrs: [], intervalMs, harness: '', sandbox: '' })

    // a beats at the base interval (lease 10 s); b is quiet at 8 times it (lease 80 s)
    expect(p.receive(beat(a, 'a', 1, 2000), 'x')).toBe('accept')
    expect(p.receive(beat(b, 'b', 1, 16_000), 'x')).toBe('accept')
    await step(10_000)
    expect(left).toEqual([]) // live through its deadline
    await step(1000)
    expect(left).toEqual(['a'])
    expect(p.isLive(a.id)).toBe(false)

    // b's heartbeat at 40 s renews its lease: it leaves at 120 s, not at 80 s
    await step(29_000)
    expect(p.receive(beat(b, 'b', 2, 16_000), 'x')).toBe('accept')
    await step(41_000)
    expect(left).toEqual(['a'])
    expect(p.isLive(b.id)).toBe(true)
    await step(39_000)
    expect(left).toEqual(['a'])
    await step(2000)
    expect(left).toEqual(['a', 'b'])

    // both come back, b first: a's shorter lease, due before the one armed for b, is kept on time
    expect(p.receive(beat(b, 'b', 3, 16_000), 'x')).toBe('accept')
    expect(p.receive(beat(a, 'a', 2, 2000), 'x')).toBe('accept')
    await step(11_000)
    expect(left).toEqual(['a', 'b', 'a'])
    await step(70_000)
    expect(left).toEqual(['a', 'b', 'a', 'b'])
  })
})
