import { execFileSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { checkVerifyCommand, runVerify } from '../../src/repo/verify.js'
import './git-fixtures.js'

let dir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agency-verify-'))
  execFileSync('git', ['init', '--quiet', '-b', 'main', dir])
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('checkVerifyCommand', () => {
  it('accepts programs on PATH, shell builtins, assignments and paths it cannot check yet', async () => {
    for (const cmd of [
      'git --version',
      'true',
      'test ! -e BAD',
      'CI=1 FOO=bar git status',
      'cd sub && make',
      './scripts/test.sh',
      '(exit 0)',
      '"quoted" arg'
    ]) {
      await expect(checkVerifyCommand(cmd), cmd).resolves.toBe(cmd)
    }
  })

  it('names a program that is not on PATH', async () => {
    await expect(checkVerifyCommand('no-such-runner --all')).rejects.toMatchObject({
      name: 'VerifyCommandNotFoundError',
      code: 'INVALID_ARGUMENT',
      message: /"no-such-runner" is not on PATH/
    })
    await expect(checkVerifyCommand('CI=1 no-such-runner')).rejects.toMatchObject({ name: 'VerifyCommandNotFoundError' })
    await expect(checkVerifyCommand('   ')).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
  })
})

describe('runVerify', () => {
  it('passes on exit 0 and fails on another code, with the end of the output in the summary', async () => {
    expect(await runVerify({ command: 'echo "Tests  2 passed (2)"', cwd: dir })).toMatchObject({
      ok: true,
      exitCode: 0,
      tests: { passed: 2, format: 'vitest' }
    })
    const red = await runVerify({ command: 'echo compiling; echo "boom: expected 1" >&2; exit 3', cwd: dir })
    expect(red).toMatchObject({ ok: false, exitCode: 3, timedOut: false, tests: null })
    expect(red.summary).toBe('exit code 3\ncompiling\nboom: expected 1')
  })

  it('stops a run that outlives its timeout, children included', async () => {
    const r = await runVerify({ command: 'sleep 30 & sleep 30; echo never', cwd: dir, timeoutMs: 200 })
    expect(r).toMatchObject({ ok: false, timedOut: true })
    expect(r.summary).toMatch(/timed out/)
  })

  it('ends what the command left running in the background when it exits', async () => {
    const r = await runVerify({ command: 'sleep 30 & echo "1 passed, 0 failed"', cwd: dir, timeoutMs: 20_000 })
    expect(r).toMatchObject({ ok: true, timedOut: false, tests: { passed: 1 } })
  })

  it('reads a JUnit report the command writes into the tree', async () => {
    const xml = '<testsuite tests="3"><testcase name="a"/><testcase name="b"/><testcase name="c"><failure/></testcase></testsuite>'
    const write = `mkdir -p reports && printf '%s' '${xml}' > reports/junit.xml; echo "9 passed, 0 failed"`
    // Found when the output points at it, as vitest's and pytest's reporters do, or when named.
    const found = await runVerify({ command: `${write}; echo "JUNIT report written to reports/junit.xml"; exit 1`, cwd: dir })
    expect(found.tests).toEqual({ passed: 2, failed: 1, skipped: 0, total: 3, format: 'junit' })
    const named = await runVerify({ command: `${write}; exit 1`, cwd: dir, junitPaths: ['reports/junit.xml'] })
    expect(named.tests).toMatchObject({ failed: 1, format: 'junit' })
    const unmentioned = await runVerify({ command: `${write}; exit 1`, cwd: dir })
    expect(unmentioned.tests).toMatchObject({ failed: 0, passed: 9, format: 'plain' })
    await expect(runVerify({ command: 'true', cwd: dir, junitPaths: ['../elsewhere.xml'] })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT'
    })
  })

  it('names a command the shell could not find', async () => {
    await expect(runVerify({ command: './missing-script.sh', cwd: dir })).rejects.toMatchObject({
      name: 'VerifyCommandNotFoundError',
      message: /missing-script/
    })
  })
})
