// When a daemon's heartbeat goes out at once and when it waits for its turn:
// a change goes out at once, except a change of which claims a daemon holds
// when its last heartbeat already held one (its lease is at the swarm's
// interval everywhere; the next beat, due within it, carries the list), and
// a first claim, whose beat is brought forward to within the swarm's
// interval (a burst of claims is not doubled by a burst of beats).
import { afterEach, describe, expect, it, vi } from 'vitest'
import { randomBytes } from 'node:crypto'
import { PresenceService } from '../../src/daemon/presence-service.js'
import { createSigner } from '../../src/core/log/crypto.js'
import type { SwarmGossip } from '../../src/mesh/swarm-gossip.js'
import type { Presence } from '../../src/gen/agency/v1/wire.js'

const services: PresenceService[] = []
afterEach(() => {
  for (const s of services.splice(0)) s.stop()
  vi.useRealTimers()
})

function presence(): { p: PresenceService; sent: Presence[]; held: Array<{ task: string; epoch: number }> } {
  const sent: Presence[] = []
  const held: Array<{ task: string; epoch: number }> = []
  // A minute between beats: no scheduled beat comes in while the test runs.
  const p = new PresenceService({
    signer: createSigner('me', randomBytes(32)),
    name: 'me',
    heartbeatMs: 60_000,
    liveTimeoutMs: 300_000,
    addrs: () => ['/ip4/127.0.0.1/tcp/1'],
    heldClaims: () => [...held],
    onJoined: () => {},
    onLeft: () => {}
  })
  services.push(p)
  p.start({
    publishPresence: async (h: Presence) => {
      sent.push(h)
    }
  } as unknown as SwarmGossip)
  return { p, sent, held }
}

describe('beatIfChanged', () => {
  it("beats within the swarm's interval for a first claim, at once for a status line or no claim left; a holder's next claim waits for the next beat", async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] })
    const { p, sent, held } = presence()
    await p.beat()
    const count = sent.length
    held.push({ task: 'a', epoch: 1 })
    await p.beatIfChanged()
    expect(sent).toHaveLength(count) // from quiet to holding: not at once
    // the quiet beat was due in 108-120 s; brought forward to within the interval (60 s)
    await vi.advanceTimersByTimeAsync(60_000)
    expect(sent).toHaveLength(count + 1)
    expect(sent.at(-1)?.claims.map(c => c.task)).toEqual(['a'])
    expect(sent.at(-1)?.intervalMs).toBe(60_000) // a holder's interval: the lease is the swarm's from now on

    held.push({ task: 'b', epoch: 1 })
    await p.beatIfChanged()
    expect(sent).toHaveLength(count + 1) // already holding: b rides in the next beat

    p.status = 'reading the parser'
    await p.beatIfChanged()
    expect(sent).toHaveLength(count + 2) // something else changed: at once, with both claims
    expect(sent.at(-1)?.claims.map(c => c.task)).toEqual(['a', 'b'])

    held.splice(0)
    await p.beatIfChanged()
    expect(sent).toHaveLength(count + 3) // holding nothing any more: at once
    expect(sent.at(-1)?.claims).toEqual([])

    await p.beatIfChanged()
    expect(sent).toHaveLength(count + 3) // nothing changed
  })
})
