import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { parseJUnit, parseTestResults } from '../../src/repo/test-results.js'

// Recorded from real runs (vitest 4, node:test, pytest 8, cargo 1.95) with one
// failing test out of four; jest and go samples follow those tools' formats.
const fixture = (name: string): string => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8')

describe('parseTestResults', () => {
  it('reads vitest summaries, colours and all, and not the Test Files line', () => {
    expect(parseTestResults(fixture('vitest.txt'))).toEqual({ passed: 3, failed: 1, skipped: 0, total: 4, format: 'vitest' })
    expect(parseTestResults(' Test Files  2 passed (2)\n      Tests  3 passed | 1 failed (4)\n')).toMatchObject({
      passed: 3,
      failed: 1,
      total: 4,
      format: 'vitest'
    })
    expect(parseTestResults('      Tests  7 passed | 2 skipped | 1 todo (10)')).toMatchObject({
      passed: 7,
      failed: 0,
      skipped: 3,
      total: 10
    })
  })

  it('reads jest summaries', () => {
    expect(parseTestResults(fixture('jest.txt'))).toEqual({ passed: 3, failed: 1, skipped: 1, total: 5, format: 'jest' })
    expect(parseTestResults('Tests: 1 failed, 3 passed, 4 total')).toMatchObject({ passed: 3, failed: 1, total: 4, format: 'jest' })
  })

  it('reads pytest summaries with and without -q', () => {
    expect(parseTestResults(fixture('pytest.txt'))).toEqual({ passed: 3, failed: 1, skipped: 0, total: 4, format: 'pytest' })
    expect(parseTestResults(fixture('pytest-q.txt'))).toMatchObject({ passed: 3, failed: 1, format: 'pytest' })
    expect(parseTestResults('3 passed, 1 failed in 0.1s')).toMatchObject({ passed: 3, failed: 1, total: 4, format: 'pytest' })
    expect(parseTestResults('==== 2 failed, 5 passed, 1 skipped, 2 errors, 3 warnings in 1.20s ====')).toMatchObject({
      passed: 5,
      failed: 4,
      skipped: 1,
      format: 'pytest'
    })
  })

  it('reads cargo test, summing every test binary', () => {
    expect(parseTestResults(fixture('cargo.txt'))).toEqual({ passed: 3, failed: 1, skipped: 0, total: 4, format: 'cargo' })
    const two =
      'test result: ok. 3 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.01s\n' +
      'test result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n'
    expect(parseTestResults(two)).toEqual({ passed: 5, failed: 1, skipped: 1, total: 7, format: 'cargo' })
  })

  it('reads go test: top-level tests with -v, packages without', () => {
    expect(parseTestResults(fixture('go-verbose.txt'))).toEqual({ passed: 2, failed: 1, skipped: 1, total: 4, format: 'go' })
    expect(parseTestResults(fixture('go.txt'))).toEqual({ passed: 2, failed: 1, skipped: 0, total: 3, format: 'go' })
  })

  it('reads TAP from node:test, and plain ok / not ok lines', () => {
    expect(parseTestResults(fixture('node-test.tap.txt'))).toEqual({ passed: 3, failed: 1, skipped: 0, total: 4, format: 'tap' })
    const plain = 'TAP version 13\n1..4\nok 1 - a\nnot ok 2 - b\nok 3 - c # SKIP slow\nnot ok 4 - d # TODO later\n'
    expect(parseTestResults(plain)).toEqual({ passed: 1, failed: 1, skipped: 2, total: 4, format: 'tap' })
  })

  it('falls back to a plain "N passed, N failed" line', () => {
    expect(parseTestResults('running...\n1 passed, 1 failed\n')).toEqual({ passed: 1, failed: 1, skipped: 0, total: 2, format: 'plain' })
    expect(parseTestResults('2 failed, 9 passed')).toMatchObject({ passed: 9, failed: 2, format: 'plain' })
  })

  it('prefers JUnit XML when given', () => {
    expect(parseTestResults('1 passed, 0 failed', [fixture('pytest-junit.xml')])).toEqual({
      passed: 3,
      failed: 1,
      skipped: 0,
      total: 4,
      format: 'junit'
    })
    expect(parseTestResults('', [fixture('pytest-junit.xml'), fixture('vitest-junit.xml')])).toMatchObject({
      passed: 6,
      failed: 2,
      total: 8
    })
  })

  it('returns null when nothing is recognised', () => {
    expect(parseTestResults('')).toBeNull()
    expect(parseTestResults('build ok\nall good\n')).toBeNull()
    expect(parseTestResults('ok 1 - looks like TAP but has no plan')).toBeNull()
    expect(parseTestResults('x', ['<html>not junit</html>'])).toBeNull()
  })
})

describe('parseJUnit', () => {
  it('counts test cases, failures, errors and skips', () => {
    const xml = `<?xml version="1.0"?>
<testsuites>
  <testsuite name="a" tests="5">
    <testcase name="ok"/>
    <testcase name="fails"><failure message="x"><![CDATA[<testcase name="fake"/>]]></failure></testcase>
    <testcase name="errs"><error message="boom"/></testcase>
    <testcase name="skip"><skipped/></testcase>
    <testcase name="ok2"></testcase>
    <!-- <testcase name="commented"/> -->
  </testsuite>
</testsuites>`
    expect(parseJUnit(xml)).toEqual({ passed: 2, failed: 2, skipped: 1, total: 5, format: 'junit' })
  })

  it('uses the suite attributes when no test cases are listed', () => {
    expect(parseJUnit('<testsuite name="s" tests="10" failures="2" errors="1" skipped="3"></testsuite>')).toEqual({
      passed: 4,
      failed: 3,
      skipped: 3,
      total: 10,
      format: 'junit'
    })
  })
})
