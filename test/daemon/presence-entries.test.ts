// An entry a daemon gossips says it is alive as a heartbeat does: its peers
// count a fresh one (from gossip, accepted at once) as a sign of life, and the
// author lets its next beat wait until one interval after the entry, never
// beyond two intervals after its last beat, unless the beat has something new
// to say. The clock is the test's.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { randomBytes } from 'node:crypto'
import { PresenceService } from '../../src/daemon/presence-service.js'
import { createSigner, type Signer } from '../../src/core/log/crypto.js'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import type { SwarmGossip } from '../../src/mesh/swarm-gossip.js'
import type { Presence } from '../../src/gen/agency/v1/wire.js'
import { signPresence } from '../../src/core/presence/signed-messages.js'
import type { PeerRecord } from '../../src/core/presence/peer-directory.js'

const INTERVAL = 60_000
const LEASE = 300_000

const services: PresenceService[] = []
afterEach(() => {
  for (const s of services.splice(0)) s.stop()
  vi.restoreAllMocks()
})

async function peerSigner (): Promise<Signer> {
  const key = await generateKeyPair('Ed25519')
  return createSigner(peerIdFromPrivateKey(key).toString(), key.raw)
}

function presence (signer: Signer = createSigner('me', randomBytes(32))): { p: PresenceService, sent: Presence[], held: Array<{ task: string, epoch: number }>, clock: { t: number }, alive: PeerRecord[] } {
  const sent: Presence[] = []
  const held: Array<{ task: string, epoch: number }> = []
  const alive: PeerRecord[] = []
  const clock = { t: 1_000 }
  // A minute between beats, and the test's own clock: no scheduled beat comes in while the test runs.
  const p = new PresenceService({
    signer,
    name: 'me',
    heartbeatMs: INTERVAL,
    liveTimeoutMs: LEASE,
    addrs: () => ['/ip4/127.0.0.1/tcp/1'],
    heldClaims: () => [...held],
    onJoined: () => {},
    onLeft: () => {},
    onAlive: r => { alive.push(r) },
    monoClock: () => clock.t
  })
  services.push(p)
  p.start({ publishPresence: async (h: Presence) => { sent.push(h) } } as unknown as SwarmGossip)
  return { p, sent, held, clock, alive }
}

describe('a beat after an own entry', () => {
  it('waits until one interval after the entry, at most two intervals after the last beat', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(1) // no jitter: the next beat is armed one interval on
    const { p, held, clock } = presence()
    held.push({ task: 'a', epoch: 1 })
    await p.beat()
    const beatAt = clock.t
    expect(p.beatMayWaitMs(beatAt + INTERVAL)).toBe(0) // nothing since: beat when due

    clock.t = beatAt + INTERVAL / 2
    p.ownEntrySent(3)
    expect(p.beatMayWaitMs(beatAt + INTERVAL)).toBe(INTERVAL / 2) // one interval after the entry

    clock.t = beatAt + INTERVAL * 1.8
    p.ownEntrySent(3)
    expect(p.beatMayWaitMs(beatAt + INTERVAL * 1.5)).toBe(INTERVAL / 2) // capped: two intervals after the beat
    expect(p.beatMayWaitMs(beatAt + INTERVAL * 2)).toBe(0)
  })

  it('does not wait for an entry nobody received, or when the beat has something new to say', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(1)
    const { p, held, clock } = presence()
    held.push({ task: 'a', epoch: 1 })
    await p.beat()
    const beatAt = clock.t
    clock.t = beatAt + INTERVAL / 2
    p.ownEntrySent(0)
    expect(p.beatMayWaitMs(beatAt + INTERVAL)).toBe(0)

    p.ownEntrySent(2)
    expect(p.beatMayWaitMs(beatAt + INTERVAL)).toBe(INTERVAL / 2)
    held.push({ task: 'b', epoch: 1 }) // the claims it holds changed: they go out in the beat due now
    expect(p.beatMayWaitMs(beatAt + INTERVAL)).toBe(0)
    held.pop()
    p.status = 'reading the parser'
    expect(p.beatMayWaitMs(beatAt + INTERVAL)).toBe(0)
  })

  it('counts from the latest beat: a beat sent in between (something changed) makes the entry old news', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(1)
    const { p, held, clock } = presence()
    held.push({ task: 'a', epoch: 1 })
    await p.beat()
    clock.t += INTERVAL / 4
    p.ownEntrySent(1)
    clock.t += INTERVAL / 4
    p.status = 'testing'
    await p.beatIfChanged()
    expect(p.beatMayWaitMs(clock.t + INTERVAL)).toBe(0)
  })
})

describe('a peer\'s fresh entry', () => {
  it('keeps a live peer live, as its heartbeat would, and tells the leases with the interval it announced', async () => {
    const { p, clock, alive } = presence()
    const other = await peerSigner()
    const beat = signPresence(other, { name: 'other', status: '', claims: [{ task: 'a', epoch: 1 }], time: 1, seq: 1, addrs: [], intervalMs: INTERVAL, harness: '' })
    expect(p.receive(beat, 'x')).toBe('accept')
    const timeout = p.directory.get(other.author)?.timeoutMs ?? 0
    expect(timeout).toBe(LEASE)

    clock.t += timeout - 1
    p.heardEntryFrom(other.author)
    expect(alive.map(r => [r.peerId, r.intervalMs])).toEqual([[other.author, INTERVAL]])
    clock.t += timeout - 1 // past the heartbeat's timeout, within the entry's
    expect(p.isLive(other.author)).toBe(true)
    clock.t += 2
    expect(p.isLive(other.author)).toBe(false)
  })

  it('does not bring back a peer that is not live, nor make one known, nor count the daemon\'s own', async () => {
    const me = await peerSigner()
    const { p, clock, alive } = presence(me)
    const other = await peerSigner()
    const stranger = await peerSigner()
    p.receive(signPresence(other, { name: 'other', status: '', claims: [], time: 1, seq: 1, addrs: [], intervalMs: INTERVAL, harness: '' }), 'x')
    clock.t += LEASE + 1
    p.heardEntryFrom(other.author)
    p.heardEntryFrom(stranger.author)
    p.heardEntryFrom(me.author)
    expect(alive).toEqual([])
    expect(p.isLive(other.author)).toBe(false)
    expect(p.directory.get(stranger.author)).toBeUndefined()
  })
})
