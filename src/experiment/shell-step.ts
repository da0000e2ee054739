// One step of an evaluation: a bash command in a directory, with a timeout.
// It runs in its own process group, and the whole group is killed when the
// command ends or times out, so nothing a submission starts (a compile.sh
// that forks, a test that leaves a server behind) outlives its step: the
// same as a container that is torn down after each use.
import { spawn } from 'node:child_process'
import { performance } from 'node:perf_hooks'
import type { TestConfinement } from '../repo/verify.js'

export interface StepResult {
  step: string
  command: string
  /** -1 when the command timed out or could not be started */
  returncode: number
  /** stdout and stderr, in that order, clipped to the last `maxOutputBytes` */
  output: string
  timedOut: boolean
  wallMs: number
  branch?: string
}

export interface StepOptions {
  step: string
  command: string
  cwd: string
  timeoutMs: number
  env: NodeJS.ProcessEnv
  maxOutputBytes?: number
  /** a box for the command (a submission's compile.sh and tests): what it hit or was refused is added to the output */
  confinement?: TestConfinement
}

const DEFAULT_MAX_OUTPUT = 4 * 1024 * 1024

export async function runShellStep(o: StepOptions): Promise<StepResult> {
  const started = performance.now()
  const max = o.maxOutputBytes ?? DEFAULT_MAX_OUTPUT
  return await new Promise<StepResult>(resolve => {
    const out: Buffer[] = []
    const err: Buffer[] = []
    let outBytes = 0
    let errBytes = 0
    const keep = (list: Buffer[], chunk: Buffer, size: number): number => {
      list.push(chunk)
      size += chunk.length
      while (size > max && list.length > 1) size -= (list.shift() as Buffer).length
      return size
    }
    let timedOut = false
    let settled = false
    const boxed = o.confinement?.confineTest(o.command, o.cwd, o.env)
    const child = spawn(boxed?.command ?? '/bin/bash', boxed?.args ?? ['-c', o.command], {
      cwd: o.cwd,
      env: boxed?.env ?? o.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true
    })
    const killGroup = (): void => {
      if (child.pid == null) return
      try {
        process.kill(-child.pid, 'SIGKILL')
      } catch {
        /* already gone */
      }
    }
    const timer = setTimeout(() => {
      timedOut = true
      killGroup()
    }, o.timeoutMs)
    child.stdout.on('data', (c: Buffer) => {
      outBytes = keep(out, c, outBytes)
    })
    child.stderr.on('data', (c: Buffer) => {
      errBytes = keep(err, c, errBytes)
    })
    const finish = (code: number | null, startError?: Error): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      killGroup()
      let text = Buffer.concat([...out, ...err]).toString('utf8') + (startError != null ? `${startError.message}\n` : '')
      // A bound the box's run hit fails the step even when its command exited 0.
      const verdict = boxed?.finish(text)
      if (verdict != null)
        text += [verdict.failure, ...verdict.notes]
          .filter(s => s != null)
          .map(s => `${s}\n`)
          .join('')
      const failed = verdict?.failure != null && code === 0
      resolve({
        step: o.step,
        command: o.command,
        returncode: timedOut || code == null ? -1 : failed ? 1 : code,
        output: timedOut ? `${text}[timed out after ${Math.round(o.timeoutMs / 1000)} s]` : text,
        timedOut,
        wallMs: performance.now() - started
      })
    }
    child.once('error', e => {
      finish(null, e)
    })
    // When the command exits, what it left running in its group goes too; then
    // 'close' (the pipes drained) ends the step. Something that left the group
    // and still holds a pipe does not hold the step for long.
    child.once('exit', code => {
      killGroup()
      setTimeout(() => {
        finish(code)
      }, 2000).unref()
    })
    child.once('close', code => {
      finish(code)
    })
  })
}
