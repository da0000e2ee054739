// Test-only switches for the fault campaign on real processes
// (test/faults): a wall clock that the campaign can jump, and a safeguard
// switched off to show that the campaign can fail. Read once, from the
// environment of the process that started agentd, and only when
// AGENCY_TEST_FAULTS=1: nothing a peer or a client sends can set them.
//
//   AGENCY_TEST_CLOCK_FILE=<path>   the wall clock reads Date.now() plus the
//                                   integer (ms) in that file, re-read when it changes
//   AGENCY_TEST_BREAK=settle|fence  settle: claims are answered with no settle
//                                   window; fence: the shared remote's task fence
//                                   is not checked before a push
import { readFileSync, watchFile } from 'node:fs'

export type TestBreak = 'settle' | 'fence'

export interface TestFaults {
  /** the daemon's wall clock, when the campaign moves it */
  wallClock?: () => number
  breaks: ReadonlySet<TestBreak>
}

const NONE: TestFaults = { breaks: new Set() }
let cached: TestFaults | undefined

export function testFaults(env: NodeJS.ProcessEnv = process.env): TestFaults {
  if (env !== process.env) return readTestFaults(env)
  cached ??= readTestFaults(env)
  return cached
}

function readTestFaults(env: NodeJS.ProcessEnv): TestFaults {
  if (env.AGENCY_TEST_FAULTS !== '1') return NONE
  const breaks = new Set((env.AGENCY_TEST_BREAK ?? '').split(',').filter((b): b is TestBreak => b === 'settle' || b === 'fence'))
  const file = env.AGENCY_TEST_CLOCK_FILE
  if (file === undefined || file === '') return { breaks }
  let offsetMs = readOffset(file)
  // Polled, not read per call: the wall clock is read on every entry and beat.
  watchFile(file, { interval: 50, persistent: false }, () => {
    offsetMs = readOffset(file)
  })
  return { breaks, wallClock: () => Date.now() + offsetMs }
}

function readOffset(file: string): number {
  try {
    const n = Number(readFileSync(file, 'utf8').trim())
    return Number.isFinite(n) ? Math.round(n) : 0
  } catch {
    return 0
  }
}
