// The chaos test: six agentd processes, each with a scripted agent, build the
// calc example while a loop SIGKILLs random daemons (and their agents) and
// restarts them on the same data dir. The project still completes (every task
// done, every test passing on the shared branch), no task is lost or done
// twice, and every daemon ends with the same log.
import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { ProcessCluster, type AgentdProcess } from '../helpers/agentd-process.js'
import { waitFor } from '../helpers/wait-for.js'
import { loadExample, seedBareRepo } from '../../src/swarm/example-project.js'
import { exampleTasks } from '../../src/swarm/swarm.js'
import { connectAgency, type Agency } from '../../src/client/agency.js'
import type { AgencyClient, LogEntry, StatusReply } from '../../src/gen/agency/v1/api.js'
import { ChaosLoop } from './chaos-loop.js'
import { killWorkingUnder, seededRandom } from '../helpers/trust.js'

const run = promisify(execFile)
const N = 6
/**
 * The whole test, chaos included. The swarm alone takes about three minutes
 * on two cores; the bounds are wide because a test waits for outcomes, never
 * for speed, and a shared CI machine can be several times slower.
 */
const TEST_TIMEOUT_MS = 15 * 60_000
const COMPLETION_TIMEOUT_MS = 11 * 60_000
const seed = Number(process.env.AGENCY_CHAOS_SEED ?? Date.now() % 1_000_000)

const cluster = new ProcessCluster()
const clients: Agency[] = []
let daemons: AgentdProcess[] = []

afterAll(async () => {
  for (const c of clients) c.close()
  // SIGTERM first, so that each daemon stops its harness; then whatever is left.
  await Promise.allSettled(daemons.filter(d => d.running).map(async d => await d.stop()))
  for (const d of daemons) killWorkingUnder(d.dataDir)
  await cluster.cleanup()
}, 120_000)

async function git(args: string[], cwd?: string): Promise<string> {
  return (
    await run('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' } })
  ).stdout.trim()
}

function api(d: AgentdProcess): Agency {
  const c = connectAgency(d.grpcAddr)
  clients.push(c)
  return c
}

/** The status from any daemon that is up (the chaos loop may have just killed one). */
async function anyStatus(): Promise<StatusReply> {
  for (const d of daemons.filter(x => x.running)) {
    const s = await d.status().catch(() => undefined)
    if (s != null) return s
  }
  throw new Error('no daemon answers')
}

async function wholeLog(a: Agency): Promise<LogEntry[]> {
  const out: LogEntry[] = []
  for await (const e of a.stream((c: AgencyClient, m) => c.watchLog({ after: 0, follow: false }, m))) out.push(e)
  return out
}

const body = (e: LogEntry): any => JSON.parse(e.bodyJson)

/** What explains a stuck swarm: the tasks and who holds them, and the end of each harness log. */
async function diagnostics(events: string[]): Promise<string> {
  const parts = [`seed ${seed}`, ...events]
  const s = await anyStatus().catch(() => undefined)
  if (s != null)
    parts.push(...s.tasks.map(t => `task ${t.id}: ${t.state}${t.holder !== '' ? ` held by ${t.holder.slice(-8)}@${t.epoch}` : ''}`))
  for (const d of daemons) {
    const log = await readFile(join(d.dataDir, 'harness.log'), 'utf8').catch(() => '')
    parts.push(`--- ${d.options.name} (${d.running ? 'up' : 'down'}) harness.log ---\n${log.split('\n').slice(-12).join('\n')}`)
  }
  return parts.join('\n')
}

describe('a six-agent swarm under repeated SIGKILL', () => {
  it(
    'completes the calc example, loses no task, and converges',
    async () => {
      const example = await loadExample('calc')
      const taskIds = example.tasks.map(t => t.id).sort()
      const dir = await cluster.tempDir('agency-chaos-')
      const repo = join(dir, 'repo.git')
      await seedBareRepo(example, repo)
      // Heartbeats once a second (the test default is 400 ms): twelve processes share two cores.
      const flags = [
        '--swarm',
        `chaos-${process.pid}-${Date.now()}`,
        '--repo',
        repo,
        '--harness',
        'sim',
        '--mirror-dir',
        join(dir, 'mirrors'),
        '--heartbeat-ms',
        '1000',
        '--live-timeout-ms',
        '6000'
      ]
      daemons = Array.from({ length: N }, (_, i) =>
        cluster.onDataDir(join(dir, `agent-${i + 1}`), { name: `agent-${i + 1}`, extraArgs: flags })
      )
      await daemons[0].start()
      for (const d of daemons.slice(1)) d.options.peers = [daemons[0].listenAddr]
      await Promise.all(
        daemons.slice(1).map(async d => {
          await d.start()
        })
      )

      // The project goes on the board once; the agents pick it up from there.
      const first = api(daemons[0])
      await first.call((c: AgencyClient) => c.addTasks, { tasks: exampleTasks(example) })
      await first.call((c: AgencyClient) => c.setGoal, { text: example.goal, files: ['README.md'], testCommand: example.testCommand })

      const events: string[] = []
      const chaos = new ChaosLoop({
        daemons,
        random: seededRandom(seed),
        // Kills while most of the project is still to do (12 tasks); a pass of
        // several milestones between two polls still kills once per poll.
        progress: async () => (await anyStatus()).tasks.filter(t => t.state === 'done').length,
        milestones: [1, 3, 5, 7],
        pollMs: 250,
        downMs: [500, 3_000],
        maxDown: 2,
        startAttempts: 5,
        onEvent: line => {
          events.push(line)
        }
      })
      const startedAt = Date.now()
      chaos.start()
      let finished = false
      try {
        await waitFor(
          async () => {
            const s = await anyStatus()
            return s.tasks.length === taskIds.length && s.tasks.every(t => t.state === 'done') && s.tests?.passRate === 1
          },
          { what: 'every task done and every test passing', timeoutMs: COMPLETION_TIMEOUT_MS, intervalMs: 1000 }
        )
        finished = true
        events.push(`${((Date.now() - startedAt) / 1000).toFixed(1)}s: every task done and every test passing`)
      } finally {
        await chaos.stop().catch((err: Error) => {
          events.push(`a restart failed: ${err.message}`)
        })
        if (process.env.AGENCY_CHAOS_VERBOSE != null) process.stderr.write(`chaos (seed ${seed}):\n${events.join('\n')}\n`)
        if (!finished) expect.fail(`the swarm did not finish under chaos:\n${await diagnostics(events)}`)
      }
      expect(chaos.kills.length, 'the chaos loop killed nobody').toBeGreaterThanOrEqual(2)
      expect(events.filter(e => e.startsWith('a restart failed'))).toEqual([])

      // Every daemon is up again: wait for all six to hold the same log.
      for (const d of daemons) if (!d.running) await d.restart()
      const apis = daemons.map(api)
      // The agents still run (status lines, heartbeats' entries), so the logs are read once, as they
      // converged: a second read could catch an entry on its way to the others.
      const infos = await waitFor(
        async () => {
          const infos = await Promise.all(apis.map(async a => await a.call((c: AgencyClient) => c.logInfo, {})))
          return infos.every(i => i.vectorDigest === infos[0].vectorDigest && i.entries === infos[0].entries && i.pending === 0) && infos
        },
        { what: `the six logs to converge (${chaos.kills.length} kills; seed ${seed})`, timeoutMs: 120_000, intervalMs: 500 }
      )
      expect(new Set(infos.map(i => i.vectorDigest)).size).toBe(1)
      expect(infos.every(i => i.forks === 0)).toBe(true)

      // No task lost, none done twice; the board agrees everywhere.
      const log = await wholeLog(apis[0])
      const dones = log
        .filter(e => e.kind === 'done')
        .map(e => body(e).task as string)
        .sort()
      expect(dones, `done entries per task (kills:\n${chaos.kills.join('\n')})`).toEqual(taskIds)
      for (const a of apis) {
        const s = await a.call((c: AgencyClient) => c.getStatus, {})
        expect(s.tasks.filter(t => t.state !== 'done').map(t => t.id)).toEqual([])
        expect(s.tests?.passRate).toBe(1)
      }

      // The shared branch holds every task's file, and a fresh clone passes every test.
      const files = (await git(['--git-dir', repo, 'ls-tree', '-r', 'main', '--name-only'])).split('\n')
      for (const t of example.tasks) expect(files, `${t.file} of ${t.id} is not on main`).toContain(t.file)
      const clone = join(dir, 'fresh-clone')
      await git(['clone', '--quiet', '--branch', 'main', repo, clone])
      await run('/bin/sh', ['-c', example.testCommand], { cwd: clone })
    },
    TEST_TIMEOUT_MS
  )
})
