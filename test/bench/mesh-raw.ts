// The baseline side of the mesh benchmark in one process (the TCP processes
// are in mesh-tcp-pair.ts): plain libp2p nodes with the same
// stack as agentd (createMeshNode) and gossipsub, no daemon around them,
// publishing payloads of the same size as agency's entries. The ratio between
// the two is agency's overhead: signatures, validation, storage, presence,
// anti-entropy.
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { createMeshNode, type MeshLibp2p } from '../../src/mesh/node.js'
import type { MeshRunOptions } from './mesh-agency.js'
import { ownCpuSeconds, summarize, type SetupResult, type VisibilityRecord } from './mesh-stats.js'
import { waitFor } from '../helpers/wait-for.js'

function pickEarlier<T>(items: T[], i: number, k: number): T[] {
  const out = new Set<T>()
  for (let j = 0; j < Math.min(k, i) * 3 && out.size < Math.min(k, i); j++) out.add(items[Math.floor(Math.random() * i)])
  return [...out]
}

function payload(seq: number, bytes: number): Uint8Array {
  const data = Buffer.alloc(bytes)
  data[0] = 1
  data.writeUInt32BE(seq, 1)
  for (let i = 5; i < bytes; i++) data[i] = Math.floor(Math.random() * 256)
  return data
}

/** N raw gossipsub nodes in this process over the memory transport. */
export async function rawInProcess(n: number, payloadBytes: number, o: MeshRunOptions): Promise<SetupResult> {
  const rssBefore = process.memoryUsage().rss
  const started = performance.now()
  const topic = `/agency/bench/${randomUUID()}`
  const nodes: MeshLibp2p[] = []
  const seen = new Map<number, Map<number, number>>()
  try {
    for (let i = 0; i < n; i++) {
      const node = await createMeshNode({ privateKey: await generateKeyPair('Ed25519'), listen: [`/memory/raw-bench-${randomUUID()}`] })
      await node.start()
      node.services.pubsub.subscribe(topic)
      node.services.pubsub.addEventListener('message', evt => {
        const seq = Buffer.from(evt.detail.data).readUInt32BE(1)
        let m = seen.get(seq)
        if (m === undefined) seen.set(seq, (m = new Map()))
        if (!m.has(i)) m.set(i, performance.now())
      })
      for (const peer of pickEarlier(nodes, i, o.bootstrap)) await node.dial(peer.getMultiaddrs()[0]).catch(() => {})
      nodes.push(node)
    }
    const startSeconds = (performance.now() - started) / 1000
    await waitFor(() => nodes.every(x => x.services.pubsub.getSubscribers(topic).length >= Math.min(n - 1, 2)), {
      timeoutMs: 300_000,
      intervalMs: 100
    }).catch(() => {})
    await sleep(Math.max(3_000, o.settleMs ?? 0)) // a few gossipsub heartbeats to build the mesh, and the same settling as agency's

    const cpu0 = ownCpuSeconds()
    await sleep(o.idleMs)
    const idleCpuPerNode = (ownCpuSeconds() - cpu0) / (o.idleMs / 1000) / n
    const rssPerNodeBytes = (process.memoryUsage().rss - rssBefore) / n

    const published: Array<{ seq: number; at: number; from: number }> = []
    const busy0 = ownCpuSeconds()
    const busyStart = performance.now()
    for (let k = 0; k < 2 * o.perKind; k++) {
      const from = Math.floor(Math.random() * n)
      const at = performance.now()
      await nodes[from].services.pubsub.publish(topic, payload(k, payloadBytes)).catch(() => {})
      published.push({ seq: k, at, from })
      await sleep(o.spacingMs)
    }
    await waitFor(() => published.every(p => (seen.get(p.seq)?.size ?? 0) >= n - 1), { timeoutMs: o.waitMs, intervalMs: 100 }).catch(
      () => {}
    )
    const busyCpuPerNode = (ownCpuSeconds() - busy0) / ((performance.now() - busyStart) / 1000) / n
    const records: VisibilityRecord[] = published.map(p => {
      const delays = [...(seen.get(p.seq) ?? new Map<number, number>())].filter(([i]) => i !== p.from).map(([, t]) => t - p.at)
      return { kind: 'raw', delays, missing: n - 1 - delays.length }
    })
    return {
      setup: 'in-process, memory transport',
      system: 'raw gossipsub',
      nodes: n,
      ...summarize(records, n - 1),
      payloadBytes,
      idleCpuPerNode,
      busyCpuPerNode,
      rssPerNodeBytes,
      startSeconds
    }
  } finally {
    await Promise.allSettled(
      nodes.map(async x => {
        await x.stop()
      })
    )
  }
}
