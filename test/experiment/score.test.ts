// Scoring by ProgramBench's rules, checked against scores worked out by hand.
//
// The echo task (fixtures/echo-task) has two scored branches: alpha (t.a1,
// t.a2, and t.a3, which is ignored) and beta (t.b1..t.b4); gamma is an ignored
// branch. Each branch's run.sh writes, as eval/results.xml, what the
// submission's executable prints for that branch, so a submission here is a
// shell script that prints chosen JUnit XML: 6 tests are scored.
// The strkit example is then scored with real submissions: its reference
// source (every test passes) and the scripted agent's final code (two of the
// hidden tests catch what its own tests missed).
import { execFile } from 'node:child_process'
import { chmod, cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, describe, expect, it } from 'vitest'
import { scoreSubmission, type ScoreResult } from '../../src/experiment/score.js'
import { resolveSubmission } from '../../src/experiment/submission.js'
import { loadTaskDir } from '../../src/experiment/task-dir.js'
import { missingTools } from './tools.js'
import { createSandbox, detectSupport } from '../../src/sandbox/index.js'
import { existsSync } from 'node:fs'

const run = promisify(execFile)
const ROOT = new URL('../../', import.meta.url).pathname
const ECHO_TASK = join(ROOT, 'test/experiment/fixtures/echo-task')
const STRKIT = join(ROOT, 'examples/strkit')
const dirs: string[] = []

afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true })
})

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'agency-score-test-'))
  dirs.push(d)
  return d
}

const suite = (...cases: string[]): string =>
  `<?xml version="1.0" encoding="utf-8"?>\n<testsuites><testsuite name="pytest">${cases.join('')}</testsuite></testsuites>\n`
const pass = (name: string): string => `<testcase classname="t" name="${name}" time="0.01"/>`
const fail = (name: string): string =>
  `<testcase classname="t" name="${name}"><failure message="assert 1 == 2">AssertionError</failure></testcase>`
const ALPHA_OK = suite(pass('a1'), pass('a2'), fail('a3'))
const BETA_OK = suite(pass('b1'), pass('b2'), pass('b3'), pass('b4'))

/** A submission whose compile.sh installs a shell script printing `xml[branch]` (or running `beta: 'exit 1'`). */
async function echoSubmission(
  xml: Record<string, string>,
  o: { prelude?: string; compile?: string; extra?: Record<string, string> } = {}
): Promise<string> {
  const dir = await tempDir()
  const arms = Object.entries(xml).map(([branch, body]) =>
    body.startsWith('exit') ? `  ${branch}) ${body} ;;` : `  ${branch}) cat <<'XML'\n${body}XML\n  ;;`
  )
  await writeFile(join(dir, 'program.sh'), ['#!/bin/sh', o.prelude ?? '', 'case "$1" in', ...arms, 'esac', ''].join('\n'))
  if (o.compile !== 'none')
    await writeFile(join(dir, 'compile.sh'), o.compile ?? '#!/bin/sh\nset -e\ncp program.sh executable\nchmod +x executable\n')
  for (const [name, content] of Object.entries(o.extra ?? {})) await writeFile(join(dir, name), content)
  return dir
}

async function scoreEcho(dir: string): Promise<ScoreResult> {
  const task = await loadTaskDir(ECHO_TASK)
  return await scoreSubmission({ task, submission: await resolveSubmission(dir) })
}

const status = (r: ScoreResult): Record<string, string> => Object.fromEntries(r.results.map(t => [`${t.branch}/${t.name}`, t.status]))
const branch = (r: ScoreResult, id: string): ScoreResult['branches'][number] =>
  r.branches.find(b => b.branch === id) as ScoreResult['branches'][number]

describe('scoring by ProgramBench rules (echo task)', () => {
  it('counts passed over scored tests: the ignored test and the ignored branch are left out', async () => {
    const r = await scoreEcho(await echoSubmission({ alpha: ALPHA_OK, beta: BETA_OK }))
    expect(r.error).toBeNull()
    expect([r.passed, r.tests, r.score]).toEqual([6, 6, 1])
    expect(branch(r, 'alpha')).toMatchObject({ passed: 2, failed: 0, ignored: 1, tests: 2, attempts: 1 })
    expect(branch(r, 'beta')).toMatchObject({ passed: 4, tests: 4 })
    expect(r.branches.map(b => b.branch)).toEqual(['alpha', 'beta'])
    expect(status(r)['alpha/t.a3']).toBe('failure')
    expect(r.results.find(t => t.name === 't.a3')?.ignored).toBe(true)
    expect(r.executableHash).toMatch(/^[0-9a-f]{64}$/)
  })

  it('counts an expected test missing from the XML as not run, and a test not in tests.json as a test', async () => {
    const r = await scoreEcho(await echoSubmission({ alpha: ALPHA_OK, beta: suite(pass('b1'), pass('b2'), pass('b3'), pass('b5')) }))
    // scored: a1 a2 b1 b2 b3 b5 (passed) and b4 (not run) = 6 of 7
    expect([r.passed, r.tests]).toEqual([6, 7])
    expect(r.results.find(t => t.name === 't.b4')).toMatchObject({ status: 'not_run', errorCode: 'missing_from_junit_xml' })
    expect(branch(r, 'beta')).toMatchObject({ passed: 4, notRun: 1, tests: 5 })
    expect(r.warnings.join('\n')).toMatch(/beta: 1\/4 expected tests missing/)
    expect(r.warnings.join('\n')).toMatch(/beta: 1 test\(s\) in the JUnit XML not in tests.json .*t\.b5/)
  })

  it('reads each case as junitparser does: skipped, failure, error, repeated and mixed results; a bare <testsuite> root', async () => {
    const beta =
      '<testsuite name="only">' +
      '<testcase classname="t" name="b1"><skipped message="later"/></testcase>' +
      '<testcase classname="t" name="b2"><failure message="x"/><failure message="y"/></testcase>' +
      '<testcase classname="t" name="b3"><failure message="x"/><error message="y"/></testcase>' +
      '<testcase classname="t" name="b4"><system-out>ok</system-out><error message="boom"/></testcase>' +
      '</testsuite>\n'
    const r = await scoreEcho(await echoSubmission({ alpha: ALPHA_OK, beta }))
    expect([r.passed, r.tests]).toEqual([2, 6])
    expect(status(r)).toMatchObject({ 'beta/t.b1': 'skipped', 'beta/t.b2': 'failure', 'beta/t.b3': 'system_error', 'beta/t.b4': 'error' })
    expect(branch(r, 'beta')).toMatchObject({ passed: 0, failed: 3, skipped: 1 })
  })

  it('a submission that fails to compile scores 0, every test not run, with the reason', async () => {
    const r = await scoreEcho(
      await echoSubmission({ alpha: ALPHA_OK, beta: BETA_OK }, { compile: '#!/bin/sh\necho "src/main.c:3: syntax error" >&2\nexit 3\n' })
    )
    expect(r.error?.code).toBe('compile_failed')
    expect(r.error?.details).toContain('syntax error')
    expect([r.passed, r.tests, r.score]).toEqual([0, 6, 0])
    expect(r.results.every(t => t.status === 'not_run' && t.errorCode === 'compile_failed')).toBe(true)
    expect(r.executableHash).toBeNull()
  })

  it('a submission without compile.sh, or whose compile.sh builds no ./executable, scores 0 with the reason', async () => {
    const none = await scoreEcho(await echoSubmission({ alpha: ALPHA_OK, beta: BETA_OK }, { compile: 'none' }))
    expect(none.error).toMatchObject({ code: 'compile_failed' })
    expect(none.error?.details).toMatch(/no compile\.sh/)
    expect([none.passed, none.tests]).toEqual([0, 6])
    const noExe = await scoreEcho(await echoSubmission({ alpha: ALPHA_OK, beta: BETA_OK }, { compile: '#!/bin/sh\necho built nothing\n' }))
    expect(noExe.error).toMatchObject({ code: 'copy_executable_failed' })
    expect(noExe.error?.details).toMatch(/no \.\/executable/)
    expect(noExe.score).toBe(0)
  })

  it('an executable that tampers with the stashed copy fails the hash check: the later branch is not run', async () => {
    // Run by alpha's tests, it rewrites the copy the scorer keeps; beta's restore notices.
    const r = await scoreEcho(
      await echoSubmission({ alpha: ALPHA_OK, beta: BETA_OK }, { prelude: 'printf "# changed\\n" >> ../stash/executable 2>/dev/null' })
    )
    expect(r.error).toBeNull()
    expect([r.passed, r.tests]).toEqual([2, 6])
    expect(branch(r, 'beta').errors.map(e => e.code)).toEqual(['executable_hash_mismatch'])
    expect(branch(r, 'beta').errors[0].details).toMatch(/^expected [0-9a-f]{64}, got [0-9a-f]{64}$/)
    expect(branch(r, 'beta')).toMatchObject({ notRun: 4, attempts: 4 })
    expect(r.results.filter(t => t.branch === 'beta').every(t => t.errorCode === 'executable_hash_mismatch')).toBe(true)
  })

  it('a run.sh that writes no XML: the branch is tried 4 times, then its tests are not run', async () => {
    const r = await scoreEcho(await echoSubmission({ alpha: ALPHA_OK, beta: 'exit 1' }))
    expect(r.error).toBeNull()
    expect([r.passed, r.tests]).toEqual([2, 6])
    expect(branch(r, 'beta')).toMatchObject({ notRun: 4, attempts: 4 })
    expect(branch(r, 'beta').errors).toEqual([{ code: 'results_read_failed', details: 'eval/run.sh wrote no eval/results.xml' }])
  })

  it('empty, malformed or non-JUnit XML stops the evaluation: score 0 with the error, never a silent pass', async () => {
    const malformed = await scoreEcho(
      await echoSubmission({ alpha: ALPHA_OK, beta: '<testsuites><testsuite><testcase name="b1"></testsuite>\n' })
    )
    expect(malformed.error?.code).toBe('XmlParseError')
    expect(malformed.error?.details).toMatch(/Malformed test results XML for branch "beta"/)
    expect([malformed.passed, malformed.tests, malformed.score]).toEqual([0, 0, 0])
    const empty = await scoreEcho(await echoSubmission({ alpha: ALPHA_OK, beta: '  \n' }))
    expect(empty.error?.code).toBe('EmptyTestResultError')
    expect(empty.score).toBe(0)
    const foreign = await scoreEcho(await echoSubmission({ alpha: ALPHA_OK, beta: '<results><testcase name="b1"/></results>\n' }))
    expect(foreign.error?.code).toBe('JUnitXmlError')
    expect(foreign.score).toBe(0)
  })

  it('files identical to the reference (eval_clean_hashes) are deleted before compile.sh runs', async () => {
    // A compile.sh that would pass the reference off as its own build finds it gone.
    const r = await scoreEcho(
      await echoSubmission(
        { alpha: ALPHA_OK, beta: BETA_OK },
        { compile: '#!/bin/sh\nset -e\ncp ref.bin executable\n', extra: { 'ref.bin': 'REFERENCE\n' } }
      )
    )
    expect(r.removedFiles).toEqual(['ref.bin'])
    expect(r.error?.code).toBe('compile_failed')
    expect(r.score).toBe(0)
  })

  it('scores a commit of a git repository the same as the directory it came from', async () => {
    const dir = await echoSubmission({ alpha: ALPHA_OK, beta: suite(pass('b1'), fail('b2'), pass('b3'), pass('b4')) })
    await chmod(join(dir, 'compile.sh'), 0o755)
    const git = async (...args: string[]): Promise<string> => (await run('git', args, { cwd: dir, encoding: 'utf8' })).stdout.trim()
    await git('init', '-q', '-b', 'main')
    await git('add', '-A')
    await git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'submission')
    const task = await loadTaskDir(ECHO_TASK)
    const byRef = await scoreSubmission({ task, submission: await resolveSubmission('main', dir) })
    expect(byRef.submission).toMatch(/^main \([0-9a-f]{12}\)$/)
    expect([byRef.passed, byRef.tests]).toEqual([5, 6])
    const byDir = await scoreEcho(dir)
    expect([byDir.passed, byDir.tests]).toEqual([5, 6])
  })
})

describe.skipIf(!detectSupport().bwrap.ok)("scoring in the box (the runner's scorer under a sandbox)", () => {
  it("a hostile compile.sh is refused the task's hidden tests and writes outside its copy, and the score is the same; unboxed it gets both", async () => {
    const base = await tempDir()
    const task = join(base, 'task')
    await cp(ECHO_TASK, task, { recursive: true })
    const shared = join(base, 'out', 'repo.git')
    await mkdir(shared, { recursive: true })
    const tries = [
      `cat ${task}/tests.json >/dev/null && echo OK:tests || echo NO:tests`,
      `echo leak > ${shared}/leak && echo OK:write || echo NO:write`
    ].join('\n')
    const dir = await echoSubmission(
      { alpha: ALPHA_OK, beta: BETA_OK },
      { compile: `#!/bin/sh\n${tries}\ncp program.sh executable\nchmod +x executable\n` }
    )
    const scratch = join(base, 'out', 'scratch')
    await mkdir(scratch)
    const score = async (boxed: boolean): Promise<ScoreResult> =>
      await scoreSubmission({
        task: await loadTaskDir(task),
        submission: await resolveSubmission(dir),
        scratchParent: scratch,
        ...(boxed ? { confinement: createSandbox({ mode: 'bwrap', dataDir: scratch, hide: [task, join(base, 'out')] }) } : {})
      })
    const boxed = await score(true)
    const compiled = boxed.steps.find(s => s.step === 'compile')?.output ?? ''
    expect(compiled).toContain('NO:tests')
    expect(compiled).toContain('NO:write')
    expect(compiled).toMatch(/sandbox refused \(fs\): .*tests\.json: Permission denied/)
    expect(existsSync(join(shared, 'leak'))).toBe(false)
    expect([boxed.passed, boxed.tests, boxed.error]).toEqual([6, 6, null])
    const open = await score(false)
    const unboxed = open.steps.find(s => s.step === 'compile')?.output ?? ''
    expect(unboxed).toContain('OK:tests')
    expect(unboxed).toContain('OK:write')
    expect([open.passed, open.tests]).toEqual([6, 6])
  }, 60_000)
})

describe('a bad task directory is refused before anything runs, naming the fix', () => {
  async function brokenTask(change: (dir: string) => Promise<void>): Promise<string> {
    const dir = join(await tempDir(), 'task')
    await cp(ECHO_TASK, dir, { recursive: true })
    await change(dir)
    return dir
  }

  it('without tests.json', async () => {
    const dir = await brokenTask(async d => {
      await rm(join(d, 'tests.json'))
    })
    await expect(loadTaskDir(dir)).rejects.toThrow(/has no tests\.json/)
  })

  it("without a branch's eval/run.sh (an ignored branch needs none)", async () => {
    const dir = await brokenTask(async d => {
      await rm(join(d, 'tests', 'beta', 'eval', 'run.sh'))
    })
    await expect(loadTaskDir(dir)).rejects.toThrow(/test branch beta has no tests\/beta\/eval\/run\.sh/)
  })

  it('with tests.json that is not JSON, or not a directory at all', async () => {
    const dir = await brokenTask(async d => {
      await writeFile(join(d, 'tests.json'), '{"branches": ')
    })
    await expect(loadTaskDir(dir)).rejects.toThrow(/tests\.json is not valid JSON/)
    await expect(loadTaskDir(join(dir, 'nope'))).rejects.toThrow(/no such directory/)
  })

  it('a submission that is neither a directory nor a git ref', async () => {
    await expect(resolveSubmission('no-such-thing-anywhere', await tempDir())).rejects.toThrow(/no such git ref/)
  })
})

describe.skipIf(missingTools != null)('scoring the strkit example (real pytest suites)', () => {
  it('its reference source passes every scored test; the one ignored test is the one the reference fails', async () => {
    const dir = await tempDir()
    await cp(join(STRKIT, 'reference'), dir, { recursive: true })
    await writeFile(join(dir, 'compile.sh'), '#!/bin/sh\nset -e\ncc -O2 -o executable strkit.c\n')
    const task = await loadTaskDir(STRKIT)
    const r = await scoreSubmission({ task, submission: await resolveSubmission(dir) })
    expect(r.error).toBeNull()
    expect([r.passed, r.tests]).toEqual([66, 66])
    expect(r.results.filter(t => t.status !== 'passed').map(t => `${t.name} ignored=${String(t.ignored)}`)).toEqual([
      'eval.tests.test_roman.test_four_thousand ignored=true'
    ])
    expect(r.branches.map(b => b.tests)).toEqual([13, 14, 22, 17])
  })

  it("the scripted agent's final code passes 64 of 66: title after a hyphen and base64 without padding are missed", async () => {
    const dir = await tempDir()
    const recipes = join(STRKIT, 'sim', 'recipes')
    const final = [
      'core/zipapp',
      'case/str-methods',
      'reverse/slice',
      'rot13/translate',
      'caesar/modular',
      'slug/regex',
      'palindrome/filter-compare',
      'pad/split-extra',
      'count/newlines',
      'wrap/greedy',
      'freq/counter',
      'base64/stdlib',
      'roman/subtractive'
    ]
    for (const approach of final) await cp(join(recipes, approach), dir, { recursive: true })
    await mkdir(join(dir, 'reference'))
    const task = await loadTaskDir(STRKIT)
    const r = await scoreSubmission({ task, submission: await resolveSubmission(dir) })
    expect(r.error).toBeNull()
    expect([r.passed, r.tests]).toEqual([64, 66])
    expect(
      r.results
        .filter(t => t.status !== 'passed' && !t.ignored)
        .map(t => t.name)
        .sort()
    ).toEqual(['eval.tests.test_base64.test_decode_without_padding', 'eval.tests.test_case.test_title_words_start_only_after_blanks'])
  })
})
