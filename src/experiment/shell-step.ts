// One step of an evaluation: a bash command in a directory, with a timeout.
// It runs in its own process group, and the whole group is killed when the
// command ends or times out, so nothing a submission starts (a compile.sh
// that forks, a test that leaves a server behind) outlives its step: the
// same as a container that is torn down after each use.
import { spawn } from 'node:child_process'
import { performance } from 'node:perf_hooks'

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
}

const DEFAULT_MAX_OUTPUT = 4 * 1024 * 1024

export async function runShellStep (o: StepOptions): Promise<StepResult> {
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
    const child = spawn('/bin/bash', ['-c', o.command], { cwd: o.cwd, env: o.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
    const killGroup = (): void => {
      if (child.pid == null) return
      try { process.kill(-child.pid, 'SIGKILL') } catch { /* already gone */ }
    }
    const timer = setTimeout(() => { timedOut = true; killGroup() }, o.timeoutMs)
    child.stdout.on('data', (c: Buffer) => { outBytes = keep(out, c, outBytes) })
    child.stderr.on('data', (c: Buffer) => { errBytes = keep(err, c, errBytes) })
    const finish = (code: number | null, startError?: Error): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      killGroup()
      const text = Buffer.concat([...out, ...err]).toString('utf8') + (startError != null ? `${startError.message}\n` : '')
      resolve({
        step: o.step,
        command: o.command,
        returncode: timedOut || code == null ? -1 : code,
        output: timedOut ? `${text}[timed out after ${Math.round(o.timeoutMs / 1000)} s]` : text,
        timedOut,
        wallMs: performance.now() - started
      })
    }
    child.once('error', e => { finish(null, e) })
    // When the command exits, what it left running in its group goes too; then
    // 'close' (the pipes drained) ends the step. Something that left the group
    // and still holds a pipe does not hold the step for long.
    child.once('exit', code => {
      killGroup()
      setTimeout(() => { finish(code) }, 2000).unref()
    })
    child.once('close', code => { finish(code) })
  })
}
