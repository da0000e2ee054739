// libp2p's own metrics reach /metrics as agentd_libp2p_*: two real libp2p
// nodes over TCP on loopback report their connection, streams and bytes.
import { afterEach, describe, expect, it } from 'vitest'
import { createLibp2p, type Libp2p } from 'libp2p'
import { tcp } from '@libp2p/tcp'
import { noise } from '@chainsafe/libp2p-noise'
import { yamux } from '@chainsafe/libp2p-yamux'
import { identify } from '@libp2p/identify'
import { ping } from '@libp2p/ping'
import { Registry } from 'prom-client'
import { createLibp2pMetrics } from '../../src/metrics/libp2p-metrics.js'
import { createMetrics } from '../../src/metrics/metrics.js'
import { findTool, missingTool, PROMETHEUS_INSTALL } from './support/tools.js'
import { promtoolCheckMetrics } from './support/promtool.js'

type PingNode = Libp2p<{ ping: ReturnType<ReturnType<typeof ping>>; identify: ReturnType<ReturnType<typeof identify>> }>

const nodes: PingNode[] = []

async function node(registry: Registry): Promise<PingNode> {
  const n = await createLibp2p({
    addresses: { listen: ['/ip4/127.0.0.1/tcp/0'] },
    transports: [tcp()],
    connectionEncrypters: [noise()],
    streamMuxers: [yamux()],
    metrics: createLibp2pMetrics(registry),
    services: { identify: identify(), ping: ping() }
  })
  nodes.push(n)
  return n
}

async function values(registry: Registry, name: string): Promise<Array<{ labels: Record<string, unknown>; value: number }>> {
  const all = await registry.getMetricsAsJSON()
  return all.find(m => m.name === name)?.values ?? []
}

async function value(registry: Registry, name: string, labels: Record<string, string>): Promise<number | undefined> {
  const found = (await values(registry, name)).find(v => Object.entries(labels).every(([k, x]) => v.labels[k] === x))
  return found?.value
}

afterEach(async () => {
  await Promise.all(
    nodes.splice(0).map(async n => {
      await n.stop()
    })
  )
})

describe('libp2p metrics under agentd_libp2p_*', () => {
  it('reports connections, streams and bytes by protocol, and nothing outside agentd_', async () => {
    const ra = new Registry()
    const rb = new Registry()
    const a = await node(ra)
    const b = await node(rb)
    await a.services.ping.ping(b.getMultiaddrs()[0])

    expect(await value(ra, 'agentd_libp2p_connections', { direction: 'outbound', state: 'open' })).toBe(1)
    expect(await value(rb, 'agentd_libp2p_connections', { direction: 'inbound', state: 'open' })).toBe(1)
    expect(await value(ra, 'agentd_libp2p_connections_opened_total', { direction: 'outbound' })).toBe(1)
    expect(await value(ra, 'agentd_libp2p_transfer_bytes_total', { protocol: '/ipfs/ping/1.0.0', direction: 'sent' })).toBeGreaterThan(0)
    expect(await value(rb, 'agentd_libp2p_transfer_bytes_total', { protocol: '/ipfs/ping/1.0.0', direction: 'received' })).toBeGreaterThan(
      0
    )
    const all = await value(ra, 'agentd_libp2p_transfer_bytes_total', { protocol: 'all', direction: 'sent' })
    expect(all).toBeGreaterThanOrEqual(
      (await value(ra, 'agentd_libp2p_transfer_bytes_total', { protocol: '/ipfs/ping/1.0.0', direction: 'sent' }))!
    )
    expect(await value(ra, 'agentd_libp2p_handshake_errors_total', {})).toBe(0)

    const names = (await ra.getMetricsAsJSON()).map(m => m.name)
    expect(names.filter(n => !n.startsWith('agentd_libp2p_'))).toEqual([])
  })

  it('counters only grow across scrapes', async () => {
    const ra = new Registry()
    const a = await node(ra)
    const b = await node(new Registry())
    await a.services.ping.ping(b.getMultiaddrs()[0])
    const first = await value(ra, 'agentd_libp2p_transfer_bytes_total', { protocol: 'all', direction: 'sent' })
    await a.services.ping.ping(b.getMultiaddrs()[0])
    const second = await value(ra, 'agentd_libp2p_transfer_bytes_total', { protocol: 'all', direction: 'sent' })
    expect(first).toBeGreaterThan(0)
    expect(second).toBeGreaterThan(first!)
  })

  it('a node created later in the same process counts only its own traffic', async () => {
    const ra = new Registry()
    const a = await node(ra)
    const b = await node(new Registry())
    await a.services.ping.ping(b.getMultiaddrs()[0])
    const rc = new Registry()
    const c = await node(rc)
    expect(await value(rc, 'agentd_libp2p_connections', { direction: 'outbound', state: 'open' })).toBe(0)
    await c.services.ping.ping(b.getMultiaddrs()[0])
    expect(await value(rc, 'agentd_libp2p_connections', { direction: 'outbound', state: 'open' })).toBe(1)
    expect(await value(ra, 'agentd_libp2p_connections', { direction: 'outbound', state: 'open' })).toBe(1)
  })

  it("passes `promtool check metrics` together with the daemon's own metrics", async ctx => {
    const promtool = findTool('promtool')
    if (promtool == null) ctx.skip(missingTool('promtool check of libp2p metrics', 'promtool', PROMETHEUS_INSTALL))
    const m = createMetrics({ version: 'test', swarm: 'lint' })
    const a = await node(m.registry)
    const b = await node(new Registry())
    await a.services.ping.ping(b.getMultiaddrs()[0])
    const lint = await promtoolCheckMetrics(promtool!, await m.registry.metrics())
    expect(lint.problems).toBe('')
    expect(lint.code).toBe(0)
  })
})
