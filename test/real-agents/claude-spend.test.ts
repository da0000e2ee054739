// The swarm's budget and shared rate limits with real Claude Code CLIs, each
// beside its own agentd. Only the model is a stand-in: scripted Messages
// endpoints on loopback (models/anthropic-messages.ts) that report usage the
// way the API does (input, cache reads and writes, output) and, in the second
// test, refuse one account's requests with a 429 that says when to retry. The
// CLIs, the daemons, their log and its replication are the real programs.
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { connectAgency, type Agency } from '../../src/client/agency.js'
import type { AgencyClient } from '../../src/gen/agency/v1/api.js'
import { AGENCY_BIN, execFileP } from '../helpers/agent-loop.js'
import { waitFor } from '../helpers/wait-for.js'
import { AgentDaemons, count, harnessLog, type AgentDaemon } from './agent-daemon.js'
import { assertCli } from './greeter-scenario.js'
import { startAnthropicModel, type ScriptedAnthropicModel, type Usage } from './models/anthropic-messages.js'
import { claudeCodeEnv } from './claude-code.js'

const TIMEOUT_MS = 240_000
/** What every answer reports: 200 tokens, input counting its cache reads and writes. */
const USAGE: Usage = { input_tokens: 100, output_tokens: 20, cache_creation_input_tokens: 30, cache_read_input_tokens: 50 }

let scratch: AgentDaemons | undefined
const models: ScriptedAnthropicModel[] = []
const apis: Agency[] = []

afterEach(async () => {
  for (const a of apis.splice(0)) a.close()
  await scratch?.cleanup()
  for (const m of models.splice(0)) await m.close()
}, 90_000)

/** The scripted mind: nothing to do, say so and end the run (one request per run). */
const idle = (): { kind: 'answer'; text: string } => ({ kind: 'answer', text: 'Nothing to do for now.' })

async function agency(d: AgentDaemon, ...args: string[]): Promise<any> {
  const { stdout } = await execFileP(process.execPath, [AGENCY_BIN, ...args, '--addr', d.grpc, '--json'], { timeout: 60_000 })
  return JSON.parse(stdout)
}

/** Tokens a model served, as the API counts them: input (cache reads and writes included) and output. */
function served(m: ScriptedAnthropicModel): { input: number; output: number } {
  const answered = m.requests.filter(r => r.usage != null)
  return {
    input: answered.reduce(
      (s, r) =>
        s + (r.usage as Usage).input_tokens + (r.usage as Usage).cache_read_input_tokens + (r.usage as Usage).cache_creation_input_tokens,
      0
    ),
    output: answered.reduce((s, r) => s + (r.usage as Usage).output_tokens, 0)
  }
}

async function startSwarm(n: number, env: (i: number, home: string) => Record<string, string>): Promise<AgentDaemon[]> {
  scratch = new AgentDaemons()
  const dir = await scratch.dir('agency-claude-spend-')
  const flags = [
    '--settle-ms',
    '300',
    '--heartbeat-ms',
    '300',
    '--live-timeout-ms',
    '3000',
    '--swarm',
    `claude-spend-${process.pid}-${Date.now()}`
  ]
  const daemons: AgentDaemon[] = []
  for (let i = 0; i < n; i++) {
    const home = join(dir, `home-${i + 1}`)
    await mkdir(home)
    daemons.push(
      await scratch.start({
        name: `claude-${i + 1}`,
        dataDir: join(dir, `agent-${i + 1}`),
        home,
        env: env(i, home),
        peers: i === 0 ? [] : daemons[0].addrs,
        extraArgs: [...flags, '--harness', 'claude']
      })
    )
  }
  apis.push(...daemons.map(d => connectAgency(d.grpc)))
  return daemons
}

describe('a budget every daemon enforces from the shared record', () => {
  it(
    'four Claude Code agents stop starting runs at a token cap, within the bound, say budget reached everywhere, and resume when it is raised',
    async () => {
      assertCli('claude')
      for (let i = 0; i < 4; i++) models.push(await startAnthropicModel(idle, { usage: USAGE }))
      const daemons = await startSwarm(4, (i, home) => ({ ...claudeCodeEnv(home, models[i].url), CLAUDE_CODE_MAX_RETRIES: '0' }))
      const CAP = 3000
      // what the agents had spent before the cap was set (on a loaded machine the four starts take long enough to pass it)
      const spentBefore = models.map(served).reduce((s, x) => s + x.input + x.output, 0)
      const set = await agency(daemons[0], 'budget', 'set', '--tokens', String(CAP))
      expect(set.budget.tokens).toBe(CAP)

      // ---- every daemon hears of the cap and its harness is held by it, no run going ----
      // (held, not merely idle: a harness between quick runs waits out a restart backoff of up to
      // 30 s before it asks the gate, and only then says why it does not start)
      const held = async (): Promise<boolean> => {
        for (const d of daemons) {
          const b = await agency(d, 'budget')
          if (!b.reached) return false
          const s = await apis[daemons.indexOf(d)].call((c: AgencyClient) => c.getStatus, {})
          if (s.harness?.state !== 'held' || !s.harness.note.startsWith('budget reached')) return false
        }
        return true
      }
      await waitFor(held, { what: "every daemon's harness to be held by the budget", timeoutMs: TIMEOUT_MS, intervalMs: 1000 })
      // and stays so: what was served is all recorded (the same record on every daemon)
      await waitFor(
        async () => {
          const usages = await Promise.all(daemons.map(async d => await agency(d, 'usage', '--by', 'agent')))
          const want = models.map(served)
          return (
            usages.every(
              u =>
                u.rows.length === 4 &&
                daemons.every((d, i) => {
                  const row = u.rows.find((r: any) => r.key === d.peerId)
                  return row != null && row.input_tokens === want[i].input && row.output_tokens === want[i].output
                })
            ) && usages
          )
        },
        { what: "every daemon to hold each agent's usage exactly as its endpoint served it", timeoutMs: TIMEOUT_MS, intervalMs: 1000 }
      )

      const total = (await agency(daemons[0], 'usage')).total
      const allTokens = total.input_tokens + total.output_tokens
      const largestRun = Math.max(
        ...(
          await Promise.all(
            daemons.map(async d => {
              const log = await harnessLog(d)
              return log
                .split('\n')
                .filter(l => l.startsWith('{"type":"result"'))
                .map(l => {
                  const u = JSON.parse(l).usage
                  return u.input_tokens + u.output_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens
                })
            })
          )
        ).flat()
      )
      // held because recorded spend plus one more run at the largest run's size reaches the cap...
      expect(allTokens + largestRun).toBeGreaterThanOrEqual(CAP)
      // ...and what was spent beyond the cap (or beyond what was spent when it was set) is within the bound (docs/spend.md): 2 N R
      expect(allTokens - Math.max(CAP, spentBefore)).toBeLessThanOrEqual(2 * 4 * largestRun)
      for (const d of daemons) {
        const { stdout } = await execFileP(process.execPath, [AGENCY_BIN, 'status', '--addr', d.grpc], { timeout: 60_000 })
        expect(stdout).toMatch(/^spend: swarm [\d,]+ tokens, \$[\d.]+; budget reached \(tokens: /m)
        const log = await harnessLog(d)
        expect(log).toContain('agentd: not starting a run: budget reached')
        // no run failed, no claim was handed back
        expect(count(log, /harness exited \(code [1-9]/)).toBe(0)
      }

      // ---- raising the cap resumes every agent ----
      const before = models.map(m => m.requests.length)
      await agency(daemons[2], 'budget', 'set', '--tokens', String(CAP * 100))
      await waitFor(() => models.every((m, i) => m.requests.length > before[i]), {
        what: 'every agent to start a run again',
        timeoutMs: TIMEOUT_MS,
        intervalMs: 500
      })
      for (const d of daemons) expect((await agency(d, 'budget')).reached).toBe(false)
    },
    TIMEOUT_MS * 3
  )
})

describe('a rate limit shared by the agents on one account', () => {
  it(
    'a 429 seen on account A holds the agents on A until the time it gave, and only them; no claims go back; they start again spread',
    async () => {
      assertCli('claude')
      const HOLD_S = 30
      let limitedUntil = 0
      // one endpoint, two accounts: A's requests are refused for HOLD_S seconds from the first one
      const model = await startAnthropicModel(idle, {
        usage: USAGE,
        refuse: ({ apiKey }) => {
          if (apiKey !== 'key-a') return undefined
          if (limitedUntil === 0) limitedUntil = Date.now() + HOLD_S * 1000
          if (Date.now() >= limitedUntil) return undefined
          return {
            status: 429,
            headers: { 'retry-after': String(HOLD_S) },
            type: 'rate_limit_error',
            message: `Number of request tokens has exceeded your per-minute rate limit. Please try again in ${HOLD_S}s.`
          }
        }
      })
      models.push(model)
      const keys = ['key-a', 'key-a', 'key-b']
      const daemons = await startSwarm(3, (i, home) => ({
        ...claudeCodeEnv(home, model.url),
        ANTHROPIC_API_KEY: keys[i],
        CLAUDE_CODE_MAX_RETRIES: '0'
      }))

      // ---- both agents on A are held, with the hold the 429 gave; the agent on B is not ----
      // (asked over gRPC, which answers fast on a busy machine: the hold lasts HOLD_S)
      const holds = await waitFor(
        async () => {
          const b = await Promise.all(apis.map(async a => await a.call((c: AgencyClient) => c.getBudget, {})))
          return b[0].hold != null && b[1].hold != null && b
        },
        { what: 'the agents on account A to be held', timeoutMs: TIMEOUT_MS, intervalMs: 200 }
      )
      const heldAt = Date.now()
      const [holdA, holdA2] = [holds[0].hold, holds[1].hold] as Array<NonNullable<(typeof holds)[0]['hold']>>
      expect(heldAt).toBeLessThan(limitedUntil)
      expect(holdA.provider).toBe(holdA2.provider)
      expect(holdA.kind).toBe('transient')
      expect(holdA.until).toBeGreaterThanOrEqual(limitedUntil - 2000)
      expect(holds[2].hold).toBeUndefined()

      // ---- account B keeps working meanwhile; A sends nothing until its hold is over ----
      await waitFor(() => Date.now() > limitedUntil + 15_000, { what: 'the hold to pass', timeoutMs: TIMEOUT_MS, intervalMs: 500 })
      const answered = (key: string, from: number, to: number): number =>
        model.requests.filter(r => r.apiKey === key && r.usage != null && r.at >= from && r.at < to).length
      // once both are held, no run on A starts until the limit ends (a run already going ends its step); B is answered meanwhile
      for (const d of daemons.slice(0, 2)) {
        const starts = (await harnessLog(d))
          .split('\n')
          .filter(l => l.includes('agentd: starting claude '))
          .map(l => Date.parse(l.slice(1, l.indexOf(']'))))
        expect(starts.filter(t => t >= heldAt && t < limitedUntil)).toEqual([])
      }
      expect(answered('key-b', heldAt, limitedUntil)).toBeGreaterThan(0)
      for (const d of daemons.slice(0, 2)) {
        const log = await harnessLog(d)
        expect(log).toMatch(/agentd: not starting a run: provider limited \(transient\) until /)
        const s = await apis[daemons.indexOf(d)].call((c: AgencyClient) => c.getStatus, {})
        // the limited run was not a failure: nothing counted, no claim handed back
        expect(s.harness?.recentFailures).toBe(0)
      }
      // ---- after the hold the agents on A start again, each at its own time ----
      const restarts = await waitFor(
        async () => {
          const times = await Promise.all(
            daemons.slice(0, 2).map(async d => {
              const log = await harnessLog(d)
              const m = /\[([^\]]+)\] agentd: starting again: provider limited/.exec(log)
              return m != null ? Date.parse(m[1]) : null
            })
          )
          return times.every(t => t != null) && times
        },
        { what: 'the agents on A to start again', timeoutMs: TIMEOUT_MS, intervalMs: 500 }
      )
      for (const t of restarts) expect(t).toBeGreaterThanOrEqual(holdA.until - 1000)
      expect(restarts[0]).not.toBe(restarts[1])
      // no release entries: no claim went back for the limit
      const log = await apis[0].call((c: AgencyClient) => c.logInfo, {})
      expect(log.byKind.release ?? 0).toBe(0)
      expect(log.byKind.rate_limit ?? 0).toBeGreaterThanOrEqual(1)
    },
    TIMEOUT_MS * 2
  )
})
