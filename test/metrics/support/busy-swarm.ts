// Three real agentd processes on one shared bare repository, and the kinds of
// activity the dashboards show: a goal and tasks, claims (one scope overlap,
// one race), a finding, an announcement, a direct message, an integration
// with a verify run and its test results, a task done.
import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { connectAgency, type Agency } from '../../../src/client/agency.js'
import { isAgencyError } from '../../../src/core/errors.js'
import { ClaimOutcome, type AgencyClient } from '../../../src/gen/agency/v1/api.js'
import { startAgentd, type Agentd } from './agentd.js'
import { waitFor } from '../../helpers/wait-for.js'

const run = promisify(execFile)

export interface LocalSwarm {
  swarm: string
  dir: string
  /** agent-1, agent-2, agent-3 */
  daemons: Agentd[]
  /** stops the daemons and removes every temp dir */
  stop: () => Promise<void>
}

async function git(cwd: string, args: string[]): Promise<string> {
  return (await run('git', ['-c', 'user.name=test', '-c', 'user.email=test@agency.invalid', ...args], { cwd })).stdout.trim()
}

async function seedBareRepo(dir: string): Promise<string> {
  const bare = join(dir, 'shared.git')
  const seed = join(dir, 'seed')
  await mkdir(bare, { recursive: true })
  await mkdir(seed, { recursive: true })
  await git(bare, ['init', '-q', '--bare', '-b', 'main'])
  await git(seed, ['init', '-q', '-b', 'main'])
  await writeFile(join(seed, 'README.md'), '# monitoring test\n')
  await git(seed, ['add', '-A'])
  await git(seed, ['commit', '-q', '-m', 'seed'])
  await git(seed, ['push', '-q', bare, 'main'])
  return bare
}

/** Three daemons, agent-2 and agent-3 bootstrapped to agent-1, each with /metrics on a random port. */
export async function startLocalSwarm(swarm = 'monitoring-test'): Promise<LocalSwarm> {
  const dir = await mkdtemp(join(tmpdir(), 'agency-monitoring-'))
  const daemons: Agentd[] = []
  const stop = async (): Promise<void> => {
    await Promise.all(
      daemons.splice(0).map(async d => {
        await d.stop()
      })
    )
    await rm(dir, { recursive: true, force: true })
  }
  try {
    const bare = await seedBareRepo(dir)
    const args = [
      '--swarm',
      swarm,
      '--repo',
      bare,
      '--verify',
      'echo "3 passed, 0 failed"',
      '--mirror-dir',
      join(dir, 'mirrors'),
      '--settle-ms',
      '300',
      '--heartbeat-ms',
      '500',
      '--live-timeout-ms',
      '5000'
    ]
    const start = async (name: string, peers: string[]): Promise<Agentd> => {
      const d = await startAgentd({ name, dataDir: join(dir, name), logFile: join(dir, `${name}.log`), peers, extraArgs: args })
      daemons.push(d)
      return d
    }
    const first = await start('agent-1', [])
    await Promise.all([start('agent-2', first.addrs), start('agent-3', first.addrs)])
    daemons.sort((a, b) => a.name.localeCompare(b.name))
    return { swarm, dir, daemons, stop }
  } catch (err) {
    await stop().catch(() => {})
    throw err
  }
}

/** Drives the swarm through one round of work; resolves once every daemon has seen all of it. */
export async function exerciseSwarm(s: LocalSwarm): Promise<void> {
  const clients = s.daemons.map(d => connectAgency(d.grpc))
  try {
    const [a1, a2, a3] = clients
    const status = async (c: Agency) => await c.call((x: AgencyClient) => x.getStatus, {})
    for (const c of clients)
      await waitFor(async () => (await status(c)).peersLive >= 2, {
        what: 'every daemon to see its two peers live',
        timeoutMs: 60_000,
        intervalMs: 200
      })

    await a1.call((x: AgencyClient) => x.setGoal, { text: 'exercise the dashboards', files: [], testCommand: 'echo "3 passed, 0 failed"' })
    await a1.call((x: AgencyClient) => x.addTask, {
      id: 'wide',
      title: 'a wide scope',
      description: '',
      deps: [],
      scope: ['src/**'],
      priority: 1
    })
    await a1.call((x: AgencyClient) => x.addTask, {
      id: 'narrow',
      title: 'inside the wide scope',
      description: '',
      deps: [],
      scope: ['src/core/x.ts'],
      priority: 1
    })
    await a1.call((x: AgencyClient) => x.addTask, {
      id: 'raced',
      title: 'claimed by two at once',
      description: '',
      deps: [],
      scope: ['docs/**'],
      priority: 1
    })
    for (const c of [a2, a3])
      await waitFor(async () => (await status(c)).tasks.length === 3, {
        what: 'the tasks to reach every daemon',
        timeoutMs: 60_000,
        intervalMs: 200
      })

    // A scope overlap (wide vs narrow), then a race for one task.
    const wide = await a1.call((x: AgencyClient) => x.claim, { task: 'wide', scope: [], noWait: false }, 60_000)
    if (wide.outcome !== ClaimOutcome.CLAIM_HELD) throw new Error(`agent-1 did not get "wide": ${JSON.stringify(wide)}`)
    await waitFor(async () => (await status(a2)).tasks.find(t => t.id === 'wide')?.state === 'claimed', {
      what: 'agent-2 to see agent-1 holding "wide"',
      timeoutMs: 60_000,
      intervalMs: 200
    })
    await a2.call((x: AgencyClient) => x.claim, { task: 'narrow', scope: [], noWait: false }, 60_000)
    // Both at once: they race, or (on a quick machine) the first claim reaches the
    // other daemon before its own call does, which refuses it as held. Either will do.
    await Promise.all(
      [a2, a3].map(
        async c =>
          await c
            .call((x: AgencyClient) => x.claim, { task: 'raced', scope: [], noWait: false }, 60_000)
            .catch((err: unknown) => {
              if (!isAgencyError(err) || err.code !== 'FAILED_PRECONDITION') throw err
            })
      )
    )

    await a2.call((x: AgencyClient) => x.recordFinding, {
      kind: 'discovery',
      text: 'the dashboards need data',
      paths: ['grafana/'],
      tags: ['monitoring'],
      refs: [],
      supersedes: ''
    })
    await a3.call((x: AgencyClient) => x.announce, { text: 'hello from agent-3' })
    await a1.call((x: AgencyClient) => x.sendMessage, { to: 'agent-2', text: 'I hold the wide scope', thread: '', replyTo: '' })

    // agent-1 integrates "wide": a verify run, test results on the shared branch, a task done.
    const ws = await a1.call((x: AgencyClient) => x.getWorkspace, { task: 'wide' }, 120_000)
    await mkdir(join(ws.path, 'src'), { recursive: true })
    await writeFile(join(ws.path, 'src', 'wide.txt'), 'done\n')
    await git(ws.path, ['add', '-A'])
    await git(ws.path, ['commit', '-q', '-m', 'wide: done'])
    const merged = await a1.call((x: AgencyClient) => x.integrate, { task: 'wide', message: 'wide: done', background: false }, 120_000)
    if (merged.result !== 'merged') throw new Error(`integrate answered ${merged.result}: ${merged.summary}`)
    await a1.call((x: AgencyClient) => x.done, { task: 'wide', commit: merged.commit, paths: ['src/wide.txt'], noChange: '' })

    for (const c of clients) {
      await waitFor(
        async () => {
          const st = await status(c)
          return st.tests != null && st.tests.total > 0 && st.tasks.find(t => t.id === 'wide')?.state === 'done'
        },
        { what: 'the test run and the done task to reach every daemon', timeoutMs: 60_000, intervalMs: 200 }
      )
    }
    await waitFor(
      async () => (await a2.call((x: AgencyClient) => x.readInbox, { after: 0, limit: 10, all: true, peek: false })).messages.length > 0,
      { what: 'agent-2 to receive the direct message', timeoutMs: 60_000, intervalMs: 200 }
    )
  } finally {
    for (const c of clients) c.close()
  }
}
