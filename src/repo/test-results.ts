// Test counts from a verify command's output. Pure: the caller reads files.
// Each recogniser looks for the summary its tool prints; the first format
// found (in the order below, most specific first) wins. null means nothing
// was recognised, and the verify command's exit code alone decides.

export type TestFormat = 'junit' | 'cargo' | 'vitest' | 'jest' | 'pytest' | 'go' | 'tap' | 'plain'

export interface TestCounts {
  passed: number
  failed: number
  skipped: number
  /** passed + failed + skipped */
  total: number
  format: TestFormat
}

type Recogniser = (text: string) => Omit<TestCounts, 'total' | 'format'> | null

const TEXT_FORMATS: Array<[TestFormat, Recogniser]> = [
  ['cargo', parseCargo],
  ['vitest', parseVitest],
  ['jest', parseJest],
  ['pytest', parsePytest],
  ['go', parseGo],
  ['tap', parseTap],
  ['plain', parsePlain]
]

/** Counts from JUnit XML documents if any parse, else from the text output. */
export function parseTestResults(output: string, junitXml: string[] = []): TestCounts | null {
  const docs = junitXml.map(parseJUnit).filter((c): c is TestCounts => c != null)
  if (docs.length > 0) {
    return counts('junit', {
      passed: sum(docs.map(d => d.passed)),
      failed: sum(docs.map(d => d.failed)),
      skipped: sum(docs.map(d => d.skipped))
    })
  }
  const text = stripAnsi(output).replace(/\r\n?/g, '\n')
  for (const [format, recognise] of TEXT_FORMATS) {
    const c = recognise(text)
    if (c != null) return counts(format, c)
  }
  return null
}

export function parseJUnit(xml: string): TestCounts | null {
  // Failure bodies may hold anything in CDATA; comments may hold stale markup.
  const doc = xml.replace(/<!\[CDATA\[[\s\S]*?\]\]>/g, '').replace(/<!--[\s\S]*?-->/g, '')
  if (!/<testsuites?\b/.test(doc)) return null
  let passed = 0
  let failed = 0
  let skipped = 0
  let cases = 0
  for (const m of doc.matchAll(/<testcase\b(?:[^>]*?\/>|[^>]*>([\s\S]*?)<\/testcase>)/g)) {
    cases++
    const body = m[1] ?? ''
    if (/<(failure|error)\b/.test(body)) failed++
    else if (/<skipped\b/.test(body)) skipped++
    else passed++
  }
  if (cases > 0) return counts('junit', { passed, failed, skipped })
  // No test cases listed: fall back to the suite attributes.
  const root = /<testsuites\b([^>]*)>/.exec(doc)
  const suites = root != null && attr(root[1], 'tests') != null ? [root[1]] : [...doc.matchAll(/<testsuite\b([^>]*)>/g)].map(m => m[1])
  let tests = 0
  for (const a of suites) {
    tests += attr(a, 'tests') ?? 0
    failed += (attr(a, 'failures') ?? 0) + (attr(a, 'errors') ?? 0)
    skipped += attr(a, 'skipped') ?? attr(a, 'disabled') ?? 0
  }
  if (suites.length === 0) return null
  return counts('junit', { passed: Math.max(0, tests - failed - skipped), failed, skipped })
}

/** `test result: FAILED. 3 passed; 1 failed; 0 ignored; …`, one line per test binary: summed. */
function parseCargo(text: string): Omit<TestCounts, 'total' | 'format'> | null {
  const lines = [...text.matchAll(/^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored;/gm)]
  if (lines.length === 0) return null
  return { passed: sum(lines.map(m => +m[1])), failed: sum(lines.map(m => +m[2])), skipped: sum(lines.map(m => +m[3])) }
}

/** `      Tests  1 failed | 3 passed (4)` (not `Test Files`); the last summary wins. */
function parseVitest(text: string): Omit<TestCounts, 'total' | 'format'> | null {
  const m = last(text.matchAll(/^\s*Tests\s+(\d+ [a-z][a-z |\d]*?)\s*\((\d+)\)\s*$/gm))
  if (m == null) return null
  const c = tally(m[1])
  return { passed: c.passed, failed: c.failed, skipped: c.skipped + c.todo + c['expected fail'] }
}

/** `Tests:       1 failed, 3 passed, 4 total`; the last summary wins. */
function parseJest(text: string): Omit<TestCounts, 'total' | 'format'> | null {
  const m = last(text.matchAll(/^Tests:\s+(.*\b\d+ total)\s*$/gm))
  if (m == null) return null
  const c = tally(m[1])
  return { passed: c.passed, failed: c.failed, skipped: c.skipped + c.todo }
}

/** `==== 1 failed, 3 passed, 2 warnings in 0.80s ====` (or without the rules, with -q). */
function parsePytest(text: string): Omit<TestCounts, 'total' | 'format'> | null {
  const item = '\\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|warnings?|deselected|rerun)'
  const re = new RegExp(`^=*\\s*((?:${item})(?:, ${item})*) in \\d+(?:\\.\\d+)?s\\b.*$`, 'gm')
  const m = last(text.matchAll(re))
  if (m == null) return null
  const c = tally(m[1])
  if (c.passed + c.failed + c.error + c.errors + c.skipped + c.xfailed + c.xpassed === 0) return null
  return { passed: c.passed + c.xpassed, failed: c.failed + c.error + c.errors, skipped: c.skipped + c.xfailed }
}

/**
 * go test. With -v (`=== RUN` present) the unit is a top-level test
 * (`--- PASS:`/`--- FAIL:`/`--- SKIP:`, subtests are indented and not counted);
 * without -v only failures are listed, so the unit is a package (`ok  pkg 0.1s`,
 * `FAIL pkg 0.1s`).
 */
function parseGo(text: string): Omit<TestCounts, 'total' | 'format'> | null {
  if (/^=== RUN\s/m.test(text)) {
    const passed = count(text, /^--- PASS: /gm)
    const failed = count(text, /^--- FAIL: /gm)
    const skipped = count(text, /^--- SKIP: /gm)
    if (passed + failed + skipped > 0) return { passed, failed, skipped }
  }
  const passed = count(text, /^ok\s+\S+\s+(?:\(cached\)|\d+(?:\.\d+)?s)/gm)
  const failed = count(text, /^FAIL\s+\S+\s+(?:\d+(?:\.\d+)?s|\[[a-z ]+\])/gm)
  if (passed + failed === 0) return null
  return { passed, failed, skipped: 0 }
}

/** TAP: the `# pass`/`# fail` summary node:test and tape print, else top-level ok/not ok lines. */
function parseTap(text: string): Omit<TestCounts, 'total' | 'format'> | null {
  if (!/^TAP version \d+/m.test(text) && !/^1\.\.\d+/m.test(text)) return null
  const pass = last(text.matchAll(/^# pass\s+(\d+)/gm))
  const fail = last(text.matchAll(/^# fail\s+(\d+)/gm))
  if (pass != null && fail != null) {
    const skip = last(text.matchAll(/^# skip(?:ped)?\s+(\d+)/gm))
    const todo = last(text.matchAll(/^# todo\s+(\d+)/gm))
    return { passed: +pass[1], failed: +fail[1], skipped: (skip != null ? +skip[1] : 0) + (todo != null ? +todo[1] : 0) }
  }
  let passed = 0
  let failed = 0
  let skipped = 0
  for (const m of text.matchAll(/^(not )?ok\b[^#\n]*(#\s*(SKIP|TODO)\S*)?.*$/gim)) {
    if (m[3] != null) skipped++
    else if (m[1] != null) failed++
    else passed++
  }
  if (passed + failed + skipped === 0) return null
  return { passed, failed, skipped }
}

/** Any `N passed, N failed` (either order); the last one wins. */
function parsePlain(text: string): Omit<TestCounts, 'total' | 'format'> | null {
  const m = last(text.matchAll(/\b(\d+) (passed|failed),\s*(\d+) (passed|failed)\b/gi))
  if (m == null || m[2].toLowerCase() === m[4].toLowerCase()) return null
  const passed = m[2].toLowerCase() === 'passed' ? +m[1] : +m[3]
  const failed = m[2].toLowerCase() === 'failed' ? +m[1] : +m[3]
  return { passed, failed, skipped: 0 }
}

// `1 failed | 3 passed`, `1 failed, 3 passed, 4 total` -> { failed: 1, passed: 3, total: 4 }
function tally(list: string): Record<string, number> {
  const c: Record<string, number> = {}
  for (const m of list.matchAll(/(\d+) ([a-z]+(?: fail)?)/g)) c[m[2]] = (c[m[2]] ?? 0) + +m[1]
  return new Proxy(c, { get: (t, k: string) => t[k] ?? 0 })
}

function counts(format: TestFormat, c: Omit<TestCounts, 'total' | 'format'>): TestCounts {
  return { ...c, total: c.passed + c.failed + c.skipped, format }
}

function attr(attrs: string, name: string): number | null {
  const m = new RegExp(`\\b${name}="(\\d+)"`).exec(attrs)
  return m != null ? +m[1] : null
}

function count(text: string, re: RegExp): number {
  return [...text.matchAll(re)].length
}

function last<T>(it: Iterable<T>): T | null {
  let v: T | null = null
  for (const x of it) v = x
  return v
}

function sum(xs: number[]): number {
  return xs.reduce((a, b) => a + b, 0)
}

// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07/g

export function stripAnsi(s: string): string {
  return s.replace(ANSI, '')
}
