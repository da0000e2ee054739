// Runs the agent's harness beside the daemon: writes its files, starts it in
// the workspace with its environment, appends its output to <dataDir>/harness.log,
// and restarts it with backoff whenever it exits, until stop() or until
// shouldContinue() says the work is over (the goal's tests pass).
//
// The harness runs in its own process group, so stop() and each exit also take
// down what it started (MCP servers, shell commands) instead of leaving orphans.
//
// With `session`, each run's stdin and stdout are pipes handed to a session
// (ACP mode: agentd drives the agent over them); stderr still goes to the log.
// The session ends its run through `run.end`, cleanly or with a failure.
import { spawn, type ChildProcess } from 'node:child_process'
import { appendFileSync, closeSync, openSync, statSync } from 'node:fs'
import { chmod, mkdir, writeFile } from 'node:fs/promises'
import { delimiter, dirname, join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { restartDelayMs } from './restart-backoff.js'
import type { HarnessLaunch, HarnessRun, HarnessRunSession } from './types.js'
import { FailedPreconditionError, InvalidArgumentError } from '../core/errors.js'
import { componentLogger, type Logger } from '../logger.js'

export interface HarnessSupervisorOptions {
  launch: HarnessLaunch
  /** The daemon's data dir; output is appended to `<dataDir>/harness.log`. */
  dataDir: string
  /** First restart delay. Default 1 s. */
  minBackoffMs?: number
  /** Longest restart delay. Default 60 s. */
  maxBackoffMs?: number
  /** A run at least this long counts as a working session: the next delay starts from min again. Default 60 s. */
  resetAfterMs?: number
  /** How long stop() waits after SIGTERM before SIGKILL. Default 5 s. */
  stopGraceMs?: number
  /** A run still going after this long is killed (and counts as a failed run); 0: no limit. Default 0. */
  runTimeoutMs?: number
  /** The delay before the next start, given the one the backoff chose; e.g. longer after repeated failures. */
  nextDelayMs?: (exit: HarnessExit, backoffMs: number) => number
  /** Asked before each restart; false ends supervision (the daemon: "goal tests not yet passing"). */
  shouldContinue?: () => boolean | Promise<boolean>
  /** Called each time the harness is started again, e.g. to count restarts in metrics. */
  onRestart?: (restart: HarnessRestart) => void
  /** Called each time the harness exits. */
  onExit?: (exit: HarnessExit) => void
  /** The environment the launch's env is merged over. Default process.env. */
  baseEnv?: NodeJS.ProcessEnv
  /** Checked before each start; a throw is a failed start with that error (e.g. "not installed: install it with ..."). */
  beforeSpawn?: () => void
  /** Drives each run over its stdin and stdout (ACP mode); stop() awaits its stop() before signalling the process. */
  session?: (run: HarnessRun) => HarnessRunSession
  /**
   * Asked before each start: a hold (the budget is reached, the provider is
   * rate-limited) makes the supervisor wait and ask again, without counting a
   * failure. `waitMs` is when to ask again at the latest; wake() asks at once.
   */
  startGate?: () => StartHold | null
  /** While true, no run starts (the operator paused the swarm): the start waits as on the gate, until resume(). */
  paused?: () => boolean
}

/** How often a paused supervisor looks again without a resume() (a missed one costs at most this). */
const PAUSE_RECHECK_MS = 60_000

/** Why the next run may not start yet, and when to ask again. */
export interface StartHold {
  reason: string
  waitMs: number
}

export interface HarnessExit {
  pid: number | undefined
  code: number | null
  signal: NodeJS.Signals | null
  /** Set when the process could not be started at all (e.g. command not found). */
  error?: Error
  runMs: number
  /** The run was killed for running longer than runTimeoutMs (or its session stopped answering). */
  timedOut: boolean
  /** Why the run failed, in words, when its session ended it for a failure. */
  failure?: string
  /** Why agentd ended the run on purpose (not a failure), e.g. the goal is met. */
  endedBy?: string
  /** Where this run's output starts in the harness log (bytes), for reading back what it reported. */
  outputFrom: number
}

export interface HarnessRestart {
  /** Restarts so far, this one included. */
  restarts: number
  pid: number | undefined
  delayMs: number
  previous: HarnessExit
}

export type HarnessSupervisorState = 'idle' | 'running' | 'waiting' | 'finished' | 'stopped'

export function harnessLogPath(dataDir: string): string {
  return join(dataDir, 'harness.log')
}

export class HarnessSupervisor {
  private readonly launch: HarnessLaunch
  private readonly logFile: string
  private readonly minBackoffMs: number
  private readonly maxBackoffMs: number
  private readonly resetAfterMs: number
  private readonly stopGraceMs: number
  private readonly runTimeoutMs: number
  private runTimer: NodeJS.Timeout | undefined
  private _delayMs = 0
  private readonly opts: HarnessSupervisorOptions
  private readonly log: Logger
  private _state: HarnessSupervisorState = 'idle'
  private _restarts = 0
  private quickExits = 0
  private child: ChildProcess | undefined
  private session: HarnessRunSession | undefined
  private restartTimer: NodeJS.Timeout | undefined
  private holdTimer: NodeJS.Timeout | undefined
  private _hold: StartHold | undefined
  private pendingStart: { previous?: HarnessExit; delayMs: number } | undefined
  private exitWaiters: Array<() => void> = []
  private stopping: Promise<void> | undefined
  private resolveFinished!: () => void
  /** Resolves when supervision ends: after stop(), or when shouldContinue() said no. */
  readonly finished: Promise<void>

  constructor(opts: HarnessSupervisorOptions) {
    this.minBackoffMs = opts.minBackoffMs ?? 1_000
    this.maxBackoffMs = opts.maxBackoffMs ?? 60_000
    this.resetAfterMs = opts.resetAfterMs ?? 60_000
    this.stopGraceMs = opts.stopGraceMs ?? 5_000
    this.runTimeoutMs = opts.runTimeoutMs ?? 0
    for (const [name, value] of Object.entries({
      minBackoffMs: this.minBackoffMs,
      maxBackoffMs: this.maxBackoffMs,
      resetAfterMs: this.resetAfterMs,
      stopGraceMs: this.stopGraceMs,
      runTimeoutMs: this.runTimeoutMs
    })) {
      if (!Number.isFinite(value) || value < 0)
        throw new InvalidArgumentError(`harness supervisor: ${name} must be a non-negative number, got ${value}`)
    }
    if (this.maxBackoffMs < this.minBackoffMs)
      throw new InvalidArgumentError(`harness supervisor: maxBackoffMs (${this.maxBackoffMs}) is below minBackoffMs (${this.minBackoffMs})`)
    if (opts.launch.command === '') throw new InvalidArgumentError('harness supervisor: the launch has no command')
    this.opts = opts
    this.launch = opts.launch
    this.logFile = harnessLogPath(opts.dataDir)
    this.log = componentLogger('harness')
    this.finished = new Promise(resolve => {
      this.resolveFinished = resolve
    })
  }

  get state(): HarnessSupervisorState {
    return this._state
  }

  /** How many times the harness was started again after exiting. */
  get restarts(): number {
    return this._restarts
  }

  /** While waiting to restart: the delay chosen. */
  get delayMs(): number {
    return this._delayMs
  }

  /** While waiting on the start gate (state 'waiting'): why the next run waits. */
  get hold(): StartHold | undefined {
    return this._hold
  }

  /** Asks the start gate again now (the budget was raised, a hold ended early). */
  wake(): void {
    if (this._hold == null || this.pendingStart == null || this._state !== 'waiting') return
    clearTimeout(this.holdTimer)
    this.holdTimer = undefined
    void this.afterHold()
  }

  /** The operator resumed the swarm: a run held by the pause starts (if nothing else holds it). */
  resume(): void {
    if (this._hold == null || this.opts.paused?.() === true) return
    this.note('the operator resumed the swarm')
    this.wake()
  }

  /** The running harness's pid, if one is running. */
  get pid(): number | undefined {
    return this.child?.pid
  }

  /** Writes the launch's files and starts the harness. Rejects (and starts nothing) if a file cannot be written. */
  async start(): Promise<void> {
    if (this._state !== 'idle') throw new FailedPreconditionError(`harness supervisor already ${this._state}`)
    this._state = 'running'
    try {
      await this.writeFiles()
    } catch (err) {
      if (this._state === 'running') this._state = 'idle'
      throw err
    }
    if (this._state !== 'running') return // stopped while the files were written
    this.pendingStart = { delayMs: 0 }
    this.tryStart()
  }

  /** A hold is over or was woken: the work may have been done meanwhile (a restart asks again), then the gate. */
  private async afterHold(): Promise<void> {
    if (this._state !== 'waiting' || this.pendingStart == null) return
    if (this.pendingStart.previous != null) {
      let more = true
      try {
        more = await (this.opts.shouldContinue?.() ?? true)
      } catch (err) {
        this.log.warn({ err }, 'harness shouldContinue failed; going on')
      }
      if (this._state !== 'waiting' || this.pendingStart == null) return
      if (!more) {
        this.pendingStart = undefined
        this._hold = undefined
        this._state = 'finished'
        this.note('work is done; not restarting the harness')
        this.resolveFinished()
        return
      }
    }
    this.tryStart()
  }

  /** Starts the pending run unless the gate holds it; a held start is asked again later. */
  private tryStart(): void {
    const pending = this.pendingStart
    if (pending == null || (this._state !== 'running' && this._state !== 'waiting')) return
    let hold: StartHold | null = null
    try {
      hold =
        this.opts.paused?.() === true
          ? { reason: 'the operator paused the swarm: no new run until it resumes', waitMs: PAUSE_RECHECK_MS }
          : (this.opts.startGate?.() ?? null)
    } catch (err) {
      this.log.warn({ err }, 'harness start gate failed; starting anyway')
    }
    if (hold != null) {
      if (this._hold?.reason !== hold.reason) this.note(`not starting a run: ${hold.reason}`)
      this._hold = hold
      // held is a kind of waiting: `hold` says why
      this._state = 'waiting'
      this.holdTimer = setTimeout(
        () => {
          this.holdTimer = undefined
          void this.afterHold()
        },
        Math.max(10, Math.min(hold.waitMs, 2_147_483_647))
      )
      return
    }
    if (this._hold != null) this.note(`starting again: ${this._hold.reason} no longer holds`)
    this._hold = undefined
    this.pendingStart = undefined
    this._state = 'running'
    const child = this.spawnHarness()
    if (pending.previous != null) {
      this._restarts++
      this.safely(() =>
        this.opts.onRestart?.({
          restarts: this._restarts,
          pid: child?.pid,
          delayMs: pending.delayMs,
          previous: pending.previous as HarnessExit
        })
      )
    }
  }

  /** Stops supervising and the harness: SIGTERM, then SIGKILL after the grace period. Resolves when it is gone. */
  async stop(): Promise<void> {
    this.stopping ??= this.stopNow()
    await this.stopping
  }

  private async stopNow(): Promise<void> {
    if (this._state === 'finished') return
    this._state = 'stopped'
    if (this.restartTimer != null) clearTimeout(this.restartTimer)
    this.restartTimer = undefined
    clearTimeout(this.holdTimer)
    this.holdTimer = undefined
    this.pendingStart = undefined
    clearTimeout(this.runTimer)
    const child = this.child
    if (child?.pid != null) {
      const gone = new Promise<void>(resolve => this.exitWaiters.push(resolve))
      // A session ends itself cleanly first (cancels its turn, closes stdin), within the grace period.
      const session = this.session
      if (session != null) {
        const grace = (): Promise<unknown> => new Promise(resolve => setTimeout(resolve, this.stopGraceMs).unref())
        await Promise.race([session.stop().catch(() => {}), gone, grace()])
        // Its stdin closed, the agent may exit by itself.
        await Promise.race([gone, grace()])
      }
      signalGroup(child.pid, 'SIGTERM')
      const kill = setTimeout(() => {
        if (child.pid != null) signalGroup(child.pid, 'SIGKILL')
      }, this.stopGraceMs)
      try {
        await gone
      } finally {
        clearTimeout(kill)
      }
    }
    this.resolveFinished()
  }

  private async writeFiles(): Promise<void> {
    await mkdir(dirname(this.logFile), { recursive: true })
    for (const dir of this.launch.writable ?? []) await mkdir(dir, { recursive: true })
    for (const file of this.launch.files) {
      await mkdir(dirname(file.path), { recursive: true })
      await writeFile(file.path, file.content, { mode: file.mode ?? 0o644 })
      // writeFile's mode applies only to a new file; a rewritten one keeps its old mode.
      if (file.mode != null) await chmod(file.path, file.mode)
    }
  }

  private spawnHarness(): ChildProcess | undefined {
    const { command, args, cwd } = this.launch
    const startedAt = performance.now()
    const outputFrom = logSize(this.logFile)
    const shown = this.launch.boxed ?? { command, args }
    this.note(
      `starting ${shown.command} ${shown.args.map(brief).join(' ')} in ${cwd}${this.launch.boxed != null ? ` (sandbox ${this.launch.boxed.sandbox})` : ''}`
    )
    let child: ChildProcess | undefined
    let ended = false
    let timedOut = false
    let outcome: { failure?: string; reason?: string } | undefined
    const end = (code: number | null, signal: NodeJS.Signals | null, error?: Error): void => {
      if (ended) return
      ended = true
      clearTimeout(this.runTimer)
      const exit: HarnessExit = {
        pid: child?.pid,
        code,
        signal,
        error,
        runMs: performance.now() - startedAt,
        timedOut,
        failure: outcome?.failure,
        endedBy: outcome?.failure == null ? outcome?.reason : undefined,
        outputFrom
      }
      this.onHarnessExit(child, exit)
    }
    const piped = this.opts.session != null
    try {
      this.opts.beforeSpawn?.()
      const fd = openSync(this.logFile, 'a')
      try {
        child = spawn(command, args, {
          cwd,
          env: this.environment(),
          stdio: piped ? ['pipe', 'pipe', fd] : ['ignore', fd, fd],
          detached: true
        })
      } finally {
        closeSync(fd) // the child holds its own copy
      }
    } catch (err) {
      // Bad arguments or an unwritable log: report it like a failed start, on the next tick.
      const error = err instanceof Error ? err : new Error(String(err))
      setImmediate(() => end(null, null, error))
      return undefined
    }
    this.child = child
    child.once('exit', (code, signal) => end(code, signal))
    // Only a failed spawn lands here: signals are sent with process.kill, not child.kill.
    child.once('error', err => end(null, null, err))
    if (child.pid != null) this.log.info({ pid: child.pid, command, restarts: this._restarts }, 'harness started')
    if (piped && child.pid != null && child.stdin != null && child.stdout != null) {
      const pid = child.pid
      const stdin = child.stdin
      const run: HarnessRun = {
        stdin,
        stdout: child.stdout,
        note: text => {
          this.note(text)
        },
        raw: text => {
          this.note(text, false)
        },
        alive: () => !ended,
        end: o => {
          if (ended || outcome != null) return
          outcome = { failure: o.failure, reason: o.reason }
          if (o.timedOut === true) timedOut = true
          if (!stdin.writableEnded) stdin.end()
          setTimeout(
            () => {
              if (ended) return
              signalGroup(pid, 'SIGTERM')
              setTimeout(() => {
                if (!ended) signalGroup(pid, 'SIGKILL')
              }, this.stopGraceMs).unref()
            },
            o.failure != null ? 0 : this.stopGraceMs
          ).unref()
        }
      }
      stdin.on('error', () => {
        /* the process is gone: its exit says why */
      })
      this.session = this.opts.session?.(run)
    }
    if (this.runTimeoutMs > 0 && child.pid != null) {
      const pid = child.pid
      this.runTimer = setTimeout(() => {
        timedOut = true
        this.note(`the run has gone on for ${Math.round(this.runTimeoutMs / 1000)} s (--harness-run-timeout): stopping it`)
        signalGroup(pid, 'SIGTERM')
        setTimeout(() => {
          if (!ended) signalGroup(pid, 'SIGKILL')
        }, this.stopGraceMs).unref()
      }, this.runTimeoutMs)
    }
    return child
  }

  private onHarnessExit(child: ChildProcess | undefined, exit: HarnessExit): void {
    if (child != null && this.child === child) {
      this.child = undefined
      this.session = undefined
    }
    if (exit.pid != null) signalGroup(exit.pid, 'SIGTERM') // whatever it left running
    this.note(
      exit.error != null
        ? `harness could not start: ${exit.error.message}`
        : `harness exited (code ${String(exit.code)}, signal ${String(exit.signal)}${exit.timedOut ? ', run timeout' : ''}) after ${Math.round(exit.runMs)} ms${exit.failure != null ? `: ${exit.failure}` : exit.endedBy != null ? ` (ended by agentd: ${exit.endedBy})` : ''}`
    )
    this.log.info(
      { pid: exit.pid, code: exit.code, signal: exit.signal, err: exit.error?.message, runMs: Math.round(exit.runMs) },
      'harness exited'
    )
    const waiters = this.exitWaiters
    this.exitWaiters = []
    for (const resolve of waiters) resolve()
    this.safely(() => this.opts.onExit?.(exit))
    if (this._state !== 'running') return
    this.quickExits = exit.runMs >= this.resetAfterMs ? 1 : this.quickExits + 1
    const backoffMs = restartDelayMs(this.quickExits, this.minBackoffMs, this.maxBackoffMs)
    let delayMs = backoffMs
    try {
      delayMs = this.opts.nextDelayMs?.(exit, backoffMs) ?? backoffMs
    } catch (err) {
      this.log.warn({ err }, 'harness nextDelayMs failed; using the backoff')
    }
    this._delayMs = delayMs
    if (delayMs > backoffMs) this.note(`next start in ${Math.round(delayMs / 1000)} s`)
    this._state = 'waiting'
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined
      void this.restart(exit, delayMs)
    }, delayMs)
  }

  private async restart(previous: HarnessExit, delayMs: number): Promise<void> {
    if (this._state !== 'waiting') return
    let more = true
    try {
      more = await (this.opts.shouldContinue?.() ?? true)
    } catch (err) {
      // A failing check must not strand the agent: keep it running and say so.
      this.log.warn({ err }, 'harness shouldContinue failed; restarting anyway')
    }
    if (this._state !== 'waiting') return // stopped while we asked
    if (!more) {
      this._state = 'finished'
      this.note('work is done; not restarting the harness')
      this.resolveFinished()
      return
    }
    this._state = 'running'
    this.pendingStart = { previous, delayMs }
    this.tryStart()
  }

  private environment(): NodeJS.ProcessEnv {
    const base = this.opts.baseEnv ?? process.env
    const env: NodeJS.ProcessEnv = { ...base, ...this.launch.env }
    const prepend = this.launch.pathPrepend ?? []
    if (prepend.length > 0) env.PATH = [...prepend, env.PATH].filter(p => p != null && p !== '').join(delimiter)
    return env
  }

  /** A line of our own in the harness log, so a reader sees starts and exits between its output. */
  private note(text: string, ours = true): void {
    try {
      appendFileSync(this.logFile, `[${new Date().toISOString()}] ${ours ? 'agentd: ' : ''}${text}\n`)
    } catch (err) {
      this.log.warn({ err, logFile: this.logFile }, 'cannot write the harness log')
    }
  }

  private safely(hook: () => void): void {
    try {
      hook()
    } catch (err) {
      this.log.warn({ err }, 'harness supervisor hook failed')
    }
  }
}

// The harness leads its own process group (detached), so -pid reaches all of
// it. No fallback to the bare pid: once the group leader is reaped, that pid may
// belong to someone else.
function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal)
  } catch {
    /* the group is gone */
  }
}

function logSize(file: string): number {
  try {
    return statSync(file).size
  } catch {
    return 0
  }
}

function brief(arg: string): string {
  const oneLine = arg.replace(/\s+/g, ' ')
  const short = oneLine.length > 60 ? `${oneLine.slice(0, 57)}...` : oneLine
  return /[\s'"]/.test(short) || short === '' ? JSON.stringify(short) : short
}
