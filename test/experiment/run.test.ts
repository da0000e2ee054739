// `agency experiment run` end to end, short: two scripted agents rebuild part
// of the strkit example (its plan cut to the core and three features, the
// recipes' work time to 5 %) until the goal is met, in the sandbox where the
// host has one (the agents, their test runs and the integrations boxed), while
// the runner scores the shared branch against all 66 hidden tests. The final score is worked out
// by hand below; no hidden test reaches the swarm's directory; the report is
// rebuilt from the data alone. Bad input is refused before any daemon starts.
// (The whole plan's final code scores 64 of 66: score.test.ts.)
import { execFile, spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import type { PassPoint, RunSummary } from '../../src/experiment/run-files.js'
import type { ScoreResult } from '../../src/experiment/score.js'
import { assertBuilt, AGENCY_BIN, REPO_ROOT } from '../helpers/agent-loop.js'
import { missingTools } from './tools.js'
import { detectSupport } from '../../src/sandbox/index.js'

const run = promisify(execFile)
const boxed = detectSupport().bwrap.ok
const STRKIT = join(REPO_ROOT, 'examples/strkit')
const RUN_TIMEOUT_MS = 8 * 60_000
const dirs: string[] = []

afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'agency-experiment-test-'))
  dirs.push(d)
  return d
}

async function agency(
  args: string[],
  timeoutMs = 60_000,
  env: NodeJS.ProcessEnv = {}
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return await new Promise(resolve => {
    const child = spawn(process.execPath, [AGENCY_BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', d => {
      stdout += String(d)
    })
    child.stderr.on('data', d => {
      stderr += String(d)
    })
    const timer = setTimeout(() => {
      child.kill('SIGINT')
    }, timeoutMs)
    child.once('close', code => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}

async function files(dir: string): Promise<string[]> {
  const out: string[] = []
  for (const e of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const p = join(dir, e.name)
    if (e.isDirectory()) out.push(...(await files(p)))
    else if (e.isFile()) out.push(p)
  }
  return out
}

const sha = async (f: string): Promise<string> =>
  createHash('sha256')
    .update(await readFile(f))
    .digest('hex')

describe.skipIf(missingTools != null)('agency experiment run --harness sim on the strkit example', () => {
  it(
    'scores the shared branch over time, stops when the goal is met at the hand-computed 34/66, and keeps the hidden tests out of the swarm',
    async () => {
      assertBuilt()
      // The short plan: the core (options, --help, --version, errors), then case, base64 and roman.
      const base = await tempDir()
      const task = join(base, 'strkit')
      await run('cp', ['-r', STRKIT, task])
      const projectFile = join(task, 'sim', 'project.json')
      const project = JSON.parse(await readFile(projectFile, 'utf8')) as { tasks: Array<{ id: string }> }
      project.tasks = project.tasks.filter(t => ['core', 'case', 'base64', 'roman'].includes(t.id))
      await writeFile(projectFile, JSON.stringify(project, null, 2))
      const out = join(base, 'out')
      const r = await agency(
        [
          'experiment',
          'run',
          '--task',
          task,
          '--agents',
          '2',
          '--harness',
          'sim',
          '--budget',
          '6m',
          '--score-every',
          '20s',
          '--sim-work-scale',
          '0.05',
          '--out',
          out
        ],
        RUN_TIMEOUT_MS
      )
      const diagnostics = `${r.stdout.split('\n').slice(-15).join('\n')}\n${r.stderr}`
      expect(r.code, diagnostics).toBe(0)

      const runDir = join(out, 'n2', 'run-1')
      const summary = JSON.parse(await readFile(join(runDir, 'summary.json'), 'utf8')) as RunSummary
      expect(summary.stoppedBy, diagnostics).toBe('goal')
      // By hand, branch by branch: cli 5/5 and case 7/8 (title after a hyphen is missed); base64 6/7
      // (no decoding without padding) and rot13/caesar 0/7; roman 14/14 and count 0/4, freq 1/4
      // ("--top 0" is status 2, as an unknown command is); wrap, pad and the rest 1/17 (empty input
      // to wrap prints nothing, as an unknown command does). 12 + 6 + 15 + 1 = 34.
      expect(summary.final).toMatchObject({ passed: 34, tests: 66, error: null })
      expect(summary.tasksDone).toBe(4)
      expect(summary.tasksTotal).toBe(4)
      expect(summary.integrations).toBeGreaterThanOrEqual(4)
      // roman has a trap approach; a recorded trap is not walked into again.
      expect(summary.failureFindings).toBeGreaterThanOrEqual(1)
      expect(summary.repeatedFailures).toBe(0)
      expect(summary.harnessRestarts).toBe(0)
      // the scripted agent reports no tokens: its runs count time, no dollars
      expect(summary.spend?.usd ?? 0).toBe(0)
      expect(summary.agentHours).toBeCloseTo((2 * summary.elapsedSeconds) / 3600, 6)

      // The pass rate over time: from the cleanroom (no compile.sh yet) to the final snapshot.
      const points = (JSON.parse(await readFile(join(runDir, 'pass-rate.json'), 'utf8')) as { points: PassPoint[] }).points
      expect(points.length).toBeGreaterThanOrEqual(2)
      expect(points[0]).toMatchObject({ passed: 0, tests: 66, score: 0, error: 'compile_failed' })
      for (let i = 1; i < points.length; i++) expect(points[i].t).toBeGreaterThanOrEqual(points[i - 1].t)
      for (const p of points) expect(p.score).toBeCloseTo(p.tests === 0 ? 0 : p.passed / p.tests, 9)
      const last = points[points.length - 1]
      expect(last).toMatchObject({ passed: 34, tests: 66, commit: summary.final.commit })
      const csv = (await readFile(join(runDir, 'pass-rate.csv'), 'utf8')).trim().split('\n')
      expect(csv[0]).toBe('seconds,commit,passed,tests,pass_rate,error')
      expect(csv).toHaveLength(points.length + 1)
      for (const m of ['10', '20', '30', '50']) {
        const first = points.find(p => p.score * 100 >= Number(m))
        expect(summary.timeToSeconds[m]).toBe(first?.t ?? null)
      }

      // The final snapshot is the shared branch the swarm left, and scoring it alone agrees.
      const bare = join(runDir, 'swarm', 'repo.git')
      const head = (await run('git', ['--git-dir', bare, 'rev-parse', 'main'], { encoding: 'utf8' })).stdout.trim()
      expect(summary.final.commit).toBe(head)
      const final = JSON.parse(await readFile(join(runDir, 'final-score.json'), 'utf8')) as ScoreResult
      expect(final.branches.map(b => [b.branch, b.passed, b.tests])).toEqual([
        ['4c1e9a07b2d3', 12, 13],
        ['9b72f0c4e815', 6, 14],
        ['d05a3e8f61c7', 15, 22],
        ['e6f81b2c9a40', 1, 17]
      ])
      const missed = final.results.filter(t => t.status !== 'passed' && !t.ignored).map(t => t.name)
      expect(missed).toContain('eval.tests.test_case.test_title_words_start_only_after_blanks')
      expect(missed).toContain('eval.tests.test_base64.test_decode_without_padding')
      expect(missed.filter(n => n.includes('test_roman'))).toEqual([])
      const alone = await agency(['experiment', 'score', '--task', task, '--submission', 'main', '--repo', bare], 5 * 60_000)
      expect(alone.code, alone.stderr).toBe(0)
      expect(alone.stdout).toContain('score 34/66 = 51.52 %')
      expect(alone.stdout).toMatch(/^d05a3e8f61c7 +15 +7 +0 +0 +1 +1$/m)

      // Nothing of the hidden tests is in the swarm's directory: no file equal to one of
      // them, no test name in any file, none of the tests in the shared repository.
      const hidden = new Set<string>()
      for (const f of await files(join(STRKIT, 'tests'))) if ((await stat(f)).size > 0) hidden.add(await sha(f))
      const swarmFiles = await files(join(runDir, 'swarm'))
      expect(swarmFiles.length).toBeGreaterThan(10)
      const leaks: string[] = []
      for (const f of swarmFiles) {
        if (hidden.has(await sha(f))) leaks.push(`${f}: a copy of a hidden test file`)
        if ((await readFile(f, 'latin1')).includes('test_title_words_start_only_after_blanks')) leaks.push(`${f}: names a hidden test`)
      }
      expect(leaks).toEqual([])
      const tracked = (await run('git', ['--git-dir', bare, 'ls-tree', '-r', '--name-only', 'main'], { encoding: 'utf8' })).stdout.split(
        '\n'
      )
      expect(tracked).toContain('reference/executable')
      expect(tracked).toContain('docs/strkit.md')
      expect(tracked.filter(f => f.startsWith('eval/') || f === 'tests.json')).toEqual([])
      // The reference is not in the build the scorer ran: in a box the agents' reference/executable
      // is a link to the execute-only copy each box binds; without one, files identical to it were removed.
      const config = JSON.parse(await readFile(join(out, 'experiment.json'), 'utf8')) as { sandbox: string }
      expect(config.sandbox).toBe(boxed ? 'bwrap' : 'none')
      expect(final.removedFiles).toEqual(boxed ? [] : ['reference/executable'])

      // The report, and the same report rebuilt from the data.
      const report = await readFile(join(out, 'report.md'), 'utf8')
      expect(report).toContain('| task | agents | final pass rate | change against 1 agent |')
      expect(report).toContain('| strkit | 2 | 51.52 % | — |')
      expect(await readFile(join(out, 'pass-rate.svg'), 'utf8')).toMatch(/<polyline [^>]*points="[^"]+"><title>2 agents<\/title>/)
      await rm(join(out, 'report.md'))
      const rebuilt = await agency(['experiment', 'report', out])
      expect(rebuilt.code, rebuilt.stderr).toBe(0)
      expect(rebuilt.stdout).toContain('| strkit | 2 | 51.52 % | — |')
      expect(await readFile(join(out, 'report.md'), 'utf8')).toBe(report)
      // The swarm is down.
      expect(existsSync(join(runDir, 'swarm', 'swarm.json'))).toBe(false)
    },
    RUN_TIMEOUT_MS + 3 * 60_000
  )
})

describe('agency experiment: bad input is refused before anything starts', () => {
  it('a budget of 0, a task without tests.json, a sim run without recipes, an OUT that is not empty, a model-running harness where no sandbox works', async () => {
    assertBuilt()
    const base = await tempDir()
    const zero = await agency([
      'experiment',
      'run',
      '--task',
      STRKIT,
      '--agents',
      '1',
      '--harness',
      'sim',
      '--budget',
      '0',
      '--out',
      join(base, 'a')
    ])
    expect([zero.code, zero.stderr.trim()]).toEqual([1, 'agency: --budget must be more than 0: give how long, e.g. 20m'])
    const noTests = join(base, 'task')
    await run('cp', ['-r', STRKIT, noTests])
    await rm(join(noTests, 'tests.json'))
    const r1 = await agency([
      'experiment',
      'run',
      '--task',
      noTests,
      '--agents',
      '1',
      '--harness',
      'sim',
      '--budget',
      '1m',
      '--out',
      join(base, 'b')
    ])
    expect(r1.code).toBe(1)
    expect(r1.stderr).toMatch(/has no tests\.json/)
    const r2 = await agency(['experiment', 'score', '--task', noTests, '--submission', base])
    expect(r2.code).toBe(1)
    expect(r2.stderr).toMatch(/has no tests\.json/)
    const echo = join(REPO_ROOT, 'test/experiment/fixtures/echo-task')
    const noRecipes = await agency([
      'experiment',
      'run',
      '--task',
      echo,
      '--agents',
      '1',
      '--harness',
      'sim',
      '--budget',
      '1m',
      '--out',
      join(base, 'c')
    ])
    expect(noRecipes.code).toBe(1)
    expect(noRecipes.stderr).toMatch(/--harness sim needs the scripted agent's recipes/)
    const busy = join(base, 'busy')
    await run('mkdir', ['-p', busy])
    await writeFile(join(busy, 'notes.txt'), 'mine')
    const r3 = await agency(['experiment', 'run', '--task', STRKIT, '--agents', '1', '--harness', 'sim', '--budget', '1m', '--out', busy])
    expect(r3.code).toBe(1)
    expect(r3.stderr).toMatch(/is not empty: give a new or empty --out directory/)
    const badAgents = await agency([
      'experiment',
      'run',
      '--task',
      STRKIT,
      '--agents',
      '1,x',
      '--harness',
      'sim',
      '--budget',
      '1m',
      '--out',
      join(base, 'd')
    ])
    expect(badAgents.stderr).toMatch(/--agents "1,x": give swarm sizes separated by commas/)
    const noCompile = await agency(['experiment', 'score', '--task', STRKIT, '--submission', base])
    expect(noCompile.code).toBe(0)
    expect(noCompile.stdout).toMatch(/error: compile_failed: the submission has no compile\.sh/)
    expect(noCompile.stdout).toContain('score 0/66 = 0.00 % (compile_failed)')
    // A harness that runs a model, on a host where no sandbox works (no bwrap on PATH): refused unless told --sandbox none.
    const bin = join(base, 'bin')
    await mkdir(bin)
    await symlink(join(REPO_ROOT, 'node_modules', '.bin', 'claude'), join(bin, 'claude'))
    await symlink(process.execPath, join(bin, 'node'))
    const unboxed = await agency(
      ['experiment', 'run', '--task', STRKIT, '--agents', '1', '--harness', 'claude', '--budget', '1m', '--out', join(base, 'e')],
      60_000,
      { PATH: bin }
    )
    expect(unboxed.code).toBe(1)
    expect(unboxed.stderr).toMatch(
      /not starting harness claude without a sandbox \(no sandbox works on this host\): install bubblewrap .* or pass --sandbox none/
    )
    // Nothing was started or written for the refused runs.
    for (const d of ['a', 'b', 'c', 'd', 'e']) expect(existsSync(join(base, d))).toBe(false)
    expect(await readdir(busy)).toEqual(['notes.txt'])
  }, 120_000)
})
