// The real Gemini CLI as an agent of the swarm: `agentd --harness gemini` runs
// node_modules/.bin/gemini headless in its workspace, as this test's user, with a
// temporary HOME and its data dir under the system temporary directory (where
// a settings file passed by GEMINI_CLI_SYSTEM_SETTINGS_PATH is refused as
// insecure). Only the model is a stand-in (models/gemini-api.ts, reached through
// GOOGLE_GEMINI_BASE_URL); the CLI, its MCP client talking to `agency mcp`, its
// write_file and shell tools, the daemon, git and the tests are all real.
//
// One goal, one task: the agent claims it over MCP, writes greet.js, runs the
// goal's tests, commits, integrates and marks the task done; the CLI exits 0 and
// is not started again once the goal is met.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { connectAgency, type Agency } from '../../src/api/client.js'
import type { AgencyClient, LogEntry } from '../../src/gen/agency/v1/api.js'
import { waitFor } from '../agents/helpers.js'
import { GREET_SOLUTION, GREET_TEST_COMMAND, countMatches, git, greetProject, harnessLog, startAgentDaemon, type AgentDaemon } from './agent-daemon.js'
import { startGeminiStandIn, type GeminiStandIn } from './models/gemini-api.js'

const TIMEOUT_MS = 4 * 60_000

let root = ''
let model: GeminiStandIn | undefined
let daemon: AgentDaemon | undefined
let api: Agency | undefined

afterAll(async () => {
  api?.close()
  await daemon?.stop()
  await model?.close()
  if (root !== '') await rm(root, { recursive: true, force: true })
}, 60_000)

async function wholeLog (a: Agency): Promise<LogEntry[]> {
  const out: LogEntry[] = []
  for await (const e of a.stream((c: AgencyClient, m) => c.watchLog({ after: 0, follow: false }, m))) out.push(e)
  return out
}

describe('agentd --harness gemini (Gemini CLI 0.61 against a scripted Gemini API)', () => {
  it('does the one task: claimed over MCP, committed, integrated with its trailer, done; .gemini/ stays out of git; the CLI exits 0 and is not restarted', async () => {
    root = await mkdtemp(join(tmpdir(), 'agency-gemini-'))
    const home = join(root, 'home')
    const dataDir = join(root, 'agent')
    const tokenFile = join(root, 'api-token')
    // The user's own choice of login, as the auth dialog saves it: a Gemini API key.
    await mkdir(join(home, '.gemini'), { recursive: true })
    await writeFile(join(home, '.gemini', 'settings.json'), JSON.stringify({ security: { auth: { selectedType: 'gemini-api-key' } } }))
    const shared = await greetProject(root)
    model = await startGeminiStandIn({ solutions: { greet: { files: { 'greet.js': GREET_SOLUTION }, message: 'greet: say hello by name' } } })

    // The API wants a token, so the MCP server only works if it gets AGENCY_TOKEN through Gemini's redaction.
    const common = ['--repo', shared, '--settle-ms', '300', '--heartbeat-ms', '400', '--api-token-file', tokenFile]
    const env = { GEMINI_API_KEY: 'anything', GOOGLE_GEMINI_BASE_URL: model.url }

    // The goal and the task are on the board before the agent first looks.
    const setup = await startAgentDaemon({ name: 'gem', dataDir, home, env, extraArgs: common })
    const setupApi = connectAgency(setup.grpc, { tokenFile })
    try {
      await setupApi.call((c: AgencyClient) => c.setGoal, { text: 'a greet function', files: [], testCommand: GREET_TEST_COMMAND })
      await setupApi.call((c: AgencyClient) => c.addTask, { id: 'greet', title: 'a greet function', description: 'greet(name) returns "Hello, <name>!" from greet.js', deps: [], scope: ['greet.js'], priority: 0 })
    } finally {
      setupApi.close()
      await setup.stop()
    }

    daemon = await startAgentDaemon({ name: 'gem', dataDir, home, env, extraArgs: [...common, '--harness', 'gemini'] })
    api = connectAgency(daemon.grpc, { tokenFile })
    const a = api
    const me = daemon.peerId
    const diagnose = async (): Promise<string> => `--- harness.log ---\n${(await harnessLog(dataDir)).slice(-6000)}\n--- agentd ---\n${daemon?.stderr() ?? ''}\n--- model turns ---\n${model?.turns().map(t => `${JSON.stringify(t.step)}\n  after: ${JSON.stringify(t.history?.at(-1) ?? null).slice(0, 1500)}`).join('\n') ?? ''}`

    try {
      // The scripted agent's only answers are "done" and a reason to stop: stop waiting at the first of those.
      // So does a CLI that failed (before the fix: exit 55 on the untrusted folder, restarted forever).
      const gaveUp = async (): Promise<string | undefined> => {
        if (model?.turns().some(t => t.step?.kind === 'answer' && !t.step.text.startsWith('Task ')) === true) return 'the scripted agent stopped early'
        const failed = /agentd: harness exited \(code [1-9]\d*/.exec(await harnessLog(dataDir))
        return failed != null ? `the CLI failed: ${failed[0]}` : undefined
      }
      const outcome = await waitFor('the greet task to be done', async () => {
        const t = (await a.call((c: AgencyClient) => c.getTask, { id: 'greet' })).task
        return t?.state === 'done' ? t : await gaveUp()
      }, TIMEOUT_MS - 60_000, 500)
      if (typeof outcome === 'string') throw new Error(outcome)
      const task = outcome
      await waitFor('the supervisor to leave the finished CLI stopped', async () => (await harnessLog(dataDir)).includes('work is done; not restarting the harness'), 60_000, 500)

      // ---- done by this agent, under the claim the integration names ----
      const log = await wholeLog(a)
      const dones = log.filter(e => e.kind === 'done')
      expect(dones.map(e => [JSON.parse(e.bodyJson).task, e.author])).toEqual([['greet', me]])
      const claims = log.filter(e => e.kind === 'claim' && JSON.parse(e.bodyJson).task === 'greet')
      expect(claims.map(e => e.author)).toEqual([me])
      const merged = log.filter(e => e.kind === 'integration' && JSON.parse(e.bodyJson).result === 'merged')
      expect(merged).toHaveLength(1)
      const { commit, epoch } = JSON.parse(merged[0].bodyJson) as { commit: string, epoch: number }
      expect(task.epoch).toBe(epoch)

      // ---- the work is on the shared branch, with its trailer, and .gemini/ is not ----
      expect(await git(['--git-dir', shared, 'rev-parse', 'main'])).toBe(commit)
      const trailers = await git(['--git-dir', shared, 'log', '--format=%(trailers:key=Agency-Task,valueonly)', 'main'])
      expect(trailers.split('\n').filter(l => l.trim() !== '')).toEqual([`greet@${epoch}`])
      const files = (await git(['--git-dir', shared, 'ls-tree', '-r', '--name-only', 'main'])).split('\n')
      expect(files.sort()).toEqual(['README.md', 'greet.js', 'package.json', 'test/greet.test.js'])
      expect(await git(['--git-dir', shared, 'show', 'main:greet.js'])).toBe(GREET_SOLUTION.trim())
      const runs = log.filter(e => e.kind === 'test_run').map(e => JSON.parse(e.bodyJson))
      expect(runs.map(r => [r.commit, r.passed, r.failed ?? 0])).toEqual([[commit, 1, 0]])

      // The settings Gemini read are in the workspace, ignored by git there.
      const workspace = (await a.call((c: AgencyClient) => c.getWorkspace, { task: '' })).path
      const settings = JSON.parse(await readFile(join(workspace, '.gemini', 'settings.json'), 'utf8'))
      expect(Object.keys(settings.mcpServers)).toEqual(['agency'])
      expect(await git(['status', '--porcelain', '--untracked-files=all'], workspace)).toBe('')
      expect(await git(['check-ignore', '.gemini/settings.json'], workspace)).toBe('.gemini/settings.json')

      // ---- what the CLI did, as the model saw it ----
      const turns = model.turns()
      const offered = new Set<string>(turns[0].body.tools.flatMap((t: any) => (t.functionDeclarations ?? []).map((f: any) => f.name)))
      for (const tool of ['mcp_agency_status', 'mcp_agency_claim', 'mcp_agency_integrate', 'mcp_agency_done', 'write_file', 'run_shell_command']) expect(offered).toContain(tool)
      const steps = turns.map(t => t.step)
      expect(steps.filter(s => s?.kind === 'call').map(s => s?.kind === 'call' ? s.name : '')).toEqual([
        'mcp_agency_status', 'mcp_agency_read_inbox', 'mcp_agency_ready', 'mcp_agency_search_findings', 'mcp_agency_claim',
        'run_shell_command', ...(steps.some(s => s?.kind === 'call' && String(s.args.command).startsWith('agency workspace')) ? ['run_shell_command'] : []),
        'write_file', 'run_shell_command', 'run_shell_command', 'mcp_agency_integrate', 'mcp_agency_done'
      ])
      expect(steps.at(-1)?.kind).toBe('answer')

      // ---- nothing waited for an approval: every tool ran and its result reached the model ----
      const results = (await harnessLog(dataDir)).split('\n').filter(l => l.startsWith('{')).map(l => JSON.parse(l)).filter(e => e.type === 'tool_result')
      expect(results.length).toBe(steps.length - 1)
      expect(results.filter(r => r.status !== 'success')).toEqual([])

      // ---- one run of the CLI, which ended by itself with 0 ----
      const hl = await harnessLog(dataDir)
      expect(countMatches(hl, /agentd: starting gemini /)).toBe(1)
      expect(countMatches(hl, /agentd: harness exited \(code 0, signal null\)/)).toBe(1)
      expect(hl).not.toMatch(/agentd: harness exited \(code [1-9]/)
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${await diagnose()}`, { cause: err })
    }
  }, TIMEOUT_MS)
})
