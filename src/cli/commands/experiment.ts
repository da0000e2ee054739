// agency experiment run | score | report
import type { Command } from 'commander'
import { InvalidArgumentError } from '../../core/errors.js'
import { parseDuration } from '../../experiment/duration.js'
import { isScriptedHarness } from '../../harness/adapters/scripted.js'
import { runExperiment } from '../../experiment/runner.js'
import { writeReport } from '../../experiment/report.js'
import { scoreSubmission, sha256File, type ScoreResult } from '../../experiment/score.js'
import { resolveSubmission } from '../../experiment/submission.js'
import { loadTaskDir } from '../../experiment/task-dir.js'
import { fail, line, printJson } from '../output.js'
import { createSandbox } from '../../sandbox/index.js'
import { tmpdir } from 'node:os'

/** Without --score-every: about 60 snapshots per run, from 10 s to 10 min apart. */
export function defaultScoreEveryMs(budgetMs: number): number {
  return Math.min(600_000, Math.max(10_000, Math.round(budgetMs / 60)))
}

function parseAgents(text: string): number[] {
  const parts = text.split(',').map(s => s.trim())
  if (parts.some(p => !/^\d+$/.test(p)))
    throw new InvalidArgumentError(`--agents ${JSON.stringify(text)}: give swarm sizes separated by commas, e.g. 1,8,32`)
  return parts.map(Number)
}

function parseCount(text: string, what: string): number {
  if (!/^\d+$/.test(text.trim())) throw new InvalidArgumentError(`${what} ${JSON.stringify(text)} is not a whole number`)
  return Number(text)
}

export function scoreLines(r: ScoreResult): string[] {
  const out: string[] = [`task ${r.task}, submission ${r.submission}`]
  const rows = [
    ['branch', 'passed', 'failed', 'skipped', 'not run', 'ignored', 'runs'],
    ...r.branches.map(b => [b.branch, b.passed, b.failed, b.skipped, b.notRun, b.ignored, b.attempts].map(String))
  ]
  const widths = rows[0].map((_, i) => Math.max(...rows.map(row => row[i].length)))
  for (const row of rows) out.push(row.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  '))
  for (const b of r.branches) for (const e of b.errors) out.push(`branch ${b.branch}: ${e.code}: ${firstLines(e.details)}`)
  if (r.removedFiles.length > 0) out.push(`removed before compile.sh (identical to the reference): ${r.removedFiles.join(', ')}`)
  for (const w of r.warnings) out.push(`warning: ${w}`)
  if (r.error != null) out.push(`error: ${r.error.code}: ${firstLines(r.error.details)}`)
  out.push(`score ${r.passed}/${r.tests} = ${(r.score * 100).toFixed(2)} %${r.error != null ? ` (${r.error.code})` : ''}`)
  return out
}

function firstLines(text: string): string {
  const lines = text.trim().split('\n')
  return lines.length > 6 ? `${lines.slice(0, 6).join('\n  ')}\n  …` : lines.join('\n  ')
}

export function registerExperimentCommands(program: Command): void {
  const experiment = program
    .command('experiment')
    .description(
      'reproduce the ProgramBench experiment: N agents rebuild a program from its documentation and reference executable, scored against hidden tests'
    )

  experiment
    .command('run')
    .description(
      "for each swarm size, a fresh swarm on the task's cleanroom; the shared branch scored against the hidden tests over time; OUT/ gets the data, report.md and pass-rate.svg; --json prints the run summaries at the end"
    )
    .requiredOption('--task <dir>', 'a ProgramBench task directory (task.yaml, tests.json, tests/<branch>/eval/run.sh)')
    .requiredOption('--agents <list>', 'swarm sizes, e.g. 1,8,32')
    .requiredOption('--harness <name>', 'claude, codex, copilot, gemini, aider, scripted (or sim), or cmd:"..."')
    .requiredOption('--budget <duration>', 'how long each swarm may run, e.g. 6h (it stops earlier when the goal is met)')
    .requiredOption('--out <dir>', 'a new directory for the results')
    .option('--score-every <duration>', 'how often the shared branch is scored (default: the budget / 60, from 10s to 10m)')
    .option('--repeat <k>', 'runs per swarm size', '1')
    .option('--cleanroom <dir>', 'what the agents get: the documentation and the reference `executable` (default: <task>/cleanroom)')
    .option('--goal <text>', 'the goal the agents get (default: rebuild the documented program; compile.sh builds ./executable)')
    .option(
      '--test-command <cmd>',
      'the agents\' own test command (default: the recipe\'s for sim, else "sh compile.sh && sh tests/run.sh")'
    )
    .option(
      '--sandbox <mode>',
      'what the agents and their test runs run in: auto, bwrap or none; a real-model run is refused without a sandbox unless --sandbox none',
      'auto'
    )
    .option('--sim-work-scale <x>', "--harness sim: multiply the scripted agent's modelled work time", '1')
    .option(
      '--budget-usd <dollars>',
      "each swarm's dollar cap, set as the swarm's budget: a size stops when it is reached, as with --budget"
    )
    .action(
      async (opts: {
        task: string
        agents: string
        harness: string
        budget: string
        out: string
        scoreEvery?: string
        repeat: string
        cleanroom?: string
        goal?: string
        testCommand?: string
        simWorkScale: string
        budgetUsd?: string
        sandbox: string
        json?: boolean
      }) => {
        try {
          const budgetMs = parseDuration(opts.budget, '--budget')
          const scoreEveryMs = opts.scoreEvery != null ? parseDuration(opts.scoreEvery, '--score-every') : defaultScoreEveryMs(budgetMs)
          const simWorkScale = Number(opts.simWorkScale)
          if (!(simWorkScale > 0))
            throw new InvalidArgumentError(`--sim-work-scale ${JSON.stringify(opts.simWorkScale)} must be a number above 0`)
          const budgetUsd = opts.budgetUsd != null ? Number(opts.budgetUsd) : undefined
          if (budgetUsd != null && !(Number.isFinite(budgetUsd) && budgetUsd > 0))
            throw new InvalidArgumentError(`--budget-usd ${JSON.stringify(opts.budgetUsd)} must be a number of dollars above 0`)
          const abort = new AbortController()
          process.on('SIGINT', () => {
            if (abort.signal.aborted) process.exit(130)
            line('\ninterrupted: scoring the last snapshot and stopping the swarm (Ctrl-C again to leave it running)')
            abort.abort()
          })
          const summaries = await runExperiment({
            task: opts.task,
            cleanroom: opts.cleanroom,
            agents: parseAgents(opts.agents),
            harness: opts.harness,
            sandbox: opts.sandbox,
            budgetMs,
            scoreEveryMs,
            repeat: parseCount(opts.repeat, '--repeat'),
            out: opts.out,
            goal: opts.goal,
            testCommand: opts.testCommand,
            simWorkScale: isScriptedHarness(opts.harness) ? simWorkScale : undefined,
            budgetUsd,
            progress: line,
            signal: abort.signal
          })
          if (opts.json === true) printJson(summaries)
          else line(`report: ${opts.out}/report.md`)
          if (abort.signal.aborted) process.exitCode = 130
        } catch (err) {
          fail(err)
        }
      }
    )

  experiment
    .command('score')
    .description(
      "score one submission against a task's hidden tests by ProgramBench's rules: per-branch counts, then the score (--json: the whole result, per test)"
    )
    .requiredOption('--task <dir>', 'a ProgramBench task directory')
    .requiredOption('--submission <dir-or-ref>', 'a directory with compile.sh, or a git ref (in --repo, default the current directory)')
    .option('--repo <path>', 'the git repository a ref is read from')
    .option('--reference <file>', "a reference executable to delete from the submission, like the task's eval_clean_hashes")
    .option(
      '--sandbox <mode>',
      "what compile.sh and the hidden tests (the submission's code) run in: auto (bubblewrap where it works), bwrap or none",
      'auto'
    )
    .action(async (opts: { task: string; submission: string; repo?: string; reference?: string; sandbox: string; json?: boolean }) => {
      try {
        const task = await loadTaskDir(opts.task)
        const submission = await resolveSubmission(opts.submission, opts.repo)
        const cleanHashes =
          opts.reference != null
            ? [
                await sha256File(opts.reference).catch(() => {
                  throw new InvalidArgumentError(`--reference ${opts.reference}: cannot read it`)
                })
              ]
            : []
        // Boxed, the submission's code writes only its scratch copy and sees neither the task nor the network.
        const sandbox = createSandbox({ mode: opts.sandbox, dataDir: tmpdir(), hide: [task.dir] })
        const r = await scoreSubmission({ task, submission, cleanHashes, ...(sandbox.kind !== 'none' ? { confinement: sandbox } : {}) })
        if (opts.json === true) printJson(r)
        else for (const l of scoreLines(r)) line(l)
      } catch (err) {
        fail(err)
      }
    })

  experiment
    .command('report')
    .description('rebuild OUT/report.md and OUT/pass-rate.svg from the data of `agency experiment run`')
    .argument('<out>', 'the --out directory of the run')
    .action(async (out: string) => {
      try {
        const r = await writeReport(out)
        const lines = r.markdown.split('\n')
        // The paper-shaped table: from its header to the first line that is not a row.
        for (let i = lines.findIndex(l => l.startsWith('| task |')); i >= 0 && i < lines.length && lines[i].startsWith('|'); i++)
          line(lines[i])
        line(`written: ${out}/report.md, ${out}/pass-rate.svg`)
      } catch (err) {
        fail(err)
      }
    })
}
