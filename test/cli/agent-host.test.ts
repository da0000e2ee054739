// `agentd --agents N`: several daemons in one process. Each has its own
// identity, data dir, API socket and harness; a harness that crashes takes
// nothing from the other agents; a crash of the whole process (SIGKILL) and a
// start with the same arguments bring every agent back with its identity and
// everything it acknowledged.
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { agentConfigs } from '../../src/cli/agent-host.js'
import { restartLocalHost, startLocalHost, type LocalHost } from '../../src/swarm/local-daemon.js'
import { connectAgency, type Agency } from '../../src/client/agency.js'
import type { AgencyClient, LogEntry } from '../../src/gen/agency/v1/api.js'
import { assertBuilt } from '../helpers/agent-loop.js'
import { waitFor } from '../helpers/wait-for.js'

describe('agentConfigs', () => {
  const base = {
    dataDir: '/d',
    name: '',
    grpc: 'unix:/d/agentd.sock',
    listen: ['/ip4/127.0.0.1/tcp/4001', '/ip4/127.0.0.1/tcp/0'],
    metrics: '127.0.0.1:9100',
    ui: '127.0.0.1:7464',
    peers: ['/ip4/10.0.0.1/tcp/4001/p2p/x']
  }

  it('keeps a daemon without --agents exactly as configured', () => {
    expect(agentConfigs(base)).toEqual([base])
  })

  it('lays out --agents 1 as a host does', () => {
    const [a] = agentConfigs(base, 1, 3)
    expect([a.dataDir, a.name, a.grpc]).toEqual(['/d/agent-3', 'agent-3', 'unix:/d/agent-3/agentd.sock'])
  })

  it('gives each agent its own dir, name, socket and ports, and the dashboard to the first alone', () => {
    const [a, b, c] = agentConfigs(base, 3, 5)
    expect([a.dataDir, b.dataDir, c.dataDir]).toEqual(['/d/agent-5', '/d/agent-6', '/d/agent-7'])
    expect([a.name, b.name, c.name]).toEqual(['agent-5', 'agent-6', 'agent-7'])
    expect([a.grpc, c.grpc]).toEqual(['unix:/d/agent-5/agentd.sock', 'unix:/d/agent-7/agentd.sock'])
    expect(c.listen).toEqual(['/ip4/127.0.0.1/tcp/4003', '/ip4/127.0.0.1/tcp/0'])
    expect(c.metrics).toBe('127.0.0.1:9102')
    expect([a.ui, b.ui, c.ui]).toEqual(['127.0.0.1:7464', null, null])
    expect([a.processMetrics, b.processMetrics]).toEqual([true, false])
    expect(c.peers).toEqual(base.peers)
  })

  it('names agents after --name and shifts a TCP API port', () => {
    const [, b] = agentConfigs({ ...base, name: 'box', grpc: '127.0.0.1:7400' }, 2)
    expect(b.name).toBe('box-2')
    expect(b.grpc).toBe('127.0.0.1:7401')
  })

  it('refuses what cannot be shared or counted', () => {
    expect(() => agentConfigs({ ...base, grpc: 'unix:/run/one.sock' }, 2)).toThrow(/names one socket/)
    expect(() => agentConfigs(base, 0)).toThrow(/--agents must be between 1 and/)
    expect(() => agentConfigs(base, 2, 0)).toThrow(/--agent-index/)
    expect(() => agentConfigs({ ...base, listen: ['/ip4/127.0.0.1/tcp/65535'] }, 2)).toThrow(/past 65535/)
  })
})

describe('agentd --agents 3', () => {
  const dirs: string[] = []
  const hosts: LocalHost[] = []
  const clients: Agency[] = []
  afterAll(async () => {
    for (const c of clients) c.close()
    await Promise.allSettled(hosts.map(async h => await h.stop('SIGKILL')))
    await Promise.all(
      dirs.map(async d => {
        await rm(d, { recursive: true, force: true })
      })
    )
  })

  const connect = (grpc: string): Agency => {
    const c = connectAgency(grpc)
    clients.push(c)
    return c
  }
  const entries = async (a: Agency): Promise<LogEntry[]> => {
    const out: LogEntry[] = []
    for await (const e of a.stream((c: AgencyClient) => c.watchLog({ after: 0, follow: false }))) out.push(e)
    return out
  }

  it("a harness crash stays its agent's; a process crash loses nothing any agent acknowledged", async () => {
    assertBuilt()
    const dir = await mkdtemp(join(tmpdir(), 'agency-host-'))
    dirs.push(dir)
    // agent-2's harness dies of a signal at every run; the others' wait.
    const harness = 'cmd:if [ "$AGENCY_AGENT_NAME" = agent-2 ]; then kill -SEGV $$; fi; exec sleep 600'
    const o = {
      dataDir: dir,
      agents: 3,
      firstAgent: 1,
      logFile: join(dir, 'host.log'),
      extraArgs: ['--heartbeat-ms', '500', '--harness', harness, '--sandbox', 'none']
    }
    const host = await startLocalHost(o)
    hosts.push(host)
    expect(host.agents.map(a => a.name)).toEqual(['agent-1', 'agent-2', 'agent-3'])
    expect(new Set(host.agents.map(a => a.peerId)).size).toBe(3)
    expect(host.agents.map(a => a.grpc)).toEqual([1, 2, 3].map(n => `unix:${join(dir, `agent-${n}`, 'agentd.sock')}`))

    // agent-2's harness has crashed and been restarted at least once.
    await waitFor(async () => (await readFile(join(dir, 'agent-2', 'harness.log'), 'utf8').catch(() => '')).includes('signal SIGSEGV'), {
      timeoutMs: 30_000
    })
    for (const n of [1, 3]) expect(await readFile(join(dir, `agent-${n}`, 'harness.log'), 'utf8')).not.toContain('harness exited')

    // Each agent acknowledges a note of its own; each sees all three peers live.
    const acked: string[] = []
    for (const a of host.agents) {
      const c = connect(a.grpc)
      const res = await c.call((x: AgencyClient) => x.recordFinding, {
        kind: 'note',
        text: `from ${a.name}`,
        paths: [],
        tags: [],
        refs: [],
        supersedes: ''
      })
      acked.push(res.entry?.id as string)
      await waitFor(async () => (await c.call((x: AgencyClient) => x.getStatus, {})).peersLive === 2, { timeoutMs: 30_000 })
    }
    for (const c of clients) c.close()
    clients.length = 0

    // The whole process dies without a chance to write anything more.
    expect(await host.stop('SIGKILL')).toBeNull()
    const again = await restartLocalHost(host, o)
    hosts.push(again)
    expect(again.agents.map(a => a.peerId)).toEqual(host.agents.map(a => a.peerId))
    // Each agent's own note is on its disk: there at once, before any peer could send it again.
    for (const [i, a] of again.agents.entries()) {
      const ids = new Set((await entries(connect(a.grpc))).map(e => e.id))
      expect(ids.has(acked[i])).toBe(true)
    }
    // Every acknowledged note reaches every agent again.
    for (const a of again.agents) {
      const c = connect(a.grpc)
      await waitFor(
        async () => {
          const ids = new Set((await entries(c)).map(e => e.id))
          return acked.every(id => ids.has(id))
        },
        { timeoutMs: 30_000 }
      )
    }
  }, 120_000)
})
