// deploy/docker-compose.yml for real: four agentd containers (the seed and
// three `agentd` replicas) with the scripted agent, the shared repository on a
// volume, Prometheus finding the daemons through Docker's DNS. Driven only
// through `docker compose` and `docker`, as an operator would: the test talks
// to the daemons with `agency` inside their containers, and to Prometheus from
// the seed's container, over the project's internal network.
//
// test/deploy/run.sh (npm run test:deploy) prepares the machine (dockerd, the
// images) and the environment this file reads; run alone, it skips.
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { waitFor } from '../helpers/wait-for.js'

const run = promisify(execFile)
const ROOT = join(import.meta.dirname, '../..')
const PROJECT = process.env.AGENCY_DEPLOY_PROJECT
const COMPOSE = JSON.parse(process.env.AGENCY_DEPLOY_COMPOSE ?? '[]') as string[]
const ready = PROJECT != null && COMPOSE.length > 0 && process.env.AGENCY_TEST_AGENTD_IMAGE != null
if (!ready)
  process.stderr.write(
    'SKIP test/deploy/compose-swarm.deploy.ts: run it with `npm run test:deploy` (as root), which prepares dockerd and the images\n'
  )

const SWARM = 'deploy-test'
const REPLICAS = 3
const example = JSON.parse(readFileSync(join(ROOT, 'examples/calc/project.json'), 'utf8')) as {
  goal: string
  testCommand: string
  tasks: Array<{ id: string; title: string; file: string; scope: string[]; deps: string[]; priority: number }>
}

const env = { ...process.env, AGENCY_EXAMPLE: 'calc', AGENCY_SWARM: SWARM }

async function sh(file: string, args: string[], timeout = 120_000, input?: string): Promise<string> {
  const running = run(file, args, { cwd: ROOT, env, timeout, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' })
  running.child.stdin?.end(input ?? '')
  return (await running).stdout
}
const docker = async (...args: string[]): Promise<string> => await sh('docker', args)
const compose = async (...args: string[]): Promise<string> =>
  await sh(
    COMPOSE[0],
    [...COMPOSE.slice(1), '-p', PROJECT as string, '-f', 'deploy/docker-compose.yml', '-f', 'deploy/docker-compose.test.yml', ...args],
    600_000
  )
/** `agency` inside a container, as the image's user, with --json. */
const agency = async <T = any>(container: string, ...args: string[]): Promise<T> =>
  JSON.parse(await docker('exec', container, 'agency', ...args, '--json')) as T
/** The same, with `input` on its standard input. */
const agencyWith = async <T = any>(input: string, container: string, ...args: string[]): Promise<T> =>
  JSON.parse(await sh('docker', ['exec', '-i', container, 'agency', ...args, '--json'], 120_000, input)) as T
const inspect = async <T = any>(what: string): Promise<T> => (JSON.parse(await docker('inspect', what)) as T[])[0]

interface Daemon {
  container: string
  peerId: string
  ip: string
}
let daemons: Daemon[] = []
let seed: Daemon
let down = false
let failed = false

/** GET a Prometheus API path from inside the seed's container (Prometheus publishes no port here). */
async function prometheus<T = any>(path: string): Promise<T> {
  const script =
    'fetch("http://prometheus:9090" + process.argv[1]).then(r => r.text()).then(t => process.stdout.write(t), e => { console.error(String(e)); process.exit(1) })'
  const body = JSON.parse(await docker('exec', seed.container, 'node', '-e', script, path)) as { status: string; data: T }
  expect(body.status).toBe('success')
  return body.data
}

async function containersOf(...services: string[]): Promise<string[]> {
  const ids = (await compose('ps', '-q', ...services)).split('\n').filter(s => s !== '')
  return await Promise.all(ids.map(async id => ((await inspect(id)).Name as string).replace(/^\//, '')))
}

async function describeDaemon(container: string): Promise<Daemon> {
  const status = await agency(container, 'status', '--full')
  const info = await inspect(container)
  const nets = Object.values<{ IPAddress: string }>(info.NetworkSettings.Networks)
  return { container, peerId: status.self.peerId, ip: nets[0].IPAddress }
}

describe.skipIf(!ready)(`docker compose: seed + ${REPLICAS} agentd, Prometheus (project ${PROJECT ?? '-'})`, () => {
  beforeAll(async () => {
    await compose('up', '-d', '--no-build', '--scale', `agentd=${REPLICAS}`)
    const names = await containersOf('seed', 'agentd')
    expect(names).toHaveLength(1 + REPLICAS)
    // The one-shot service created the shared repository from the calc example and exited 0.
    const all = (await compose('ps', '-a', '--format', '{{.Service}} {{.State}} {{.ExitCode}}')).split('\n')
    expect(all).toContain('shared-repo exited 0')
    daemons = await waitFor(async () => await Promise.all(names.map(describeDaemon)), {
      timeoutMs: 120_000,
      what: 'every daemon to answer `agency status`'
    })
    seed = daemons.find(d => d.container.includes('-seed-')) as Daemon
    expect(seed).toBeDefined()
  }, 300_000)

  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => {
      failed = true
    })
  })

  afterAll(async () => {
    if (failed && !down) {
      const logs = await compose('logs', '--no-color', '--tail', '60').catch((err: Error) => err.message)
      process.stderr.write(`--- docker compose logs (last lines of each service) ---\n${logs}\n`)
    }
    if (!down) await compose('down', '-v', '--remove-orphans', '--timeout', '10').catch(() => {})
  }, 120_000)

  it('every daemon sees the other three live, over connections of its own', async () => {
    for (const d of daemons) {
      await waitFor(
        async () => {
          const peers = await agency<Array<{ peerId: string; name: string; live: boolean; connected: boolean }>>(
            d.container,
            'peers',
            '--live'
          )
          const others = daemons
            .filter(o => o !== d)
            .map(o => o.peerId)
            .sort()
          const live = peers
            .filter(p => p.live)
            .map(p => p.peerId)
            .sort()
          // Presence makes a peer live; the daemon keeps connections to some of them, not necessarily all.
          if (JSON.stringify(live) !== JSON.stringify(others) || !peers.some(p => p.connected)) {
            throw new Error(
              `it sees ${JSON.stringify(peers.map(p => `${p.name}${p.live ? ' live' : ''}${p.connected ? ' connected' : ''}`))}`
            )
          }
          return true
        },
        { timeoutMs: 180_000, intervalMs: 1000, what: `${d.container} to see the three others live` }
      )
    }
  }, 600_000)

  it('the seed serves the dashboard page built into the image, and its script', async () => {
    const get = async (path: string): Promise<{ status: string; body: string }> => {
      const script =
        'fetch("http://127.0.0.1:7464" + process.argv[1]).then(async r => { process.stdout.write(r.status + " " + r.headers.get("content-type") + "\\n" + await r.text()) }, e => { console.error(String(e)); process.exit(1) })'
      const out = await docker('exec', seed.container, 'node', '-e', script, path)
      return { status: out.slice(0, out.indexOf('\n')), body: out.slice(out.indexOf('\n') + 1) }
    }
    const page = await waitFor(async () => await get('/'), { timeoutMs: 60_000, what: 'the dashboard on the seed' })
    expect(page.status).toBe('200 text/html; charset=utf-8')
    const src = /<script[^>]+src="\.(\/assets\/[^"]+\.js)"/.exec(page.body)?.[1]
    expect(src, 'the page names its script').toBeDefined()
    expect((await get(src as string)).status).toBe('200 text/javascript; charset=utf-8')
  })

  it('builds the calc example to 100%: every task done, all the work on the shared branch, its tests pass in a fresh clone', async () => {
    // The board, as an operator fills it with `agency` in the seed's container:
    // the example's tasks as one plan, then the goal (a goal on an empty board
    // would offer the plan task instead).
    const plan = example.tasks.map(t => ({
      id: t.id,
      title: t.title,
      description: `Write ${t.file}; tests/${t.id}.test.mjs must pass.`,
      deps: t.deps,
      scope: t.scope,
      priority: t.priority
    }))
    const added = await agencyWith<Array<{ id: string }>>(JSON.stringify(plan), seed.container, 'task', 'add-plan', '-')
    expect(added.map(t => t.id).sort()).toEqual(example.tasks.map(t => t.id).sort())
    await agency(seed.container, 'goal', 'set', example.goal, '--test', example.testCommand, '--file', 'README.md')
    for (const d of daemons) {
      const status = await waitFor(
        async () => {
          const s = await agency(d.container, 'status', '--full')
          const done = (s.tasks as Array<{ state: string }>).filter(t => t.state === 'done').length
          return s.tests?.passRate === 1 && done === example.tasks.length ? s : undefined
        },
        { timeoutMs: 600_000, intervalMs: 2000, what: `${d.container} to show every task done and the tests passing` }
      )
      expect(status.tests.passed).toBe(example.tasks.length)
    }
    // Work was spread over the containers.
    const log = await agency<Array<{ kind: string; author: string }>>(seed.container, 'log')
    expect(new Set(log.filter(e => e.kind === 'done').map(e => e.author)).size).toBeGreaterThan(1)
    // The shared bare repository on the volume holds every task's file on main...
    const files = (
      await docker('exec', seed.container, 'git', '--git-dir', '/srv/git/shared.git', 'ls-tree', '-r', '--name-only', 'main')
    ).split('\n')
    for (const t of example.tasks) expect(files, t.file).toContain(t.file)
    // ...and a fresh clone of it passes every test.
    const tests = await docker(
      'exec',
      seed.container,
      'sh',
      '-c',
      `d=$(mktemp -d) && git clone -q --branch main /srv/git/shared.git "$d" && cd "$d" && ${example.testCommand}`
    )
    expect(tests).toContain(`# pass ${example.tasks.length}`)
    expect(tests).toContain('# fail 0')
  }, 900_000)

  it("Prometheus finds each daemon through Docker's DNS and scrapes it: one target up per daemon", async () => {
    const want = daemons.map(d => `${d.ip}:9464`).sort()
    await waitFor(
      async () => {
        const { activeTargets } = await prometheus<{ activeTargets: Array<{ labels: Record<string, string>; health: string }> }>(
          '/api/v1/targets?state=active'
        )
        const up = activeTargets
          .filter(t => t.labels.job === 'agentd' && t.health === 'up')
          .map(t => t.labels.instance)
          .sort()
        return JSON.stringify(up) === JSON.stringify(want)
      },
      { timeoutMs: 180_000, intervalMs: 3000, what: `a target up for each of ${want.join(', ')}` }
    )
    // The seed is labelled as the seed service, the replicas as agentd.
    const { activeTargets } = await prometheus<{ activeTargets: Array<{ labels: Record<string, string> }> }>('/api/v1/targets?state=active')
    expect(activeTargets.find(t => t.labels.instance === `${seed.ip}:9464`)?.labels.service).toBe('seed')
    // And the scraped samples are the daemons' own: one agentd_build_info per daemon, for this swarm.
    const series = await waitFor(
      async () => {
        const r = await prometheus<{ result: Array<{ metric: Record<string, string> }> }>(
          `/api/v1/query?query=${encodeURIComponent('agentd_build_info{job="agentd"}')}`
        )
        return r.result.length === daemons.length ? r.result : undefined
      },
      { timeoutMs: 120_000, intervalMs: 3000, what: 'agentd_build_info from every daemon' }
    )
    expect(series.map(s => s.metric.swarm)).toEqual(daemons.map(() => SWARM))
  }, 400_000)

  it('a daemon whose process is killed comes back by the restart policy, as the same peer (its volume), and catches up', async () => {
    const victim = daemons.find(d => d !== seed) as Daemon
    const before = await inspect(victim.container)
    const volume = (before.Mounts as Array<{ Name: string; Destination: string }>).find(m => m.Destination === '/var/lib/agency')?.Name
    expect(volume).toBeDefined()
    // A crash: SIGKILL to the container's init from the host. (`docker kill` is
    // a deliberate stop to Docker: no restart policy brings that back.)
    process.kill(before.State.Pid as number, 'SIGKILL')
    const written: string[] = []
    for (let i = 1; i <= 3; i++) {
      const text = `finding ${i} written after ${victim.container} was killed`
      await agency(seed.container, 'note', text)
      written.push(text)
    }
    const after = await waitFor(
      async () => {
        const c = await inspect(victim.container)
        return c.RestartCount > before.RestartCount && c.State.Running === true ? c : undefined
      },
      { timeoutMs: 120_000, intervalMs: 500, what: `${victim.container} to be restarted` }
    )
    expect(after.State.Pid).not.toBe(before.State.Pid)
    expect((after.Mounts as Array<{ Name: string; Destination: string }>).find(m => m.Destination === '/var/lib/agency')?.Name).toBe(volume)
    // The same identity, from the volume...
    const again = await waitFor(async () => await describeDaemon(victim.container), {
      timeoutMs: 120_000,
      what: `${victim.container} to answer again`
    })
    expect(again.peerId).toBe(victim.peerId)
    // ...back in the mesh...
    await waitFor(
      async () => {
        const peers = await agency<Array<{ peerId: string; live: boolean }>>(seed.container, 'peers', '--live')
        return peers.some(p => p.peerId === victim.peerId && p.live)
      },
      { timeoutMs: 120_000, intervalMs: 1000, what: `the seed to see ${victim.container} live again` }
    )
    // ...holding what was written while it was down, and the same log as every other daemon.
    await waitFor(
      async () => {
        const hits = await agency<Array<{ finding: { text: string } }>>(
          victim.container,
          'find',
          'written after',
          victim.container,
          'was killed'
        )
        return written.every(w => hits.some(h => h.finding.text === w))
      },
      { timeoutMs: 120_000, intervalMs: 1000, what: `${victim.container} to hold the findings written while it was down` }
    )
    await waitFor(
      async () => {
        const infos = await Promise.all(
          daemons.map(async d => await agency<{ vectorDigest: string; pending: number }>(d.container, 'log', 'info'))
        )
        return infos.every(i => i.vectorDigest === infos[0].vectorDigest && i.pending === 0)
      },
      { timeoutMs: 120_000, intervalMs: 1000, what: 'every daemon to hold the same log' }
    )
  }, 600_000)

  it('docker compose down -v removes every container, network and volume of the project', async () => {
    const label = `label=com.docker.compose.project=${PROJECT as string}`
    const containers = (await docker('ps', '-aq', '--filter', label)).split('\n').filter(s => s !== '')
    expect(containers.length).toBe(1 + REPLICAS + 2) // + shared-repo (exited) + prometheus
    const volumes = new Set<string>((await docker('volume', 'ls', '-q', '--filter', label)).split('\n').filter(s => s !== ''))
    for (const id of containers)
      for (const m of (await inspect(id)).Mounts as Array<{ Type: string; Name?: string }>)
        if (m.Type === 'volume' && m.Name != null) volumes.add(m.Name)
    const networks = (await docker('network', 'ls', '-q', '--filter', label)).split('\n').filter(s => s !== '')
    expect(networks.length).toBe(1)
    // named: shared-repo, prometheus-data; anonymous: each agentd container's /var/lib/agency (and the one-shot's)
    expect(volumes.size).toBeGreaterThanOrEqual(2 + 1 + REPLICAS)

    down = true
    await compose('down', '-v', '--timeout', '30')

    const gone = async (kind: string, id: string): Promise<boolean> =>
      await docker(kind, 'inspect', id).then(
        () => false,
        () => true
      )
    for (const id of containers) expect(await gone('container', id), `container ${id}`).toBe(true)
    for (const v of volumes) expect(await gone('volume', v), `volume ${v}`).toBe(true)
    for (const n of networks) expect(await gone('network', n), `network ${n}`).toBe(true)
    expect(await docker('ps', '-aq', '--filter', label)).toBe('')
  }, 300_000)
})
