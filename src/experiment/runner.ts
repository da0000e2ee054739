// `agency experiment run`: for each swarm size N (and each repeat), a fresh
// swarm of N agents on a shared repository seeded with the task's cleanroom,
// given only the goal and the test command the agents may see (the first agent
// to hold `plan` adds the tasks). While it runs,
// the shared branch is scored every --score-every by ProgramBench's rules in
// scratch directories outside the swarm; the run ends when the goal is met
// (every task done and the shared branch's own tests green) or the budget is
// spent, and its last snapshot is scored once more. The hidden tests never go
// into the swarm's directory: the agents' workspaces, data dirs and logs.
import { execFile } from 'node:child_process'
import { existsSync, realpathSync } from 'node:fs'
import { mkdir, readFile, readdir } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { promisify } from 'node:util'
import { connectAgency, type Agency } from '../client/agency.js'
import { FailedPreconditionError, InvalidArgumentError } from '../core/errors.js'
import type { AgencyClient, LogEntry, StatusReply } from '../gen/agency/v1/api.js'
import { tmpdir } from 'node:os'
import { createSandbox, type Sandbox } from '../sandbox/index.js'
import { checkLaunchCommand } from '../harness/command-check.js'
import { isScriptedHarness } from '../harness/adapters/scripted.js'
import { harnessLaunch } from '../harness/index.js'
import { progressOf } from '../swarm/swarm.js'
import { startSwarmDaemons, swarmDown } from '../swarm/swarm.js'
import { prepareCleanroom, REFERENCE_IN_BOX, REFERENCE_PATH, seedExperimentRepo, type Cleanroom } from './cleanroom.js'
import { formatDuration } from './duration.js'
import { spendOfRecord } from './run-spend.js'
import { writeReport, sizeSummary } from './report.js'
import { runDir, timeTo, writeJson, writePassRate, type ExperimentConfig, type PassPoint, type RunSummary } from './run-files.js'
import { scoreSubmission, type ScoreResult } from './score.js'
import { summarizeRecord, type RecordEntry } from './swarm-record.js'
import { loadTaskDir, scoredTestCount, type TaskDir } from './task-dir.js'

const run = promisify(execFile)

/** The task a goal with an empty board shows (goal-only start); its holder adds the tasks. */
const PLAN_TASK = 'plan'
const DEFAULT_TEST_COMMAND = 'sh compile.sh && sh tests/run.sh'

export interface ExperimentOptions {
  task: string
  cleanroom?: string
  agents: number[]
  harness: string
  budgetMs: number
  scoreEveryMs: number
  repeat: number
  out: string
  /** the goal text (default: one written from the task) */
  goal?: string
  /** the agents' own test command (default: the recipe's for sim, else sh compile.sh && sh tests/run.sh) */
  testCommand?: string
  /**
   * --sandbox: what the agents and their test runs run in (auto, bwrap, none); a model-running harness is refused without one unless none
   * is asked for
   */
  sandbox?: string
  /** --harness sim: the scripted agent's work time multiplier (default 1) */
  simWorkScale?: number
  /** --budget-usd: each swarm's dollar cap, set as the swarm's own budget; the size stops when the swarm says it is reached */
  budgetUsd?: number
  progress: (line: string) => void
  signal?: AbortSignal
}

export function defaultGoal(task: TaskDir, testCommand: string): string {
  return [
    `Rebuild the program documented in this repository (README.md and docs/) so that it behaves exactly like ${REFERENCE_PATH}, the reference executable: run it to see what the program does where the documentation is silent, but do not copy it (files identical to it are deleted before your build runs).`,
    'Write the source and a compile.sh that builds it into ./executable.',
    `Hidden tests (${task.id}) run ./executable the way a user would; you never see them.`,
    `Write your own tests; \`${testCommand}\` runs them and must pass.`
  ].join(' ')
}

interface SimRecipe {
  dir: string
  testCommand?: string
}

async function loadSimRecipe(task: TaskDir): Promise<SimRecipe> {
  const dir = join(task.dir, 'sim')
  const file = join(dir, 'project.json')
  if (!existsSync(file))
    throw new InvalidArgumentError(
      `--harness sim needs the scripted agent's recipes in ${file} (see examples/strkit/sim): the scripted agent has no model to work from the documentation`
    )
  const project = JSON.parse(await readFile(file, 'utf8')) as { testCommand?: string; tasks?: unknown[] }
  if (!Array.isArray(project.tasks) || project.tasks.length === 0)
    throw new InvalidArgumentError(`${file} lists no tasks: the scripted agent adds them when it holds plan`)
  return { dir, testCommand: project.testCommand }
}

function checkOptions(o: ExperimentOptions): string {
  if (o.agents.length === 0) throw new InvalidArgumentError('--agents is empty: give swarm sizes, e.g. --agents 1,8,32')
  for (const n of o.agents)
    if (!Number.isSafeInteger(n) || n < 1 || n > 1024) throw new InvalidArgumentError(`--agents: ${n} is not a swarm size from 1 to 1024`)
  if (new Set(o.agents).size !== o.agents.length)
    throw new InvalidArgumentError('--agents names a swarm size twice: use --repeat to run a size more than once')
  if (!Number.isSafeInteger(o.repeat) || o.repeat < 1) throw new InvalidArgumentError('--repeat must be a whole number from 1')
  if (!(o.budgetMs > 0)) throw new InvalidArgumentError('--budget must be more than 0: give how long each swarm runs, e.g. 6h')
  if (!(o.scoreEveryMs > 0)) throw new InvalidArgumentError('--score-every must be more than 0, e.g. 10m')
  if (o.simWorkScale != null && !(o.simWorkScale > 0)) throw new InvalidArgumentError('--sim-work-scale must be more than 0')
  if (o.budgetUsd != null && !(Number.isFinite(o.budgetUsd) && o.budgetUsd > 0))
    throw new InvalidArgumentError('--budget-usd must be a number of dollars more than 0, e.g. 20')
  // An unknown harness, or one that is not installed, is refused before anything starts.
  checkLaunchCommand(
    harnessLaunch(o.harness, {
      agentId: 'check',
      agentName: 'check',
      workspace: '/',
      dataDir: '/',
      agencyAddr: 'unix:/check',
      prompt: 'check',
      agencyBin: 'agency'
    })
  )
  // A score from real models counts only if the agents could not read the hidden tests: no sandbox, no run, unless told --sandbox none.
  const sandbox = createSandbox({ mode: o.sandbox ?? 'auto', dataDir: tmpdir() })
  sandbox.admit(o.harness)
  return sandbox.kind
}

/** Runs every swarm size and repeat in turn; writes OUT/ and the report. Returns the run summaries. */
export async function runExperiment(o: ExperimentOptions): Promise<RunSummary[]> {
  const sandbox = checkOptions(o)
  const task = await loadTaskDir(o.task)
  const out = resolve(o.out)
  if (existsSync(join(out, 'experiment.json')))
    throw new FailedPreconditionError(
      `${o.out} already holds an experiment: give a new --out directory (or rebuild its report with \`agency experiment report ${o.out}\`)`
    )
  if (existsSync(out) && (await readdir(out)).length > 0)
    throw new FailedPreconditionError(`${o.out} is not empty: give a new or empty --out directory`)
  const sim = isScriptedHarness(o.harness) ? await loadSimRecipe(task) : undefined
  await mkdir(join(out, 'scratch'), { recursive: true })
  const cleanroom = await prepareCleanroom(task, o.cleanroom, join(out, 'reference'))
  const testCommand = o.testCommand ?? sim?.testCommand ?? DEFAULT_TEST_COMMAND
  const goal = o.goal ?? defaultGoal(task, testCommand)
  const config: ExperimentConfig = {
    task: task.id,
    taskDir: task.dir,
    cleanroom: cleanroom.dir,
    agents: o.agents,
    harness: o.harness,
    sandbox,
    budgetSeconds: o.budgetMs / 1000,
    scoreEverySeconds: o.scoreEveryMs / 1000,
    repeat: o.repeat,
    goal,
    testCommand,
    scoredTests: scoredTestCount(task),
    branches: task.active.length,
    referenceHash: cleanroom.referenceHash,
    referenceBuilt: cleanroom.built,
    ...(sim != null ? { simWorkScale: o.simWorkScale ?? 1 } : {}),
    ...(o.budgetUsd != null ? { budgetUsd: o.budgetUsd } : {}),
    startedAt: new Date().toISOString()
  }
  await writeJson(join(out, 'experiment.json'), config)
  o.progress(
    `${task.id}: ${config.scoredTests} scored tests in ${config.branches} branches; reference ${cleanroom.built ? 'built with build.sh' : 'from the cleanroom'} (sha256 ${cleanroom.referenceHash.slice(0, 12)})`
  )
  const scorerBox = sandbox === 'bwrap' ? scorerSandbox(task, cleanroom, out) : undefined
  const summaries: RunSummary[] = []
  for (const n of o.agents) {
    for (let k = 1; k <= o.repeat; k++) {
      if (o.signal?.aborted === true) break
      const s = await runOnce({ o, task, cleanroom, config, sim, out, scorerBox }, n, k)
      summaries.push(s)
      await writeJson(join(out, `n${n}`, 'summary.json'), sizeSummary(summaries.filter(x => x.agents === n)))
      await writeJson(join(out, 'experiment.json'), config)
      await writeReport(out)
    }
  }
  await writeReport(out)
  return summaries
}

interface RunContext {
  o: ExperimentOptions
  task: TaskDir
  cleanroom: Cleanroom
  config: ExperimentConfig
  sim?: SimRecipe
  out: string
  /** the box the scorer runs a submission's compile.sh and the hidden tests in */
  scorerBox?: Sandbox
}

/**
 * The scorer's box: a submission's compile.sh and the hidden tests are the
 * agents' code, so they run boxed too, writing only their scratch copy, with
 * no network, and seeing neither the task (the hidden tests they run are in
 * the copy), nor OUT (the swarms' shared repositories, which a hostile build
 * could otherwise write the hidden tests into).
 */
function scorerSandbox(task: TaskDir, cleanroom: Cleanroom, out: string): Sandbox {
  return createSandbox({
    mode: 'bwrap',
    dataDir: join(out, 'scratch'),
    hide: [...new Set([task.dir, cleanroom.dir, out].map(d => realpathSync(d)))]
  })
}

/** The documentation the goal names: READMEs and doc folders first, at most the 256 files a goal may list. */
function goalFiles(files: readonly string[]): string[] {
  const isDoc = (f: string): boolean => /^readme/i.test(f.split('/').pop() ?? '') || /^(doc|docs|documentation)\//i.test(f)
  return [REFERENCE_PATH, ...files.filter(isDoc), ...files.filter(f => !isDoc(f))].slice(0, 256)
}

async function headOf(bare: string): Promise<string> {
  return (await run('git', ['--git-dir', bare, 'rev-parse', 'refs/heads/main'], { encoding: 'utf8' })).stdout.trim()
}

/** Goal-only start: a goal on an empty board shows the `plan` task, whose holder adds the tasks. */
async function waitForPlanTask(agency: Agency): Promise<void> {
  for (let i = 0; i < 20; i++) {
    const { tasks } = await agency.call((c: AgencyClient) => c.listTasks, { state: '' })
    if (tasks.some(t => t.id === PLAN_TASK)) return
    await new Promise(resolve => setTimeout(resolve, 250))
  }
  throw new FailedPreconditionError('the daemons show no plan task for the goal: this agentd predates goal-only start')
}

async function wholeLog(agency: Agency): Promise<LogEntry[]> {
  const entries: LogEntry[] = []
  for await (const e of agency.stream((c: AgencyClient) => c.watchLog({ after: 0, follow: false }))) entries.push(e)
  return entries
}

async function harnessRestarts(metrics: string | undefined): Promise<number | null> {
  if (metrics == null) return null
  try {
    const text = await (await fetch(`http://${metrics}/metrics`, { signal: AbortSignal.timeout(5000) })).text()
    const m = /^agentd_harness_restarts_total(?:\{[^}]*\})? ([0-9.e+]+)$/m.exec(text)
    return m != null ? Number(m[1]) : 0
  } catch {
    return null
  }
}

/** The swarm says its budget is reached (recorded + in flight at the cap), or its recorded dollars are at `usd`. */
async function budgetReached(agency: Agency, usd: number): Promise<boolean> {
  try {
    const b = await agency.call((c: AgencyClient) => c.getBudget, {}, 20_000)
    return b.reached || (b.spent?.usd ?? 0) >= usd
  } catch {
    return false // a daemon busy or restarting: asked again on the next round
  }
}

/**
 * What the daemons' boxes must keep out: the task (its hidden tests), the
 * cleanroom it came from, and OUT (the reference kept for scoring, the
 * scorer's scratch, the other sizes' runs; each box still sees its own
 * agent's workspace in it); and the reference, execute-only at REFERENCE_IN_BOX.
 */
function cleanroomArgs(ctx: RunContext): string[] {
  const hide = [...new Set([ctx.task.dir, ctx.cleanroom.dir, ctx.out].map(d => realpathSync(d)))]
  return ['--sandbox-hide', hide.join(','), '--sandbox-run-only', `${ctx.cleanroom.reference}=${REFERENCE_IN_BOX}`]
}

async function runOnce(ctx: RunContext, n: number, k: number): Promise<RunSummary> {
  const { o, task } = ctx
  const dir = runDir(ctx.out, n, k)
  const swarmDir = join(dir, 'swarm')
  const bare = join(swarmDir, 'repo.git')
  const tag = `${n} agent${n === 1 ? '' : 's'}${o.repeat > 1 ? ` (run ${k})` : ''}`
  await mkdir(swarmDir, { recursive: true })
  const boxed = ctx.config.sandbox === 'bwrap'
  await seedExperimentRepo({
    bare,
    cleanroom: ctx.cleanroom,
    sim: ctx.sim != null ? { dir: ctx.sim.dir, workScale: ctx.config.simWorkScale ?? 1 } : undefined,
    ...(boxed ? { referenceInBox: REFERENCE_IN_BOX } : {})
  })
  const startedAt = new Date().toISOString()
  let daemons: Awaited<ReturnType<typeof startSwarmDaemons>>
  try {
    const state = { dir: swarmDir, repo: bare, branch: 'main', daemons: [] }
    daemons = await startSwarmDaemons({
      n,
      state,
      harness: o.harness,
      agentdArgs: ['--sandbox', ctx.config.sandbox ?? 'auto', ...(boxed ? cleanroomArgs(ctx) : [])],
      swarm: `experiment-${process.pid}-${n}-${k}-${Date.now().toString(36)}`,
      progress: () => {}
    })
  } catch (err) {
    await swarmDown(swarmDir).catch(() => {})
    throw err
  }
  o.progress(`${tag}: ${n} agentd started on ${bare}`)
  const agency = connectAgency(daemons[0].grpc)
  const points: PassPoint[] = []
  const scored = new Map<string, ScoreResult>()
  let final: ScoreResult | undefined
  let stoppedBy: RunSummary['stoppedBy']
  let t0 = Date.now()
  let stopAt: number
  let lastStatus: StatusReply | undefined
  const record: RecordEntry[] = []
  let restarts: Array<number | null>
  try {
    // The dollar cap is the swarm's own budget: every daemon holds its runs at it.
    if (o.budgetUsd != null) await agency.call((c: AgencyClient) => c.setBudget, { usd: o.budgetUsd })
    await agency.call((c: AgencyClient) => c.setGoal, {
      text: ctx.config.goal,
      files: goalFiles(ctx.cleanroom.files),
      testCommand: ctx.config.testCommand
    })
    await waitForPlanTask(agency)
    t0 = Date.now()
    o.progress(
      `${tag}: goal set, the plan task is on the board; budget ${formatDuration(o.budgetMs)}, scoring every ${formatDuration(o.scoreEveryMs)}`
    )

    const snapshot = async (at = Date.now()): Promise<ScoreResult> => {
      const t = (at - t0) / 1000
      const commit = await headOf(bare)
      let r = scored.get(commit)
      if (r == null) {
        r = await scoreSubmission({
          task,
          submission: { kind: 'commit', repo: bare, commit, label: `${tag} at ${Math.round(t)} s (${commit.slice(0, 12)})` },
          cleanHashes: [ctx.cleanroom.referenceHash],
          scratchParent: join(ctx.out, 'scratch'),
          confinement: ctx.scorerBox
        })
        scored.set(commit, r)
      }
      points.push({ t, commit, passed: r.passed, tests: r.tests, score: r.score, error: r.error?.code ?? null })
      await writePassRate(dir, n, k, points)
      return r
    }

    let scoring: Promise<unknown> | undefined
    let nextScoreAt = t0
    let failures = 0
    let lastLine = ''
    while (true) {
      const now = Date.now()
      if (o.signal?.aborted === true) {
        stoppedBy = 'interrupted'
        break
      }
      if (now - t0 >= o.budgetMs) {
        stoppedBy = 'budget'
        break
      }
      if (scoring == null && now >= nextScoreAt) {
        nextScoreAt = now + o.scoreEveryMs
        scoring = snapshot()
          .catch(err => {
            o.progress(`${tag}: scoring failed: ${(err as Error).message}`)
          })
          .finally(() => {
            scoring = undefined
          })
      }
      try {
        lastStatus = await agency.call((c: AgencyClient) => c.getStatus, {}, 20_000)
        failures = 0
      } catch (err) {
        if (++failures >= 10) throw err
      }
      if (lastStatus != null) {
        const p = progressOf(lastStatus, 0, 0)
        const last = points.at(-1)
        const line = `${tag}: hidden tests ${last != null ? `${(last.score * 100).toFixed(1)} % (${last.passed}/${last.tests})` : '-'} | tasks ${p.done}/${p.total} done | own tests ${Math.round(p.passRate * 100)} % | ${p.peers} agents live`
        if (line !== lastLine) {
          o.progress(`${line} | ${Math.round((now - t0) / 1000)} s`)
          lastLine = line
        }
        // The daemons' stop rule: every task done, and the shared branch's latest own test run green.
        if (p.goalMet) {
          stoppedBy = 'goal'
          break
        }
      }
      if (o.budgetUsd != null && (await budgetReached(agency, o.budgetUsd))) {
        stoppedBy = 'spend'
        break
      }
      await new Promise(resolve =>
        setTimeout(resolve, Math.max(100, Math.min(1000, nextScoreAt - Date.now(), t0 + o.budgetMs - Date.now())))
      )
    }
    stopAt = Date.now()
    await scoring
    // The shared branch as the swarm left it, stamped with the time it stopped.
    final = await snapshot(stopAt)
    // The record, from every daemon (one may not have every entry yet).
    for (const d of daemons) {
      const a = connectAgency(d.grpc)
      try {
        for (const e of await wholeLog(a))
          record.push({
            id: e.id,
            author: e.author,
            lamport: e.lamport,
            time: e.time,
            kind: e.kind,
            body: (JSON.parse(e.bodyJson) as Record<string, unknown> | null) ?? {}
          })
      } catch {
        /* a daemon that stopped answering: the others hold the record */
      } finally {
        a.close()
      }
    }
    restarts = await Promise.all(daemons.map(async d => await harnessRestarts(d.metrics)))
  } finally {
    agency.close()
    await swarmDown(swarmDir).catch(err => {
      o.progress(`${tag}: swarm down: ${(err as Error).message}`)
    })
  }
  const r = summarizeRecord(record, stopAt)
  const elapsedSeconds = (stopAt - t0) / 1000
  const tasksTotal = (lastStatus?.tasks ?? []).filter(t => t.id !== PLAN_TASK).length
  const summary: RunSummary = {
    agents: n,
    repeat: k,
    startedAt,
    elapsedSeconds,
    budgetSeconds: o.budgetMs / 1000,
    stoppedBy,
    final: { score: final.score, passed: final.passed, tests: final.tests, commit: points.at(-1)?.commit ?? '', error: final.error },
    timeToSeconds: timeTo(points),
    agentHours: (n * elapsedSeconds) / 3600,
    harnessRestarts: restarts.some(x => x == null) ? null : restarts.reduce((s: number, x) => s + (x ?? 0), 0),
    integrations: r.integrations,
    integrationAttempts: r.integrationAttempts,
    findings: r.findings,
    failureFindings: r.failureFindings,
    tasksDone: [...new Set(record.filter(e => e.kind === 'done' && e.body.task !== PLAN_TASK).map(e => String(e.body.task)))].length,
    tasksTotal,
    workAgentSeconds: r.workAgentSeconds,
    duplicateAgentSeconds: r.duplicateAgentSeconds,
    repeatedFailures: r.repeatedFailures,
    spend: spendOfRecord(record),
    scorings: scored.size
  }
  // Now that no agent is running, the per-test results may sit next to the swarm.
  await writeJson(join(dir, 'final-score.json'), final)
  await writeJson(join(dir, 'summary.json'), summary)
  o.progress(
    `${tag}: stopped by ${stoppedBy} after ${formatDuration(elapsedSeconds * 1000)}: hidden tests ${(final.score * 100).toFixed(2)} % (${final.passed}/${final.tests})${final.error != null ? `, ${final.error.code}` : ''}`
  )
  return summary
}
