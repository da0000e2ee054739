// A fresh entry stands in for its author's heartbeat: the author's next beat
// waits an interval from the entry, and at a peer the entry keeps the author
// live (its lease renewed) as a heartbeat would. Only a peer live already is
// refreshed: an entry does not bring back a peer that went quiet.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { performance } from 'node:perf_hooks'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { PresenceService } from '../../src/daemon/presence-service.js'
import { createSigner, type Signer } from '../../src/core/log/crypto.js'
import { signPresence } from '../../src/core/presence/signed-messages.js'
import type { PeerRecord } from '../../src/core/presence/peer-directory.js'
import type { SwarmGossip } from '../../src/mesh/swarm-gossip.js'
import type { Presence } from '../../src/gen/agency/v1/wire.js'

const services: PresenceService[] = []
afterEach(() => {
  for (const s of services.splice(0)) s.stop()
  vi.useRealTimers()
  vi.restoreAllMocks()
})

async function makeSigner(): Promise<Signer> {
  const key = await generateKeyPair('Ed25519')
  return createSigner(peerIdFromPrivateKey(key).toString(), key.raw)
}

function presence(
  signer: Signer,
  heartbeatMs: number,
  liveTimeoutMs: number,
  signs: PeerRecord[] = []
): { p: PresenceService; sent: Presence[] } {
  const sent: Presence[] = []
  const p = new PresenceService({
    signer,
    name: 'me',
    heartbeatMs,
    liveTimeoutMs,
    addrs: () => ['/ip4/127.0.0.1/tcp/1'],
    heldClaims: () => [],
    onJoined: () => {},
    onLeft: () => {},
    onSignOfLife: r => {
      signs.push(r)
    }
  })
  services.push(p)
  p.start({
    publishPresence: async (h: Presence) => {
      sent.push(h)
    }
  } as unknown as SwarmGossip)
  return { p, sent }
}

describe('an own entry as a heartbeat', () => {
  it("postpones the author's next beat by an interval", async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] })
    const { p, sent } = presence(await makeSigner(), 1000, 5000)
    await vi.advanceTimersByTimeAsync(0)
    expect(sent).toHaveLength(1) // the first beat, at start
    await vi.advanceTimersByTimeAsync(800)
    p.published()
    await vi.advanceTimersByTimeAsync(850)
    expect(sent).toHaveLength(1) // due at 900-1000 ms without the entry; now 900-1000 ms after it
    await vi.advanceTimersByTimeAsync(200)
    expect(sent).toHaveLength(2)
  })

  it('keeps a live author live at its peers and renews its lease; a peer that went quiet stays gone', async () => {
    // liveness reads the monotonic clock: this one moves only when told
    let now = 1_000_000
    vi.spyOn(performance, 'now').mockImplementation(() => now)
    const signs: PeerRecord[] = []
    const { p } = presence(await makeSigner(), 1000, 3000, signs)
    const author = await makeSigner()
    const beat = signPresence(author, {
      name: 'author',
      status: '',
      claims: [],
      time: Date.now(),
      seq: 1,
      addrs: [],
      intervalMs: 1000,
      harness: '',
      sandbox: ''
    })
    expect(p.receive(beat, 'relay')).toBe('accept')
    // an entry of its every 2 s, and no heartbeat: live throughout, its lease renewed at its interval
    for (let t = 0; t < 4; t++) {
      now += 2000
      p.heardFrom(author.author)
      expect(p.isLive(author.author)).toBe(true)
    }
    expect(signs.map(r => [r.peerId, r.intervalMs])).toEqual(Array(4).fill([author.author, 1000]))
    // silent past its timeout: gone, and an entry does not bring it back
    now += 4000
    expect(p.isLive(author.author)).toBe(false)
    p.heardFrom(author.author)
    expect(p.isLive(author.author)).toBe(false)
    expect(signs).toHaveLength(4)
    // nor does an entry make a live peer of an author never heard from
    p.heardFrom((await makeSigner()).author)
    expect(p.livePeers()).toHaveLength(0)
  })
})
