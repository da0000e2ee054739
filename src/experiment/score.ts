// Scores a submission against a task's hidden tests by ProgramBench's rules
// (src/programbench/eval/eval.py as of its per-branch-container revision),
// with scratch directories in place of containers:
//
// 1. The submission is copied into a fresh workspace; files whose sha256 is in
//    the task's eval_clean_hashes (the reference executable) are deleted; a git
//    repository with one commit of fixed date and author is made if there is
//    none; `compile.sh` runs and must leave `./executable`, which is moved aside
//    and hashed. A failure here scores 0 with that step's error code
//    (compile_failed, copy_executable_failed, ...) and every test not run.
// 2. Each active test branch, in tests.json order, starts from a copy of the
//    compiled workspace: its tests/<branch>/ files are copied over it, the
//    executable is put back and its hash checked (executable_hash_mismatch:
//    the branch's tests are not run), stale results are removed, eval/run.sh
//    runs (its exit status is not looked at), and eval/results.xml is read
//    (results_read_failed when there is none). A failed branch is tried again,
//    up to 3 more times; so is one whose XML shows crashed pytest-xdist
//    workers, keeping the attempt with the most usable test cases.
// 3. Every expected test missing from the XML counts as not run; a test in
//    the XML but not in tests.json is counted and warned about. Ignored tests
//    are dropped. The score is passed / tests (0 when there are none).
// 4. Empty or malformed XML (EmptyTestResultError, XmlParseError, or a root
//    that is not a test suite, JUnitXmlError) stops the evaluation: score 0
//    with that reason, as ProgramBench's batch runner records an exception.
//
// Every step runs in its own process group that is killed when the step ends,
// and every skipped step is a visible error in the result, never a silent 0.
// Given a confinement (the runner's, under a sandbox), compile.sh and
// eval/run.sh, the submission's own code, run boxed: they write only their
// scratch copy, see neither the task nor the swarms, and have no network.
// ProgramBench also installs pytest-rerunfailures and sets
// PYTEST_ADDOPTS=--max-worker-restart=4 in its images (flake handling that
// needs packages and a network this runner does not assume); neither is done here.
import { createHash } from 'node:crypto'
import { createReadStream, existsSync, lstatSync } from 'node:fs'
import { chmod, copyFile, cp, mkdir, mkdtemp, readdir, readFile, rename, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { performance } from 'node:perf_hooks'
import { countTestCases, countWorkerCrashes, JUnitReadError, readJUnitCases, type TestStatus } from './junit-xml.js'
import { runShellStep, type StepResult } from './shell-step.js'
import type { TestConfinement } from '../repo/verify.js'
import { copySubmission, type Submission } from './submission.js'
import type { TaskDir, TestBranch } from './task-dir.js'

export interface TestResult {
  branch: string
  name: string
  status: TestStatus
  /** why a test was not run: the failed step's code, or missing_from_junit_xml */
  errorCode?: string
  message?: string
  /** listed in the branch's ignored_tests: reported, not scored */
  ignored: boolean
}

export interface ScoreError {
  code: string
  details: string
}

export interface BranchScore {
  branch: string
  passed: number
  failed: number
  skipped: number
  notRun: number
  /** scored tests of this branch (ignored ones left out) */
  tests: number
  ignored: number
  errors: ScoreError[]
  /** runs of eval/run.sh */
  attempts: number
}

export interface ScoreResult {
  task: string
  submission: string
  /** passed / tests, 0 to 1 */
  score: number
  passed: number
  tests: number
  /** what stopped the evaluation (compile failure, unreadable XML), if anything */
  error: ScoreError | null
  executableHash: string | null
  /** files deleted from the submission because they match eval_clean_hashes */
  removedFiles: string[]
  branches: BranchScore[]
  results: TestResult[]
  warnings: string[]
  steps: StepResult[]
  wallMs: number
}

export interface ScoreOptions {
  task: TaskDir
  submission: Submission
  /** more hashes to delete, e.g. a reference executable built here */
  cleanHashes?: string[]
  /** where the scratch directory is made (default: the OS temp dir) */
  scratchParent?: string
  compileTimeoutMs?: number
  testsTimeoutMs?: number
  /** retries of a failed or crashed branch (ProgramBench: 3) */
  branchRetries?: number
  /** the environment of every step (default: ours without AGENCY_* variables) */
  env?: NodeJS.ProcessEnv
  /** the box compile.sh and the hidden tests run in (the submission's own code); none: they run as they are */
  confinement?: TestConfinement
}

const STEP_OUTPUT_KEPT = 4000

class StepFailure extends Error {
  constructor(
    readonly code: string,
    readonly details: string
  ) {
    super(`${code}: ${details}`)
  }
}

export async function sha256File(path: string): Promise<string> {
  const h = createHash('sha256')
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer)
  return h.digest('hex')
}

export function scoringEnv(base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(base).filter(([k]) => !k.startsWith('AGENCY_')))
}

export async function scoreSubmission(o: ScoreOptions): Promise<ScoreResult> {
  const started = performance.now()
  const scratch = await mkdtemp(join(o.scratchParent ?? tmpdir(), 'agency-score-'))
  const scorer = new Evaluation(o, scratch)
  try {
    await scorer.run()
  } finally {
    await rm(scratch, { recursive: true, force: true, maxRetries: 3 })
  }
  return scorer.result(performance.now() - started)
}

class Evaluation {
  private readonly env: NodeJS.ProcessEnv
  private readonly workspace: string
  private readonly stash: string
  private readonly steps: StepResult[] = []
  private readonly results: TestResult[] = []
  private readonly branchErrors = new Map<string, ScoreError[]>()
  private readonly attempts = new Map<string, number>()
  private readonly warnings: string[] = []
  private readonly removed: string[] = []
  private error: ScoreError | null = null
  private hash: string | null = null

  constructor(
    private readonly o: ScoreOptions,
    private readonly scratch: string
  ) {
    this.env = o.env ?? scoringEnv()
    this.workspace = join(scratch, 'submission')
    this.stash = join(scratch, 'stash', 'executable')
  }

  async run(): Promise<void> {
    try {
      await this.compile()
    } catch (err) {
      if (!(err instanceof StepFailure)) throw err
      this.error = { code: err.code, details: err.details }
      for (const b of this.o.task.active) this.notRun(b, err.code)
      return
    }
    try {
      for (const b of this.o.task.active) await this.evaluateBranch(b)
    } catch (err) {
      if (!(err instanceof JUnitReadError)) throw err
      this.error = { code: err.code, details: err.message }
    }
  }

  result(wallMs: number): ScoreResult {
    const task = this.o.task
    // An evaluation stopped by unreadable XML scores nothing, as ProgramBench records it.
    const aborted = this.error != null && this.hash != null
    const scored = this.results.filter(r => !r.ignored)
    const passed = aborted ? 0 : scored.filter(r => r.status === 'passed').length
    const tests = aborted ? 0 : scored.length
    const branches = task.active.map(b => {
      const mine = this.results.filter(r => r.branch === b.id)
      const counted = mine.filter(r => !r.ignored)
      return {
        branch: b.id,
        passed: counted.filter(r => r.status === 'passed').length,
        failed: counted.filter(r => r.status === 'failure' || r.status === 'error' || r.status === 'system_error').length,
        skipped: counted.filter(r => r.status === 'skipped').length,
        notRun: counted.filter(r => r.status === 'not_run').length,
        tests: counted.length,
        ignored: mine.length - counted.length,
        errors: this.branchErrors.get(b.id) ?? [],
        attempts: this.attempts.get(b.id) ?? 0
      }
    })
    return {
      task: task.id,
      submission: this.o.submission.label,
      score: tests === 0 ? 0 : passed / tests,
      passed,
      tests,
      error: this.error,
      executableHash: this.hash,
      removedFiles: this.removed,
      branches,
      results: this.results,
      warnings: this.warnings,
      steps: this.steps,
      wallMs
    }
  }

  private async step(
    step: string,
    command: string,
    cwd: string,
    opts: { timeoutMs?: number; acceptFailure?: boolean; branch?: string; env?: NodeJS.ProcessEnv; boxed?: boolean } = {}
  ): Promise<StepResult> {
    const r = await runShellStep({
      step,
      command,
      cwd,
      timeoutMs: opts.timeoutMs ?? 20_000,
      env: opts.env ?? this.env,
      ...(opts.boxed === true ? { confinement: this.o.confinement } : {})
    })
    this.steps.push({
      ...r,
      output: r.output.length > STEP_OUTPUT_KEPT ? `…${r.output.slice(-STEP_OUTPUT_KEPT)}` : r.output,
      ...(opts.branch != null ? { branch: opts.branch } : {})
    })
    if (r.returncode !== 0 && opts.acceptFailure !== true) throw new StepFailure(`${step}_failed`, r.output.trim())
    return r
  }

  private async compile(): Promise<void> {
    await mkdir(this.workspace)
    try {
      await copySubmission(this.o.submission, this.workspace)
    } catch (err) {
      throw new StepFailure('copy_submission_failed', (err as Error).message)
    }
    await this.removeHashedFiles()
    if (!existsSync(join(this.workspace, '.git'))) {
      // Build scripts that read the git work tree get one; fixed dates and author
      // make the same tree give the same commit every time.
      const dated = 'GIT_AUTHOR_DATE=2000-01-01T00:00:00Z GIT_COMMITTER_DATE=2000-01-01T00:00:00Z'
      const who = '-c user.email=gold@local -c user.name=gold -c commit.gpgsign=false'
      await this.step(
        'seed_git',
        `git -c init.defaultBranch=gold init -q && git ${who} add -A && ${dated} git ${who} commit -q --allow-empty -m gold`,
        this.workspace,
        { timeoutMs: 120_000 }
      )
    }
    if (!existsSync(join(this.workspace, 'compile.sh'))) {
      this.steps.push({
        step: 'compile',
        command: 'chmod +x ./compile.sh && ./compile.sh',
        returncode: 1,
        output: 'no compile.sh',
        timedOut: false,
        wallMs: 0
      })
      throw new StepFailure('compile_failed', 'the submission has no compile.sh: it must have one that builds ./executable')
    }
    await this.step('compile', 'chmod +x ./compile.sh && ./compile.sh', this.workspace, {
      timeoutMs: this.o.compileTimeoutMs ?? 900_000,
      boxed: true
    })
    const built = join(this.workspace, 'executable')
    if (!existsSync(built) && !isSymlink(built)) {
      this.steps.push({
        step: 'copy_executable',
        command: 'mv ./executable <stash>',
        returncode: 1,
        output: 'no ./executable',
        timedOut: false,
        wallMs: 0
      })
      throw new StepFailure('copy_executable_failed', 'compile.sh exited 0 but left no ./executable')
    }
    await mkdir(join(this.scratch, 'stash'))
    await rename(built, this.stash)
    try {
      if (!(await stat(this.stash)).isFile()) throw new Error('./executable is not a file')
      this.hash = await sha256File(this.stash)
    } catch (err) {
      throw new StepFailure('hash_executable_failed', (err as Error).message)
    }
  }

  private async removeHashedFiles(): Promise<void> {
    const hashes = new Set([...this.o.task.cleanHashes, ...(this.o.cleanHashes ?? [])])
    if (hashes.size === 0) return
    const started = performance.now()
    for (const file of await regularFiles(this.workspace)) {
      if (hashes.has(await sha256File(file))) {
        await rm(file, { force: true })
        this.removed.push(relative(this.workspace, file))
      }
    }
    this.steps.push({
      step: 'remove_hashed_files',
      command: `delete files whose sha256 is one of ${hashes.size} eval_clean_hashes`,
      returncode: 0,
      output: this.removed.map(f => `removed ${f}`).join('\n'),
      timedOut: false,
      wallMs: performance.now() - started
    })
  }

  private notRun(b: TestBranch, code: string): void {
    if (b.tests.length === 0) {
      if (!this.branchErrors.has(b.id))
        this.branchErrors.set(b.id, [
          { code: 'no_expected_test_list', details: `No expected test list for branch ${b.id}, cannot inject not_run results` }
        ])
      return
    }
    for (const name of b.tests)
      this.results.push({
        branch: b.id,
        name,
        status: 'not_run',
        errorCode: code,
        ignored: this.o.task.ignoredTests.has(`${b.id}/${name}`)
      })
  }

  private async evaluateBranch(b: TestBranch): Promise<void> {
    let retriesLeft = this.o.branchRetries ?? 3
    let best: { xml: string; useful: number } | undefined
    let serial = false
    let xml: string
    while (true) {
      let attempt: string
      try {
        this.attempts.set(b.id, (this.attempts.get(b.id) ?? 0) + 1)
        attempt = await this.runBranch(b, serial)
      } catch (err) {
        if (!(err instanceof StepFailure)) throw err
        if (best != null) {
          xml = best.xml
          break
        }
        if (retriesLeft <= 0) {
          this.branchErrors.set(b.id, [...(this.branchErrors.get(b.id) ?? []), { code: err.code, details: err.details }])
          this.notRun(b, err.code)
          return
        }
        retriesLeft--
        continue
      }
      const crashes = countWorkerCrashes(attempt)
      const useful = countTestCases(attempt) - crashes
      if (best == null || useful > best.useful) best = { xml: attempt, useful }
      if (crashes === 0 || retriesLeft <= 0) {
        xml = best.xml
        break
      }
      this.warnings.push(`branch ${b.id}: ${crashes} pytest-xdist worker crash(es); running it again with one worker`)
      serial = true
      retriesLeft--
    }
    this.readBranchResults(b, xml)
  }

  /** One run of a branch's tests in a fresh copy of the compiled workspace; its results.xml. */
  private async runBranch(b: TestBranch, serial: boolean): Promise<string> {
    const dir = join(this.scratch, 'branch')
    await rm(dir, { recursive: true, force: true })
    try {
      await cp(this.workspace, dir, { recursive: true, verbatimSymlinks: true })
      await cp(b.dir, dir, { recursive: true, force: true, verbatimSymlinks: true })
      // The executable comes back from where it was put after compile.sh; its hash must not have changed.
      const exe = join(dir, 'executable')
      await rm(exe, { force: true, recursive: true })
      await copyFile(this.stash, exe)
      await chmod(exe, ((await stat(this.stash)).mode & 0o7777) | 0o111)
      const now = await sha256File(exe)
      this.steps.push({
        step: 'verify_executable_hash',
        command: 'sha256sum ./executable',
        returncode: 0,
        output: now,
        timedOut: false,
        wallMs: 0,
        branch: b.id
      })
      if (now !== this.hash) throw new StepFailure('executable_hash_mismatch', `expected ${String(this.hash)}, got ${now}`)
      await this.step('clean_stale_results', 'rm -f eval/results.xml results.xml', dir, { branch: b.id })
      await this.step(
        'patch_timeout_method',
        "test -f eval/run.sh && sed -i 's/--timeout-method=thread/--timeout-method=signal/g' eval/run.sh || true",
        dir,
        { acceptFailure: true, branch: b.id }
      )
      await this.step('run_tests', 'chmod +x ./eval/run.sh && ./eval/run.sh', dir, {
        timeoutMs: this.o.testsTimeoutMs ?? 3600_000,
        acceptFailure: true,
        branch: b.id,
        boxed: true,
        env: serial ? { ...this.env, PYTEST_XDIST_AUTO_NUM_WORKERS: '1' } : this.env
      })
      try {
        const xml = await readFile(join(dir, 'eval', 'results.xml'), 'utf8')
        this.steps.push({
          step: 'results_read',
          command: 'cat eval/results.xml',
          returncode: 0,
          output: `${xml.length} characters`,
          timedOut: false,
          wallMs: 0,
          branch: b.id
        })
        return xml
      } catch (err) {
        const reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'eval/run.sh wrote no eval/results.xml' : (err as Error).message
        this.steps.push({
          step: 'results_read',
          command: 'cat eval/results.xml',
          returncode: 1,
          output: reason,
          timedOut: false,
          wallMs: 0,
          branch: b.id
        })
        throw new StepFailure('results_read_failed', reason)
      }
    } catch (err) {
      if (err instanceof StepFailure) throw err
      throw new StepFailure('prepare_branch_failed', (err as Error).message)
    } finally {
      await rm(dir, { recursive: true, force: true, maxRetries: 3 })
    }
  }

  private readBranchResults(b: TestBranch, xml: string): void {
    const ignored = this.o.task.ignoredTests
    const parsed = readJUnitCases(xml, b.id)
    for (const c of parsed)
      this.results.push({
        branch: b.id,
        name: c.name,
        status: c.status,
        ...(c.message != null ? { message: c.message } : {}),
        ignored: ignored.has(`${b.id}/${c.name}`)
      })
    const ignoredNames = new Set(b.ignoredTests.map(t => t.name))
    const got = new Set(parsed.map(c => c.name))
    const missing = b.tests.filter(name => !ignoredNames.has(name) && !got.has(name))
    for (const name of missing)
      this.results.push({ branch: b.id, name, status: 'not_run', errorCode: 'missing_from_junit_xml', ignored: false })
    if (missing.length > 0)
      this.warnings.push(
        `branch ${b.id}: ${missing.length}/${b.tests.length - ignoredNames.size} expected tests missing from the JUnit XML (counted as not run)`
      )
    const expected = new Set(b.tests)
    const unexpected = [...got].filter(name => !expected.has(name) && !ignoredNames.has(name))
    if (unexpected.length > 0)
      this.warnings.push(
        `branch ${b.id}: ${unexpected.length} test(s) in the JUnit XML not in tests.json (counted): ${unexpected.slice(0, 5).join(', ')}${unexpected.length > 5 ? ', …' : ''}`
      )
  }
}

function isSymlink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink()
  } catch {
    return false
  }
}

async function regularFiles(dir: string): Promise<string[]> {
  const out: string[] = []
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    if (e.isDirectory()) out.push(...(await regularFiles(p)))
    else if (e.isFile()) out.push(p)
  }
  return out
}
