// `agency swarm up -n 4 --harness sim` on the calc example, end to end: four
// agentd processes, each with a scripted agent, build the example from 0% to
// 100% through the gRPC API alone. Then the record is checked: every task done
// exactly once, all the work on the shared branch (a fresh clone passes every
// test), and no agent walked into a trap a peer had already recorded.
import { execFile, spawn } from 'node:child_process'
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { swarmDown, swarmUp } from '../../src/swarm/swarm.js'
import { loadExample } from '../../src/swarm/example-project.js'
import { connectAgency, type Agency } from '../../src/client/agency.js'
import type { AgencyClient, LogEntry } from '../../src/gen/agency/v1/api.js'
import { assertBuilt, isGone } from '../helpers/agent-loop.js'
import { waitFor } from '../helpers/wait-for.js'

const run = promisify(execFile)
const SWARM_TIMEOUT_MS = 6 * 60_000

async function git(args: string[], cwd?: string): Promise<string> {
  return (
    await run('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' } })
  ).stdout.trim()
}

async function wholeLog(a: Agency): Promise<LogEntry[]> {
  const out: LogEntry[] = []
  for await (const e of a.stream((c: AgencyClient) => c.watchLog({ after: 0, follow: false }))) out.push(e)
  return out
}

const body = (e: LogEntry): any => JSON.parse(e.bodyJson)
const tagValue = (tags: string[], prefix: string): string | undefined => tags.find(t => t.startsWith(prefix))?.slice(prefix.length)

/** The ends of every daemon's stderr and every harness log of a swarm dir. */
async function diagnostics(dir: string): Promise<string> {
  const parts: string[] = []
  for (const name of (await readdir(dir).catch(() => [])).sort()) {
    for (const file of [join(dir, name), join(dir, name, 'harness.log')]) {
      if (!file.endsWith('.log')) continue
      const text = await readFile(file, 'utf8').catch(() => undefined)
      // Idle agents repeat "nothing ready" every few seconds: leave those out.
      if (text != null)
        parts.push(
          `--- ${file.slice(dir.length + 1)} ---\n${text
            .split('\n')
            .filter(l => !l.includes('nothing ready'))
            .join('\n')
            .slice(-3000)}`
        )
    }
  }
  return parts.join('\n')
}

function countBy<T>(items: T[], key: (t: T) => string): Map<string, number> {
  const m = new Map<string, number>()
  for (const i of items) m.set(key(i), (m.get(key(i)) ?? 0) + 1)
  return m
}

describe('agency swarm up -n 4 --harness sim --example calc', () => {
  it(
    'reaches 100%: every task done once, all the work on main, and no recorded trap hit again',
    async () => {
      assertBuilt()
      const example = await loadExample('calc')
      const taskIds = example.tasks.map(t => t.id).sort()
      const dir = await mkdtemp(join(tmpdir(), 'agency-swarm-'))
      const progress: string[] = []
      const clients: Agency[] = []
      try {
        // Left up when done so that the record can be read from every daemon; downed in finally.
        const { state, finished } = await swarmUp({
          n: 4,
          dir,
          example: 'calc',
          harness: 'sim',
          swarm: `swarm-test-${process.pid}-${Date.now()}`,
          downWhenDone: false,
          timeoutMs: SWARM_TIMEOUT_MS,
          progress: line => {
            progress.push(line)
          }
        })
        expect(finished, `the swarm did not finish; last progress:\n${progress.slice(-5).join('\n')}`).toBe(true)
        expect(state.daemons).toHaveLength(4)
        const apis = state.daemons.map(d => connectAgency(d.grpc))
        clients.push(...apis)

        // ---- 100% on the board, every task done ----
        const status = await apis[0].call((c: AgencyClient) => c.getStatus, {})
        expect(status.tests?.passRate).toBe(1)
        expect(status.tests?.total).toBe(taskIds.length)
        expect(status.tests?.passed).toBe(taskIds.length)
        const tasks = (await apis[0].call((c: AgencyClient) => c.listTasks, { state: '' })).tasks
        expect(tasks.map(t => t.id).sort()).toEqual(taskIds)
        expect(tasks.filter(t => t.state !== 'done').map(t => `${t.id}:${t.state}`)).toEqual([])

        // Wait until every daemon holds the same record, so that a late duplicate cannot hide.
        await waitFor(
          async () => {
            const infos = await Promise.all(apis.map(async a => await a.call((c: AgencyClient) => c.logInfo, {})))
            return infos.every(i => i.vectorDigest === infos[0].vectorDigest && i.entries === infos[0].entries && i.pending === 0)
          },
          { what: 'the four daemons to hold the same log', timeoutMs: 60_000, intervalMs: 500 }
        )
        const peerIds = await Promise.all(apis.map(async a => (await a.call((c: AgencyClient) => c.getStatus, {})).self?.peerId as string))
        const logs = await Promise.all(apis.map(wholeLog))
        const log = logs[0]

        // ---- every task is done exactly once ----
        const dones = log.filter(e => e.kind === 'done')
        expect(Object.fromEntries(countBy(dones, e => body(e).task))).toEqual(Object.fromEntries(taskIds.map(id => [id, 1])))
        const info = await apis[0].call((c: AgencyClient) => c.logInfo, {})
        expect(info.byKind.done).toBe(taskIds.length)
        // ...and merged into the shared branch exactly once.
        const merged = log.filter(e => e.kind === 'integration' && body(e).result === 'merged')
        expect(Object.fromEntries(countBy(merged, e => body(e).task))).toEqual(Object.fromEntries(taskIds.map(id => [id, 1])))
        // Work was spread: more than one agent did tasks.
        expect(new Set(dones.map(e => e.author)).size).toBeGreaterThan(1)
        for (const e of dones) expect(peerIds).toContain(e.author)

        // ---- all the work is in the shared branch ----
        const repo = state.repo
        expect(repo).toBe(join(dir, 'repo.git'))
        const files = (await git(['--git-dir', repo, 'ls-tree', '-r', 'main', '--name-only'])).split('\n')
        for (const t of example.tasks) expect(files, `${t.file} of ${t.id} is not on main`).toContain(t.file)
        for (const e of dones) {
          const commit = body(e).commit as string
          expect(commit, `done of ${body(e).task} names no commit`).toMatch(/^[0-9a-f]{40}$/)
          // merge-base --is-ancestor exits 1 (and execFile rejects) when it is not.
          await git(['--git-dir', repo, 'merge-base', '--is-ancestor', commit, 'main'])
        }
        const clone = join(dir, 'fresh-clone')
        await git(['clone', '--quiet', '--branch', 'main', repo, clone])
        const tests = await run('/bin/sh', ['-c', example.testCommand], { cwd: clone, encoding: 'utf8' })
        expect(tests.stdout).toContain(`1..${taskIds.length}`)
        expect(tests.stdout).toContain(`# pass ${taskIds.length}`)
        expect(tests.stdout).toContain('# fail 0')
        expect(tests.stdout).toContain('# skip 0')

        // ---- a trap recorded by one agent is not hit again by another ----
        const traps = new Set(example.tasks.flatMap(t => t.approaches.slice(0, -1)))
        expect([...traps].sort()).toEqual(['left-to-right', 'naive-split', 'to-fixed'])
        const failures = (
          await apis[0].call((c: AgencyClient) => c.searchFindings, {
            query: '',
            kind: 'failure',
            pathPrefix: '',
            tag: '',
            author: '',
            since: 0,
            until: 0,
            limit: 1000
          })
        ).hits
        const byApproach = new Map<string, typeof failures>()
        for (const h of failures) {
          const approach = tagValue(h.finding?.tags ?? [], 'approach:')
          if (approach != null) byApproach.set(approach, [...(byApproach.get(approach) ?? []), h])
        }
        // Only traps fail; every trap fired (the first agent to meet it had no record to go on).
        expect([...byApproach.keys()].sort()).toEqual([...traps].sort())
        // The causal check, on the record of the agent that hit a trap: no failure of
        // an approach was recorded by an agent whose daemon already held a failure
        // record of that approach (a peer's, or its own) when it claimed the task.
        const rehit: string[] = []
        for (const [approach, hits] of byApproach) {
          for (const later of hits) {
            const author = later.entry?.author as string
            const own = logs[peerIds.indexOf(author)]
            expect(own, `failure finding by unknown author ${author}`).toBeDefined()
            const task = tagValue(later.finding?.tags ?? [], 'task:')
            const laterEntry = own.find(e => e.id === later.entry?.id) as LogEntry
            const claim = own
              .filter(e => e.author === author && e.kind === 'claim' && body(e).task === task && e.seq < laterEntry.seq)
              .at(-1)
            expect(claim, `no claim of ${task} by ${author} before its failure finding`).toBeDefined()
            for (const earlier of hits) {
              if (earlier.entry?.id === later.entry?.id) continue
              const arrived = own.find(e => e.id === earlier.entry?.id) as LogEntry
              if (arrived.cursor < (claim as LogEntry).cursor)
                rehit.push(
                  `${approach}: ${author.slice(-6)} hit it on ${task ?? '?'} after ${(earlier.entry?.author ?? '').slice(-6)} recorded it`
                )
            }
          }
        }
        expect(rehit).toEqual([])
        // Counted: a trap fails at most once per task that offers it. Within one task a
        // second failure would be a rehit (its claims are exclusive and in order, and a
        // daemon that accepted a release holds the releaser's earlier findings). Two
        // tasks with the same trap (format and functions: to-fixed) may each hit it once,
        // when both are worked at the same time before either has a record to share.
        const perTaskApproach = countBy(
          [...byApproach.values()].flat(),
          h => `${tagValue(h.finding?.tags ?? [], 'task:') ?? '?'}/${tagValue(h.finding?.tags ?? [], 'approach:') ?? '?'}`
        )
        expect([...perTaskApproach].filter(([, n]) => n > 1)).toEqual([])
        for (const [approach, hits] of byApproach) {
          const offeredBy = example.tasks.filter(t => t.approaches.slice(0, -1).includes(approach)).length
          expect(hits.length, `failures of ${approach}`).toBeLessThanOrEqual(offeredBy)
        }
      } catch (err) {
        // The swarm dir is removed below: keep what explains the failure in the error.
        throw new Error(`${(err as Error).message}\n--- progress ---\n${progress.slice(-8).join('\n')}\n${await diagnostics(dir)}`, {
          cause: err
        })
      } finally {
        for (const c of clients) c.close()
        await swarmDown(dir).catch(() => {})
        await rm(dir, { recursive: true, force: true })
      }
    },
    SWARM_TIMEOUT_MS + 2 * 60_000
  )
})

describe('agency swarm down', () => {
  it('signals only the daemons it started: a pid recorded in swarm.json that now belongs to another program is left alone', async () => {
    // Daemons that died (a crash, a reboot) leave swarm.json behind, and pids are
    // reused (pid_max is 32768 on many Linux hosts). The stand-in for the
    // unrelated program that got the pid is a sleep of our own.
    const dir = await mkdtemp(join(tmpdir(), 'agency-swarm-down-'))
    const other = spawn('sleep', ['1000'], { stdio: 'ignore' })
    const exited = new Promise(resolve => {
      other.once('exit', resolve)
    })
    try {
      const pid = other.pid as number
      const state = {
        dir,
        repo: join(dir, 'repo.git'),
        daemons: [{ name: 'agent-1', pid, grpc: '127.0.0.1:1', dataDir: join(dir, 'agent-1') }]
      }
      await writeFile(join(dir, 'swarm.json'), JSON.stringify(state))
      await swarmDown(dir, 1000)
      expect(other.exitCode).toBeNull()
      expect(other.signalCode).toBeNull()
      expect(isGone(pid)).toBe(false)
      // The swarm is down as far as the state goes.
      await expect(swarmDown(dir, 1000)).rejects.toThrow(/no swarm is up/)
    } finally {
      other.kill('SIGKILL')
      await exited
      await rm(dir, { recursive: true, force: true })
    }
  })
})
