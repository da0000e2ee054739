// A flooding peer is throttled while the others keep working. Three hostile
// in-process nodes each flood one agentd process in one way: direct messages
// over the rate limit, sync requests over the rate limit, and invalid gossip.
// Each is rate limited, banned and disconnected, and cannot reconnect, while
// two honest daemons keep exchanging direct messages and log entries.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { multiaddr } from '@multiformats/multiaddr'
import { lpStream } from '@libp2p/utils'
import { PROCESS_TEST_TIMEOUT_MS, ProcessCluster, type AgentdProcess } from '../../helpers/agentd-process.js'
import { waitFor } from '../../helpers/wait-for.js'
import { createMeshNode, type MeshLibp2p } from '../../../src/mesh/node.js'
import { DM_PROTOCOL, MAX_DM_FRAME_BYTES, SYNC_PROTOCOL, swarmTopic } from '../../../src/mesh/constants.js'
import { MAX_SYNC_FRAME_BYTES } from '../../../src/mesh/log-sync.js'
import { DirectMessage, SyncRequest } from '../../../src/gen/agency/v1/wire.js'
import type { AgencyClient } from '../../../src/gen/agency/v1/api.js'
import { metricSum, metricsText } from '../../helpers/trust.js'

const TOPIC = swarmTopic('default')
const cluster = new ProcessCluster()
const floods: MeshLibp2p[] = []
let target: AgentdProcess
let honest: AgentdProcess

beforeAll(async () => {
  target = await cluster.start({ name: 'target', metrics: true })
  honest = await cluster.start({ name: 'honest', metrics: true, peers: [target.listenAddr] })
  await waitFor(async () => (await target.peers()).some(p => p.name === 'honest' && p.live), {
    what: 'the target to see the honest peer',
    timeoutMs: 60_000
  })
}, PROCESS_TEST_TIMEOUT_MS)

afterAll(async () => {
  await Promise.allSettled(
    floods.map(async n => {
      await n.stop()
    })
  )
  await cluster.cleanup()
}, PROCESS_TEST_TIMEOUT_MS)

async function flooder(): Promise<MeshLibp2p> {
  const node = await createMeshNode({ privateKey: await generateKeyPair('Ed25519'), listen: ['/ip4/127.0.0.1/tcp/0'] })
  await node.start()
  floods.push(node)
  await node.dial(multiaddr(target.listenAddr), { signal: AbortSignal.timeout(20_000) })
  return node
}

function connectedTo(node: MeshLibp2p): boolean {
  return node.getConnections().some(c => c.remotePeer.toString() === target.peerId && c.status === 'open')
}

async function targetMetric(name: string, labels: Record<string, string> = {}): Promise<number> {
  return metricSum(await metricsText(target.metricsUrl), name, labels)
}

/**
 * Floods `protocol` from `node` until the target drops the connection: each
 * round opens a stream and writes frames without waiting, until the stream or
 * the connection dies. Returns the rounds it took.
 */
async function floodUntilDropped(
  node: MeshLibp2p,
  protocol: string,
  frames: () => Uint8Array[],
  maxDataLength: number,
  end: 'close' | 'abort'
): Promise<number> {
  let rounds = 0
  while (connectedTo(node) && rounds < 500) {
    rounds++
    try {
      const stream = await node.dialProtocol(multiaddr(target.listenAddr), protocol, { signal: AbortSignal.timeout(5000) })
      const lp = lpStream(stream, { maxDataLength })
      const sent = frames()
      for (const f of sent) await lp.write(f, { signal: AbortSignal.timeout(5000) })
      // Read every answer, until the target has answered all or cut the stream.
      let answers = 0
      while (
        answers < sent.length &&
        (await lp.read({ signal: AbortSignal.timeout(5000) }).then(
          () => true,
          () => false
        ))
      )
        answers++
      // On the DM protocol a reset between frames counts as invalid data: end those politely.
      if (end === 'close')
        await stream.close({ signal: AbortSignal.timeout(5000) }).catch(() => {
          stream.abort(new Error('next round'))
        })
      else stream.abort(new Error('next round'))
    } catch {
      // Refused or reset, which is what we are after; let the connection's state catch up before the next round.
      await sleep(50)
    }
  }
  return rounds
}

async function sendDm(from: AgentdProcess, to: string, text: string): Promise<string> {
  return (await from.api.call((c: AgencyClient) => c.sendMessage, { to, text, thread: '', replyTo: '' })).id
}

async function note(d: AgentdProcess, text: string): Promise<string> {
  return (await d.api.call((c: AgencyClient) => c.recordFinding, { kind: 'note', text, paths: [], tags: [], refs: [], supersedes: '' }))
    .entry?.id as string
}

/** Honest traffic both ways: a DM each way and an entry each way, all arriving. */
async function honestRound(label: string): Promise<void> {
  const toTarget = await sendDm(honest, 'target', `${label}: honest to target`)
  const toHonest = await sendDm(target, 'honest', `${label}: target to honest`)
  const e1 = await note(honest, `${label}: a finding from the honest peer`)
  const e2 = await note(target, `${label}: a finding from the target`)
  await waitFor(async () => (await target.inbox()).some(m => m.id === toTarget), {
    what: `${label}: the target to receive the honest DM`,
    timeoutMs: 60_000
  })
  await waitFor(async () => (await honest.inbox()).some(m => m.id === toHonest), {
    what: `${label}: the honest peer to receive the target's DM`,
    timeoutMs: 60_000
  })
  await waitFor(
    async () =>
      await target.api
        .call((c: AgencyClient) => c.getEntry, { id: e1 })
        .then(
          () => true,
          () => false
        ),
    { what: `${label}: the target to hold the honest entry`, timeoutMs: 60_000 }
  )
  await waitFor(
    async () =>
      await honest.api
        .call((c: AgencyClient) => c.getEntry, { id: e2 })
        .then(
          () => true,
          () => false
        ),
    { what: `${label}: the honest peer to hold the target's entry`, timeoutMs: 60_000 }
  )
}

describe('a flooding peer', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('is rate limited on direct messages, banned and disconnected, while honest DMs and entries flow', async () => {
    const limitedBefore = await targetMetric('agentd_peer_rate_limited_total', { protocol: 'dm' })
    const bansBefore = await targetMetric('agentd_peer_bans_total')
    const node = await flooder()
    // Valid messages, far more than the per-peer budget (500 per 10 s), as fast as the stream takes them.
    const burst = (): Uint8Array[] =>
      Array.from({ length: 600 }, () =>
        DirectMessage.encode({
          id: randomUUID(),
          from: '',
          fromName: 'flood',
          to: target.peerId,
          thread: '',
          replyTo: '',
          text: 'flood',
          time: Date.now()
        }).finish()
      )
    const started = Date.now()
    const [rounds] = await Promise.all([
      floodUntilDropped(node, DM_PROTOCOL, burst, MAX_DM_FRAME_BYTES, 'close'),
      honestRound('during the DM flood')
    ])
    const elapsedMs = Date.now() - started
    expect(rounds).toBeLessThan(500)
    expect(await targetMetric('agentd_peer_rate_limited_total', { protocol: 'dm' })).toBeGreaterThan(limitedBefore)
    expect(await targetMetric('agentd_peer_bans_total')).toBeGreaterThan(bansBefore)
    // Banned: a new connection is refused.
    const redial = await node
      .dial(multiaddr(target.listenAddr), { signal: AbortSignal.timeout(10_000) })
      .then(() => node.services.ping.ping(multiaddr(target.listenAddr), { signal: AbortSignal.timeout(5000) }))
      .then(
        () => 'connected',
        () => 'refused'
      )
    expect(redial).toBe('refused')
    // The target took no more of the flood into its inbox than its budget allows
    // (500 per peer per 10 s window), far less than was sent.
    const flooded = (await target.inbox()).filter(m => m.text === 'flood').length
    expect(flooded).toBeGreaterThan(0)
    expect(flooded).toBeLessThanOrEqual(500 * (Math.floor(elapsedMs / 10_000) + 1))
    expect(flooded).toBeLessThan(600 * rounds)
  })

  it('is rate limited on sync requests, banned and disconnected, while honest DMs and entries flow', async () => {
    const limitedBefore = await targetMetric('agentd_peer_rate_limited_total', { protocol: 'sync' })
    const bansBefore = await targetMetric('agentd_peer_bans_total')
    const node = await flooder()
    // One honest-looking request per stream, many streams: the budget is 30 exchanges per 10 s.
    const request = (): Uint8Array[] => [SyncRequest.encode({ have: [], digest: Buffer.alloc(0) }).finish()]
    const [rounds] = await Promise.all([
      floodUntilDropped(node, SYNC_PROTOCOL, request, MAX_SYNC_FRAME_BYTES, 'abort'),
      honestRound('during the sync flood')
    ])
    expect(rounds).toBeLessThan(500)
    expect(await targetMetric('agentd_peer_rate_limited_total', { protocol: 'sync' })).toBeGreaterThan(limitedBefore)
    expect(await targetMetric('agentd_peer_bans_total')).toBeGreaterThan(bansBefore)
    await waitFor(() => !connectedTo(node), { what: 'the sync flooder to be disconnected' })
  })

  it('is banned for invalid gossip and disconnected, while honest DMs and entries flow', async () => {
    const bansBefore = await targetMetric('agentd_peer_bans_total')
    const rejectedBefore = await targetMetric('agentd_gossip_messages_received_total', { verdict: 'reject' })
    const node = await flooder()
    node.services.pubsub.subscribe(TOPIC)
    await waitFor(() => node.services.pubsub.getSubscribers(TOPIC).some(p => p.toString() === target.peerId), {
      what: 'the gossip flooder to see the target on the topic',
      timeoutMs: 30_000
    })
    const flood = (async () => {
      for (let i = 0; i < 2000 && connectedTo(node); i++) {
        // An unknown frame type: undecodable, so rejected by the validator.
        await node.services.pubsub.publish(TOPIC, Buffer.from(`\x09junk ${i} ${randomUUID()}`)).catch(() => {})
        if (i % 20 === 19) await sleep(50)
      }
    })()
    await Promise.all([flood, honestRound('during the gossip flood')])
    await waitFor(() => !connectedTo(node), { what: 'the gossip flooder to be disconnected', timeoutMs: 60_000 })
    expect(await targetMetric('agentd_gossip_messages_received_total', { verdict: 'reject' })).toBeGreaterThan(rejectedBefore)
    expect(await targetMetric('agentd_peer_bans_total')).toBeGreaterThan(bansBefore)
  })

  it('leaves the honest peers connected and working after all three floods', async () => {
    expect((await target.status()).peersConnected).toBe(1)
    expect((await target.peers()).map(p => p.name)).toEqual(['honest'])
    await honestRound('after the floods')
    expect(await targetMetric('agentd_peer_bans_total')).toBeGreaterThanOrEqual(3)
  })
})
