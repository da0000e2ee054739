// The round-trip probe is the daemon's one ping system: libp2p's connection
// monitor is off, and the probe pings with the muxer's own ping frame (no
// stream, so no protocol negotiation or peer-store write per ping). A
// connection whose ping does not come back in time is closed, as libp2p's
// monitor closed it.
import { afterEach, describe, expect, it } from 'vitest'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { multiaddr } from '@multiformats/multiaddr'
import { createMeshNode, type MeshLibp2p } from '../../src/mesh/node.js'
import { probeIntervalMs, RoundTripProbe, type LoopStalls } from '../../src/mesh/round-trips.js'
import { componentLogger } from '../../src/logger.js'
import { waitFor } from '../helpers/wait-for.js'
import { memoryAddr } from '../helpers/in-process-daemons.js'

const running: Array<{ stop: () => unknown }> = []
afterEach(async () => {
  for (const r of running.splice(0).reverse()) await r.stop()
})

async function node(): Promise<MeshLibp2p> {
  const n = await createMeshNode({ privateKey: await generateKeyPair('Ed25519'), listen: [memoryAddr('check')], connectionMonitor: false })
  await n.start()
  running.push(n)
  return n
}

describe('the round-trip probe as the connection check', () => {
  it('times round trips without the ping protocol, and closes a connection whose ping times out', async () => {
    const a = await node()
    const b = await node()
    // b no longer speaks libp2p's ping protocol: a probe that used it would fail and close the connection
    await b.unhandle('/ipfs/ping/1.0.0')
    const samples: number[] = []
    // This node's loop counts as never stalled, so a late ping is the connection's doing however loaded the machine.
    const stalls = { start: () => {}, stop: () => {}, stalledMs: () => 0 } as unknown as LoopStalls
    const probe = new RoundTripProbe({
      node: a,
      intervalMs: () => 50,
      timeoutMs: 500,
      onSample: (_peer, ms) => {
        samples.push(ms)
      },
      logger: componentLogger('test'),
      stalls
    })
    probe.start()
    running.push(probe)
    await a.dial(multiaddr(b.getMultiaddrs()[0]))
    await waitFor(() => samples.length >= 3, { what: 'three round trips' })
    expect(a.getConnections(b.peerId)).toHaveLength(1)

    // From now on a's pings over that connection never come back.
    const conn = a.getConnections(b.peerId)[0] as unknown as { muxer: { ping: (o?: { signal?: AbortSignal }) => Promise<number> } }
    conn.muxer.ping = async o =>
      await new Promise((_resolve, reject) => {
        o?.signal?.addEventListener('abort', () => {
          reject(o.signal?.reason as Error)
        })
      })
    const before = samples.length
    await waitFor(() => a.getConnections(b.peerId).length === 0, { what: 'the silent connection closed' })
    expect(samples.length - before).toBeLessThanOrEqual(1) // a ping already under way when the muxer went silent may still count
  })
})

describe('a ping that timed out during a stall of this node', () => {
  it('closes nothing: the stall, not the connection, made it late', async () => {
    const a = await node()
    const b = await node()
    // This node's loop counts as stalled the whole time: every wait is its own stall.
    const stalls = { start: () => {}, stop: () => {}, stalledMs: (now = performance.now()) => now } as unknown as LoopStalls
    const probe = new RoundTripProbe({
      node: a,
      intervalMs: () => 20,
      timeoutMs: 100,
      onSample: () => {},
      logger: componentLogger('test'),
      stalls
    })
    await a.dial(multiaddr(b.getMultiaddrs()[0]))
    let pings = 0
    const conn = a.getConnections(b.peerId)[0] as unknown as { muxer: { ping: (o?: { signal?: AbortSignal }) => Promise<number> } }
    conn.muxer.ping = async o => {
      pings++
      return await new Promise((_resolve, reject) => {
        o?.signal?.addEventListener('abort', () => {
          reject(o.signal?.reason as Error)
        })
      })
    }
    probe.start()
    running.push(probe)
    await waitFor(() => pings >= 3, { what: 'three pings timed out' })
    expect(a.getConnections(b.peerId)).toHaveLength(1)
  })
})

describe('probeIntervalMs', () => {
  it('is the heartbeat interval unless that would leave a connection unchecked for longer than checkMs', () => {
    expect(probeIntervalMs(2_000, 6, 60_000)).toBe(2_000)
    expect(probeIntervalMs(16_000, 8, 60_000)).toBe(7_500)
    expect(probeIntervalMs(16_000, 0, 60_000)).toBe(16_000)
  })
})
