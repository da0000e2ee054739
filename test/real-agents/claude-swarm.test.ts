// Three real Claude Code CLIs, each beside its own agentd, on an empty board.
// Each is driven by a scripted model on loopback (the only stand-in; see
// models/) that does what the prompt says: with nothing to do, each waits;
// then the goal is set, and only the goal, so the board shows the `plan` task.
// Whoever wins it splits the goal into tasks (with deps and scopes) and marks
// plan done; the others lost it or found it taken, wait, and then everyone
// takes tasks as they become ready. The goal is met with every task done
// exactly once, each merged once, on every daemon.
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { connectAgency, type Agency } from '../../src/client/agency.js'
import type { AgencyClient } from '../../src/gen/agency/v1/api.js'
import { AGENCY_BIN, execFileP } from '../helpers/agent-loop.js'
import { waitFor } from '../helpers/wait-for.js'
import { AgentDaemons, count, git, harnessLog, seedSharedRepo, type AgentDaemon } from './agent-daemon.js'
import { assertCli, body, wholeLog } from './greeter-scenario.js'
import { CLAUDE_CODE_TOOLS, nextMove, PLAN_TASK } from './models/agent-script.js'
import { startAnthropicModel, type ScriptedAnthropicModel } from './models/anthropic-messages.js'
import { claudeCodeEnv, claudeResults, PERMISSION_DENIAL } from './claude-code.js'
import { TEST_COMMAND, WELCOME } from './projects.js'

const AGENTS = 3
const TIMEOUT_MS = 300_000

let scratch: AgentDaemons | undefined
const models: ScriptedAnthropicModel[] = []
const apis: Agency[] = []

afterAll(async () => {
  for (const a of apis) a.close()
  await scratch?.cleanup()
  for (const m of models) await m.close()
}, 60_000)

function countBy<T>(items: T[], key: (t: T) => string): Record<string, number> {
  const out: Record<string, number> = {}
  for (const i of items) out[key(i)] = (out[key(i)] ?? 0) + 1
  return out
}

describe('three Claude Code agents from a goal and an empty board', () => {
  it(
    'one plans, the others wait and then take the tasks; the goal is met with every task done once',
    async () => {
      assertCli('claude')
      scratch = new AgentDaemons()
      const dir = await scratch.dir('agency-claude-swarm-')
      const repo = await seedSharedRepo(dir, WELCOME.files)
      const flags = [
        '--repo',
        repo,
        '--settle-ms',
        '500',
        '--heartbeat-ms',
        '400',
        '--live-timeout-ms',
        '4000',
        '--swarm',
        `claude-swarm-${process.pid}`
      ]
      for (let i = 0; i < AGENTS; i++) models.push(await startAnthropicModel(conv => nextMove(conv, WELCOME.playbook, CLAUDE_CODE_TOOLS)))
      for (let i = 0; i < AGENTS; i++) await mkdir(join(dir, `home-${i + 1}`))
      const daemons: AgentDaemon[] = []
      for (let i = 0; i < AGENTS; i++) {
        const home = join(dir, `home-${i + 1}`)
        daemons.push(
          await scratch.start({
            name: `claude-${i + 1}`,
            dataDir: join(dir, `agent-${i + 1}`),
            home,
            env: claudeCodeEnv(home, models[i].url),
            peers: i === 0 ? [] : daemons[0].addrs,
            extraArgs: [...flags, '--harness', 'claude']
          })
        )
      }
      apis.push(...daemons.map(d => connectAgency(d.grpc)))
      const ids = daemons.map(d => d.peerId)

      // With no goal there is nothing to do: each agent looks, finds nothing ready, and waits.
      const waiting = (m: ScriptedAnthropicModel): boolean =>
        m.requests.some(r => r.move?.kind === 'call' && r.move.call.name === 'mcp__agency__wait')
      await waitFor(() => models.every(waiting) || models.some(m => m.errors().length > 0), {
        what: 'every agent to wait for work',
        timeoutMs: TIMEOUT_MS,
        intervalMs: 500
      })
      expect(models.flatMap(m => m.errors())).toEqual([])
      // Then the goal, and only the goal: the board shows the plan task.
      await execFileP(
        process.execPath,
        [AGENCY_BIN, 'goal', 'set', WELCOME.goal, '--test', TEST_COMMAND, '--addr', daemons[0].grpc, '--json'],
        { timeout: 60_000 }
      )

      const outcome = await waitFor(
        async () => {
          if (models.some(m => m.errors().length > 0)) return 'a scripted model stopped'
          if (models.some(m => m.toolCalls().some(c => PERMISSION_DENIAL.test(c.outcome.text)))) return 'Claude Code refused a tool call'
          const logs = await Promise.all(daemons.map(harnessLog))
          return logs.every(l => l.includes('work is done; not restarting the harness')) && 'finished'
        },
        { what: 'every Claude Code to finish with the goal met', timeoutMs: TIMEOUT_MS, intervalMs: 1000 }
      ).catch((err: Error) => err.message)
      if (outcome !== 'finished') {
        const report = await Promise.all(
          daemons.map(
            async (d, i) =>
              `--- agent ${i + 1} ---\n${models[i].errors().join('\n')}\n${models[i]
                .toolCalls()
                .slice(-8)
                .map(c => `${c.call.name} ${JSON.stringify(c.call.input).slice(0, 100)} -> ${c.outcome.text.slice(0, 160)}`)
                .join('\n')}\n${(await harnessLog(d))
                .split('\n')
                .filter(l => l.includes('agentd:'))
                .join('\n')}`
          )
        )
        expect(outcome, report.join('\n')).toBe('finished')
      }

      // ---- every CLI ran once, exited 0, was not restarted, and nothing was refused ----
      for (const [i, d] of daemons.entries()) {
        const log = await harnessLog(d)
        expect(count(log, /agentd: starting claude /), `agent ${i + 1} starts`).toBe(1)
        expect(count(log, /harness exited \(code 0, signal null\)/), `agent ${i + 1} exits`).toBe(1)
        expect(claudeResults(log).map(r => [r.subtype, r.permission_denials])).toEqual([['success', []]])
        const calls = models[i].toolCalls()
        expect(calls.filter(c => PERMISSION_DENIAL.test(c.outcome.text)).map(c => c.outcome.text)).toEqual([])
        for (const t of models[i].turns())
          expect(t.tools).toEqual(expect.arrayContaining(['mcp__agency__claim', 'mcp__agency__add_tasks', 'mcp__agency__wait']))
      }

      // ---- every daemon holds the same record ----
      await waitFor(
        async () => {
          const infos = await Promise.all(apis.map(async a => await a.call((c: AgencyClient) => c.logInfo, {})))
          return infos.every(i => i.vectorDigest === infos[0].vectorDigest && i.pending === 0)
        },
        { what: 'the daemons to hold the same log', timeoutMs: 60_000, intervalMs: 500 }
      )
      const planned = WELCOME.playbook.plan.map(t => t.id).sort()
      for (const a of apis) {
        const log = await wholeLog(a)
        // One agent won plan; every task, plan included, is done exactly once and each planned one merged once.
        const dones = log.filter(e => e.kind === 'done')
        expect(countBy(dones, e => body(e).task)).toEqual(Object.fromEntries([PLAN_TASK, ...planned].sort().map(id => [id, 1])))
        const merged = log.filter(e => e.kind === 'integration' && body(e).result === 'merged')
        expect(countBy(merged, e => body(e).task)).toEqual(Object.fromEntries(planned.map(id => [id, 1])))
        for (const e of dones) expect(ids).toContain(e.author)
        const status = await a.call((c: AgencyClient) => c.getStatus, {})
        expect(status.tests).toMatchObject({ passed: planned.length, failed: 0 })
        const { tasks } = await a.call((c: AgencyClient) => c.listTasks, { state: '' })
        for (const id of planned) expect(tasks.find(t => t.id === id)?.state, `${id} on ${status.self?.name ?? '?'}`).toBe('done')
      }
      const log = await wholeLog(apis[0])
      const planner = log.find(e => e.kind === 'done' && body(e).task === PLAN_TASK)?.author as string
      const plannerIndex = ids.indexOf(planner)
      expect(plannerIndex).toBeGreaterThanOrEqual(0)

      // ---- the planner added the tasks, with their deps and scopes ----
      const { tasks } = await apis[0].call((c: AgencyClient) => c.listTasks, { state: '' })
      for (const p of WELCOME.playbook.plan) {
        expect(tasks.find(t => t.id === p.id)).toMatchObject({ addedBy: planner, deps: p.deps ?? [], scope: p.scope })
      }

      // ---- the others lost plan or found it taken, and took tasks once there were some ----
      for (const [i, m] of models.entries()) {
        const claims = m.toolCalls().filter(c => c.call.name === 'mcp__agency__claim')
        // claim --next (no task in the call): the answer names the task the daemon picked
        const outcomes = claims.map(
          c =>
            `${/"task": "([^"]*)"/.exec(c.outcome.text)?.[1] ?? String(c.call.input.task)}:${/"outcome": "(\w+)"/.exec(c.outcome.text)?.[1] ?? 'refused'}`
        )
        if (i === plannerIndex) expect(outcomes, `agent ${i + 1} (planner) claims`).toContain(`${PLAN_TASK}:HELD`)
        else expect(outcomes, `agent ${i + 1} claims`).not.toContain(`${PLAN_TASK}:HELD`)
      }
      const doers = new Set(log.filter(e => e.kind === 'done' && body(e).task !== PLAN_TASK).map(e => e.author))
      expect(
        [...doers].some(id => id !== planner),
        'an agent other than the planner did a task'
      ).toBe(true)

      // ---- the shared branch has each task's merge, under its claim's fence ----
      const messages = await git(['--git-dir', repo, 'log', 'main', '--format=%B'])
      for (const e of log.filter(e => e.kind === 'integration' && body(e).result === 'merged')) {
        expect(messages).toContain(`Agency-Task: ${body(e).task as string}@${body(e).epoch as number}`)
      }
      const files = (await git(['--git-dir', repo, 'ls-tree', '--name-only', '-r', 'main'])).split('\n')
      expect(files).toEqual(
        expect.arrayContaining(['greet.js', 'shout.js', 'welcome.js', 'test/greet.test.js', 'test/shout.test.js', 'test/welcome.test.js'])
      )
    },
    TIMEOUT_MS + 120_000
  )
})
