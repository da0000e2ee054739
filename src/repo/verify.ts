// Runs the verify command (the goal's test command) in a merged tree and
// reads what it says about the tests.
import { spawn } from 'node:child_process'
import { constants as fsc } from 'node:fs'
import { access, readFile, stat } from 'node:fs/promises'
import { delimiter, isAbsolute, join, relative, resolve } from 'node:path'
import { InvalidArgumentError } from '../core/errors.js'
import { VerifyCommandNotFoundError, lastLines } from './errors.js'
import { childEnv, git, splitZ } from './git.js'
import { parseTestResults, stripAnsi, type TestCounts } from './test-results.js'

export const DEFAULT_VERIFY_TIMEOUT_MS = 10 * 60_000
const KILL_GRACE_MS = 5_000
const MAX_JUNIT_FILES = 20
const MAX_JUNIT_BYTES = 32 * 1024 * 1024

export interface VerifyOptions {
  command: string
  cwd: string
  timeoutMs?: number
  /**
   * JUnit XML files the command writes, relative to cwd. When the output
   * mentions "junit" or an .xml file, untracked *.xml files with a
   * <testsuite> in the tree are picked up too.
   */
  junitPaths?: string[]
  /** Output kept for parsing and the summary (the tail: summaries come last). */
  maxOutputBytes?: number
  /** How the command is started; default: the one set with confineTestRuns, else plain sh. */
  confinement?: TestConfinement
}

/** Starts a test command boxed and bounded (src/sandbox), and says afterwards what it hit or was refused. */
export interface TestConfinement {
  confineTest: (
    command: string,
    cwd: string,
    env: NodeJS.ProcessEnv
  ) => { command: string; args: string[]; env: NodeJS.ProcessEnv; finish: (output: string) => { failure?: string; notes: string[] } }
}

let processConfinement: TestConfinement | undefined

/** Every test run of this process (integrate, background verify, the integrator's batches) goes through `c`. */
export function confineTestRuns(c: TestConfinement | undefined): void {
  processConfinement = c
}

export interface VerifyRun {
  /** Exit code 0, no timeout, and no failed test in the parsed counts. */
  ok: boolean
  exitCode: number | null
  timedOut: boolean
  durationMs: number
  tests: TestCounts | null
  /** For people: the counts or exit status, then the end of the output. */
  summary: string
}

// Words /bin/sh runs without a file on PATH.
const SHELL_WORDS = new Set([
  '.',
  ':',
  '[',
  '!',
  '{',
  'alias',
  'bg',
  'break',
  'case',
  'cd',
  'command',
  'continue',
  'do',
  'eval',
  'exec',
  'exit',
  'export',
  'false',
  'fg',
  'for',
  'function',
  'getopts',
  'hash',
  'if',
  'jobs',
  'kill',
  'pwd',
  'read',
  'readonly',
  'return',
  'set',
  'shift',
  'source',
  'test',
  'time',
  'times',
  'trap',
  'true',
  'type',
  'ulimit',
  'umask',
  'unalias',
  'unset',
  'until',
  'wait',
  'while'
])

/**
 * Rejects an empty command, or one whose program is a bare name found on no
 * PATH directory, before anything is fetched or merged. Commands starting
 * with a path (./run-tests) are checked when they run, in the merged tree.
 */
export async function checkVerifyCommand(command: unknown): Promise<string> {
  if (typeof command !== 'string' || command.trim() === '')
    throw new InvalidArgumentError('verify command must be a non-empty shell command')
  if (command.includes('\0')) throw new InvalidArgumentError('verify command contains a NUL byte')
  const program = firstProgram(command)
  if (program == null || SHELL_WORDS.has(program) || program.includes('/')) return command
  for (const dir of (childEnv().PATH ?? '').split(delimiter)) {
    if (dir === '') continue
    try {
      const file = join(dir, program)
      await access(file, fsc.X_OK)
      if ((await stat(file)).isFile()) return command
    } catch {
      /* not in this directory */
    }
  }
  throw new VerifyCommandNotFoundError(command, `"${program}" is not on PATH`)
}

/** The program a simple command starts with, or null when the shell syntax is beyond a quick look. */
function firstProgram(command: string): string | null {
  let rest = command.trim()
  for (;;) {
    // skip leading VAR=value assignments
    const m = /^[A-Za-z_][A-Za-z0-9_]*=(\S*)\s+/.exec(rest)
    if (m == null) break
    if (/["'`$\\]/.test(m[1])) return null
    rest = rest.slice(m[0].length)
  }
  const word = /^[^\s;&|()<>]+/.exec(rest)?.[0]
  if (word == null || /["'`$\\*?~]/.test(word) || (word.includes('[') && word !== '[')) return null
  return word
}

export async function runVerify(opts: VerifyOptions): Promise<VerifyRun> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_VERIFY_TIMEOUT_MS
  const maxBytes = opts.maxOutputBytes ?? 4 * 1024 * 1024
  const started = performance.now()
  const { exitCode, timedOut, output, confined } = await runShell(
    opts.command,
    opts.cwd,
    timeoutMs,
    maxBytes,
    opts.confinement ?? processConfinement
  )
  const durationMs = Math.round(performance.now() - started)
  if (exitCode === 127 && !timedOut) {
    // sh's "command not found"; the tree the command ran in is thrown away, nothing else changed.
    throw new VerifyCommandNotFoundError(opts.command, lastLines(stripAnsi(output), 2) || 'exit code 127')
  }
  // Looking for reports costs a git call per run; do it when asked, or when the output mentions one.
  const lookForJunit = (opts.junitPaths ?? []).length > 0 || /junit|\.xml\b/i.test(output)
  const junit = lookForJunit ? await readJunit(opts.cwd, opts.junitPaths ?? []) : []
  const tests = parseTestResults(output, junit)
  // A run that hit its process or memory bound failed, whatever it exited with.
  const ok = exitCode === 0 && !timedOut && (tests == null || tests.failed === 0) && confined.failure == null
  const said = [confined.failure, ...confined.notes].filter(s => s != null)
  const summary = summarize(output, exitCode, timedOut, timeoutMs, tests)
  return { ok, exitCode, timedOut, durationMs, tests, summary: said.length > 0 ? `${said.join('\n')}\n${summary}` : summary }
}

interface ShellRun {
  exitCode: number | null
  timedOut: boolean
  output: string
  /** what the confinement said after the run */ confined: { failure?: string; notes: string[] }
}

async function runShell(
  command: string,
  cwd: string,
  timeoutMs: number,
  maxBytes: number,
  confinement: TestConfinement | undefined
): Promise<ShellRun> {
  return await new Promise((resolvePromise, reject) => {
    // CI=1: test runners run once and do not wait for a terminal.
    const plain = {
      command: '/bin/sh',
      args: ['-c', command],
      env: { ...childEnv(), CI: process.env.CI ?? '1' },
      finish: () => ({ notes: [] })
    }
    const run = confinement?.confineTest(command, cwd, plain.env) ?? plain
    // detached: its own process group, so a timeout kills the whole test run, not just sh.
    const child = spawn(run.command, run.args, { cwd, env: run.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
    const chunks: Buffer[] = []
    let size = 0
    const keep = (b: Buffer): void => {
      chunks.push(b)
      size += b.length
      while (size > maxBytes && chunks.length > 1) size -= chunks.shift()?.length ?? 0
    }
    child.stdout.on('data', keep)
    child.stderr.on('data', keep)
    let timedOut = false
    let killTimer: NodeJS.Timeout | undefined
    const killGroup = (signal: NodeJS.Signals): void => {
      try {
        if (child.pid != null) process.kill(-child.pid, signal)
      } catch {
        /* already gone */
      }
    }
    const timer = setTimeout(() => {
      timedOut = true
      killGroup('SIGTERM')
      killTimer = setTimeout(() => {
        killGroup('SIGKILL')
      }, KILL_GRACE_MS)
    }, timeoutMs)
    child.on('error', err => {
      clearTimeout(timer)
      clearTimeout(killTimer)
      run.finish('')
      reject(err)
    })
    // Processes the command left in the background must not outlive it (nor
    // hold its output pipes open, which would keep 'close' from firing).
    child.on('exit', () => {
      killGroup('SIGKILL')
    })
    child.on('close', code => {
      clearTimeout(timer)
      clearTimeout(killTimer)
      const output = Buffer.concat(chunks).toString('utf8')
      resolvePromise({ exitCode: code, timedOut, output, confined: run.finish(output) })
    })
  })
}

/** Throws InvalidArgumentError unless every path is relative and stays inside the tree. */
export function checkJunitPaths(paths: unknown): string[] {
  if (paths === undefined) return []
  if (!Array.isArray(paths)) throw new InvalidArgumentError('junitPaths must be an array of relative paths')
  for (const p of paths) {
    const rel = typeof p === 'string' && p !== '' ? relative('/tree', resolve('/tree', p)) : '..'
    if (rel === '' || rel.startsWith('..') || isAbsolute(rel))
      throw new InvalidArgumentError(`junit path ${JSON.stringify(p)} is not a path inside the tree`)
  }
  return paths as string[]
}

async function readJunit(cwd: string, explicit: string[]): Promise<string[]> {
  const files = new Set<string>(checkJunitPaths(explicit).map(p => resolve(cwd, p)))
  // The tree is a fresh checkout, so an untracked XML file was written by this run.
  const r = await git(cwd, ['ls-files', '--others', '-z', '--', '*.xml'], { allowFail: true })
  if (r.code === 0) {
    for (const f of splitZ(r.stdout)) {
      if (!f.split('/').includes('node_modules')) files.add(join(cwd, f))
    }
  }
  const docs: string[] = []
  for (const f of [...files].slice(0, MAX_JUNIT_FILES)) {
    try {
      if ((await stat(f)).size > MAX_JUNIT_BYTES) continue
      const text = await readFile(f, 'utf8')
      if (/<testsuites?\b/.test(text)) docs.push(text)
    } catch {
      /* not written this time */
    }
  }
  return docs
}

function summarize(output: string, exitCode: number | null, timedOut: boolean, timeoutMs: number, tests: TestCounts | null): string {
  const head = timedOut
    ? `verify timed out after ${Math.round(timeoutMs / 1000)} s`
    : tests != null
      ? `${tests.failed} failed, ${tests.passed} passed, ${tests.skipped} skipped (${tests.format}); exit code ${String(exitCode)}`
      : `exit code ${String(exitCode)}`
  const lines = stripAnsi(output).trimEnd().split('\n').slice(-40).join('\n')
  const tail = lines.length > 4000 ? lines.slice(-4000) : lines
  return tail.length > 0 ? `${head}\n${tail}` : head
}
