// agentd's composition root: imports point inward, the API and the dashboard
// see narrow interfaces (never the Daemon), the parts are built in the wiring
// alone, once, and handed to each other (not reassigned later), and the state
// gauges are read from the parts at scrape time through prom-client's
// collect(), not by replacing the registry's own method; process and libp2p
// metrics are kept only when a metrics endpoint can read them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { MemoryCluster, addrsOf } from '../scenarios/board/helpers.js'
import { waitFor } from '../helpers/wait-for.js'
import type { Daemon } from '../../src/daemon/daemon.js'

const SRC = fileURLToPath(new URL('../../src/', import.meta.url))

/** Every `from '...'` of every source file, as [importing file, imported file], both relative to src/. */
function imports(): Array<[string, string]> {
  const out: Array<[string, string]> = []
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, e.name)
      if (e.isDirectory()) {
        walk(path)
        continue
      }
      if (!e.name.endsWith('.ts')) continue
      for (const m of readFileSync(path, 'utf8').matchAll(/^(?:import|export)[^'"]*from '(\.[^']+)'/gm)) {
        out.push([relative(SRC, path), relative(SRC, resolve(dirname(path), m[1].replace(/\.js$/, '.ts')))])
      }
    }
  }
  walk(SRC)
  return out
}

const folder = (file: string): string => (file.includes('/') ? file.slice(0, file.indexOf('/')) : '.')

describe('the direction of imports', () => {
  const all = imports()
  const from = (f: string): string[] => all.filter(([a]) => folder(a) === f).map(([, b]) => b)

  it('the core imports nothing outside itself but the generated messages', () => {
    expect(from('core').filter(b => !['core', 'gen'].includes(folder(b)))).toEqual([])
  })

  it('metrics imports nothing of the daemon; the client nothing of the daemon, its servers or the programs that use it', () => {
    expect(from('metrics').filter(b => folder(b) === 'daemon')).toEqual([])
    expect(from('client').filter(b => !['client', 'core', 'gen', '.'].includes(folder(b)))).toEqual([])
  })

  it('the daemon imports none of the servers above it (api, ui) nor the commands', () => {
    expect(from('daemon').filter(b => ['api', 'ui', 'cli', 'mcp'].includes(folder(b)))).toEqual([])
  })

  it('the API and the dashboard import no Daemon: they declare the parts they use', () => {
    expect(all.filter(([a, b]) => ['api', 'ui'].includes(folder(a)) && b === 'daemon/daemon.ts')).toEqual([])
  })

  it('no two folders import each other', () => {
    const edges = new Set(all.map(([a, b]) => `${folder(a)} ${folder(b)}`).filter(e => e.split(' ')[0] !== e.split(' ')[1]))
    const both = [...edges].filter(e => edges.has(e.split(' ').reverse().join(' '))).sort()
    expect(both).toEqual([])
  })
})

describe('the wiring', () => {
  const sources = (dir: string): Array<[string, string]> =>
    readdirSync(join(SRC, dir), { recursive: true, encoding: 'utf8' })
      .filter(f => f.endsWith('.ts'))
      .map(f => [join(dir, f), readFileSync(join(SRC, dir, f), 'utf8')])

  it("alone builds the daemon's long-lived parts, and the lifecycle alone starts and stops them", () => {
    const parts = [
      'LogService',
      'BoardService',
      'PresenceService',
      'AssistService',
      'HandoffService',
      'RepoService',
      'RepoWorkspace',
      'DirectIntegration',
      'BackgroundIntegration',
      'Integrator',
      'AgentInbox',
      'NoticeWriter',
      'HarnessService',
      'SwarmGossip',
      'DirectMessaging',
      'RoundTripProbe',
      'PeerDialer',
      'RememberedPeers',
      'AgentWork',
      'PeerContact'
    ]
    const built = sources('.').filter(
      ([f, text]) => f !== 'daemon/wiring.ts' && parts.some(p => new RegExp(`new (\\(await import\\([^)]*\\)\\)\\.)?${p}\\(`).test(text))
    )
    expect(built.map(([f]) => f)).toEqual([])
    const run = sources('.').filter(
      ([f, text]) => f !== 'daemon/daemon.ts' && /\b(startParts|stopParts)\(/.test(text) && f !== 'daemon/startable.ts'
    )
    expect(run.map(([f]) => f)).toEqual([])
  })
})

describe("the daemon's parts", () => {
  const cluster = new MemoryCluster()
  let a: Daemon
  let b: Daemon

  beforeAll(async () => {
    a = await cluster.start({ name: 'a', settle: { fixedMs: 100 } })
    b = await cluster.start({ name: 'b', peers: addrsOf(a) })
    await waitFor(() => a.presence.isLive(b.peerId) && b.presence.isLive(a.peerId), { what: 'the two daemons to see each other' })
  })

  afterAll(async () => {
    await cluster.cleanup()
  })

  it('are built once: none can be replaced from outside', () => {
    for (const part of ['store', 'node', 'presence', 'logService', 'boardService', 'gossip', 'metrics']) {
      expect(() => {
        ;(a as unknown as Record<string, unknown>)[part] = undefined
      }, part).toThrow(TypeError)
    }
    expect(a.boardService).toBeDefined()
  })

  it('the state gauges are read at scrape time from the parts, and the registry keeps its own metrics()', async () => {
    expect(Object.hasOwn(a.metrics.registry, 'metrics')).toBe(false)
    await a.addTasks([{ id: 'gauge-me', title: 'gauge me', description: '', deps: [], scope: [], priority: 0 }])
    expect(await a.claimTask('gauge-me', [], false)).toMatchObject({ outcome: 'HELD' })
    const text = await a.metrics.registry.metrics()
    expect(text).toMatch(/^agentd_peers_live 1$/m)
    expect(text).toMatch(/^agentd_peers_connected 1$/m)
    expect(text).toMatch(/^agentd_claims_held 1$/m)
    expect(text).toMatch(/^agentd_tasks\{state="claimed"\} 1$/m)
    expect(text).toMatch(/^agentd_tasks\{state="done"\} 0$/m)
    expect(text).toMatch(/^agentd_log_entries\{kind="claim"\} 1$/m)
    expect(text).toMatch(/^agentd_outbox_messages 0$/m)
    expect(text).toMatch(/^agentd_shared_branch_tests\{result="all"\} 0$/m)
    expect(text).not.toMatch(/agentd_harness_state/) // no harness beside this daemon
  })
})

describe('process and libp2p metrics', () => {
  const cluster = new MemoryCluster()
  afterAll(async () => {
    await cluster.cleanup()
  })

  it("are kept with a metrics endpoint and not without one; the daemon's own metrics are kept either way", async () => {
    // The Daemon only reads the address (serve starts the endpoint); one per process may keep libp2p's metrics.
    const exported = await cluster.start({ name: 'exported', metrics: '127.0.0.1:0', processMetrics: true })
    const silent = await cluster.start({ name: 'silent', metrics: null, processMetrics: true, peers: addrsOf(exported) })
    await waitFor(() => exported.presence.isLive(silent.peerId) && silent.presence.isLive(exported.peerId), {
      what: 'the two daemons to see each other'
    })
    const withEndpoint = await exported.metrics.registry.metrics()
    expect(withEndpoint).toMatch(/^agentd_process_cpu_seconds_total /m)
    expect(withEndpoint).toMatch(/^agentd_libp2p_connections\{/m)
    expect(withEndpoint).toMatch(/^agentd_peers_live 1$/m)
    const without = await silent.metrics.registry.metrics()
    expect(without).not.toMatch(/agentd_process_cpu_seconds_total|agentd_nodejs_|agentd_libp2p_/)
    expect(without).toMatch(/^agentd_peers_live 1$/m)
    expect(without).toMatch(/^agentd_gossip_messages_received_total\{kind="presence",verdict="accept"\} [1-9]/m)
  })
})
