// Runs the agent's harness beside the daemon: writes its MCP configuration,
// starts it in the agent's workspace with the shared prompt, and restarts it
// when it exits, until the goal is met or the agent is stopped. A harness named
// acp:<agent> runs in ACP mode instead of print mode: one persistent session
// per run, driven by agentd (acp-harness.ts), under the same supervisor.
//
// Leases follow the agent: a harness stopped with `agency stop`, or one whose
// runs keep failing (an expired login, a used-up quota, a missing binary),
// gives its claims back with a hand-off note saying why, and a failing one
// backs off to a long interval instead of restarting every few seconds.
import { mkdir } from 'node:fs/promises'
import { readFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { harnessLaunch, harnessLogPath } from '../harness/index.js'
import { renderPrompt } from '../harness/prompt.js'
import { HarnessSupervisor, type HarnessExit } from '../harness/supervisor.js'
import { shellQuote } from '../harness/command-line.js'
import { compiledModulePath } from '../harness/package-paths.js'
import { checkLaunchCommand } from '../harness/command-check.js'
import { acpAgentLaunch, isAcpHarness } from '../harness/acp/acp-agents.js'
import { parsePermissionPolicy } from '../harness/acp/permission-policy.js'
import { acpHarness, type AcpHost } from './acp-harness.js'
import { HARNESS_POLICY_DEFAULTS, type HarnessPolicy } from '../harness/policy.js'
import type { HarnessInfo } from '../gen/agency/v1/api.js'
import type { ConfinedHarness, Sandbox } from '../sandbox/index.js'
import { readRunReport, type RunReport } from '../harness/usage/index.js'
import type { SpendService } from './spend-service.js'
import type { Metrics } from '../metrics/metrics.js'
import type { Logger } from '../logger.js'

export function agencyBinCommand(): string {
  return `${shellQuote(process.execPath)} ${shellQuote(compiledModulePath('cli/agency.js'))}`
}

export type HarnessState = 'running' | 'backing_off' | 'held' | 'failing' | 'stopped' | 'finished' | 'idle'

export const HARNESS_STATES: readonly HarnessState[] = ['idle', 'running', 'backing_off', 'held', 'failing', 'stopped', 'finished']

/** The restart backoff of the agent's harness: doubling from the min with each quick exit in a row, up to the max. */
export const HARNESS_MIN_BACKOFF_MS = 1000
export const HARNESS_MAX_BACKOFF_MS = 30_000

/** What the harness needs of the daemon beside it. */
export interface HarnessHost {
  peerId: string
  name: string
  dataDir: string
  /** the API token the agent (and its MCP server) must carry, if any */
  apiToken?: string
  /** what the harness runs in; none: as it is */
  sandbox?: Sandbox
  /** the agent's workspace; '' when the daemon has no shared repository */
  workspace: () => string
  goalMet: () => boolean
  /** an operator paused the swarm: no harness run starts */
  paused?: () => boolean
  /** the tasks the daemon holds */
  held: () => Array<{ task: string }>
  /** gives a held task back with a hand-off note (its work pushed first) */
  release: (task: string, note: string) => Promise<unknown>
  metrics: Pick<Metrics, 'harnessRestarts' | 'harnessFailures' | 'harnessRunTimeouts'>
  log: Logger
  /** what an acp:<agent> harness's session is fed from and reports to */
  acp: AcpHost
  /** the swarm's spend: the gate before each run, each run's usage written, a provider's limit announced */
  spend?: Pick<SpendService, 'gate' | 'recordRun' | 'onChange'>
}

export class HarnessService {
  private supervisor?: HarnessSupervisor
  private readonly daemon: HarnessHost
  private readonly changeListeners = new Set<() => void>()
  readonly name: string
  private readonly policy: HarnessPolicy
  /** monotonic times of failed runs within the window */
  private failures: number[] = []
  private failing = false
  private note = ''
  private box?: ConfinedHarness

  constructor(daemon: HarnessHost, name: string, policy: Partial<HarnessPolicy> = {}) {
    this.daemon = daemon
    this.name = name
    this.policy = { ...HARNESS_POLICY_DEFAULTS, ...policy }
  }

  private goalMet(): boolean {
    return this.daemon.goalMet()
  }

  /** Calls back when the harness state changes (peers see it in heartbeats); returns the unsubscribe function. */
  onChange(listener: () => void): () => void {
    this.changeListeners.add(listener)
    return () => {
      this.changeListeners.delete(listener)
    }
  }

  /** The state heartbeats carry: '' until the harness has started. */
  heartbeatState(): string {
    return this.supervisor == null ? '' : this.state()
  }

  async start(grpcAddress: string): Promise<void> {
    const d = this.daemon
    const workspace = d.workspace() !== '' ? d.workspace() : join(d.dataDir, 'work')
    await mkdir(workspace, { recursive: true })
    const ctx = {
      agentId: d.peerId,
      agentName: d.name,
      workspace,
      dataDir: d.dataDir,
      agencyAddr: grpcAddress,
      prompt: renderPrompt({ agentId: d.peerId, agentName: d.name, agencyAddr: grpcAddress }),
      agencyBin: agencyBinCommand(),
      confined: d.sandbox != null && d.sandbox.kind !== 'none'
    }
    const acp = isAcpHarness(this.name)
    const agent = acp ? acpAgentLaunch(this.name, ctx, d.apiToken) : undefined
    const launch = agent?.launch ?? harnessLaunch(this.name, ctx)
    // ACP mode checks before each start: a missing agent is a failed run, and the daemon keeps serving.
    if (!acp) checkLaunchCommand(launch)
    // The agent (and the MCP server it starts) must be able to call the daemon.
    if (d.apiToken != null) launch.env.AGENCY_TOKEN = d.apiToken
    this.box = await d.sandbox?.confineHarness(launch, { harness: this.name, apiAddress: grpcAddress, logFile: harnessLogPath(d.dataDir) })
    this.supervisor = new HarnessSupervisor({
      launch: this.box?.launch ?? launch,
      dataDir: d.dataDir,
      minBackoffMs: HARNESS_MIN_BACKOFF_MS,
      maxBackoffMs: HARNESS_MAX_BACKOFF_MS,
      // An ACP session lasts many turns: its timeout is for silence, kept by the session itself.
      runTimeoutMs: acp ? 0 : this.policy.runTimeoutMs,
      ...(agent != null
        ? acpHarness(d.acp, {
            name: this.name,
            agent,
            workspace,
            prompt: ctx.prompt,
            policy: parsePermissionPolicy(d.acp.permissions),
            idleTimeoutMs: this.policy.runTimeoutMs
          })
        : {}),
      shouldContinue: () => !this.goalMet(),
      paused: () => this.daemon.paused?.() ?? false,
      // held while the budget is reached or this agent's provider account is limited: no run starts, none fails
      startGate: () => d.spend?.gate() ?? null,
      nextDelayMs: (exit, backoffMs) => this.afterExit(exit, backoffMs),
      // Peers see the harness state in heartbeats: a change goes out at once.
      onRestart: () => {
        d.metrics.harnessRestarts.inc()
        this.beat()
      },
      onExit: () => {
        this.beat()
      }
    })
    // a raised budget or a lifted hold is tried at once
    d.spend?.onChange(() => {
      this.supervisor?.wake()
    })
    await this.supervisor.start()
    d.log.info({ harness: this.name, workspace }, 'harness started')
  }

  /** The operator resumed the swarm: a run held by the pause starts. */
  resume(): void {
    this.supervisor?.resume()
  }

  /** Counts a failed run; at maxFailures within the window the claims go back and the harness backs off long. */
  private afterExit(exit: HarnessExit, backoffMs: number): number {
    const d = this.daemon
    if (exit.timedOut) d.metrics.harnessRunTimeouts.inc()
    // What the run spent goes into the log; a run that ended on a provider's limit is not the harness failing.
    const report = this.runReport(exit)
    if (report != null && d.spend != null) {
      d.spend.recordRun(report, exit.runMs, this.name).catch(err => {
        d.log.warn({ err }, "cannot record the run's usage")
      })
    }
    if (report?.limit != null && exit.error == null) {
      this.note = `the provider limited the last run (${report.limit.kind}): ${report.limit.message}`
      return backoffMs
    }
    // A run agentd ended itself on purpose (an ACP session whose goal is met) did not fail, whatever its exit.
    const failed = exit.failure != null || exit.error != null || exit.timedOut || (exit.code !== 0 && exit.endedBy == null)
    if (!failed) {
      this.failures = []
      this.failing = false
      this.note = ''
      return backoffMs
    }
    d.metrics.harnessFailures.inc()
    const now = performance.now()
    this.failures = [...this.failures.filter(t => now - t < this.policy.failureWindowMs), now]
    const why =
      exit.failure != null
        ? exit.failure
        : exit.error != null
          ? `it could not start: ${exit.error.message}`
          : exit.timedOut
            ? `a run hung past ${Math.round(this.policy.runTimeoutMs / 60_000)} min`
            : `it exited with ${exit.code != null ? `code ${exit.code}` : `signal ${String(exit.signal)}`}`
    if (this.failures.length < this.policy.maxFailures) {
      this.note = `last run failed: ${why}`
      return backoffMs
    }
    this.failing = true
    this.note = `${this.failures.length} failed runs within ${Math.round(this.policy.failureWindowMs / 60_000)} min (${why}); next try in ${Math.round(this.policy.failingBackoffMs / 60_000)} min. See ${harnessLogPath(d.dataDir)}`
    this.giveBackClaims(`the agent's harness (${this.name}) keeps failing: ${why}. Last output: ${lastOutput(d.dataDir)}`)
    return Math.max(backoffMs, this.policy.failingBackoffMs)
  }

  /** What the run reported of its usage and limits (print mode; an ACP session reports per turn). */
  private runReport(exit: HarnessExit): RunReport | undefined {
    if (isAcpHarness(this.name) || exit.error != null) return undefined
    try {
      const now = Date.now()
      // Codex keeps its sessions in its home: in a box, the box's own.
      const codexHome = this.daemon.sandbox?.homePath(process.env.CODEX_HOME ?? join(homedir(), '.codex'))
      return readRunReport({
        harness: this.name,
        harnessLog: harnessLogPath(this.daemon.dataDir),
        harnessDir: join(this.daemon.dataDir, 'harness'),
        outputFrom: exit.outputFrom,
        startedAt: now - exit.runMs - 1000,
        now,
        codexHome
      })
    } catch (err) {
      this.daemon.log.warn({ err }, "cannot read the run's report back")
      return undefined
    }
  }

  private giveBackClaims(note: string): void {
    const d = this.daemon
    for (const h of d.held()) {
      d.release(h.task, note.slice(0, 4000)).catch(err => {
        d.log.warn({ err, task: h.task }, 'cannot release a claim of a failing harness')
      })
    }
  }

  info(): HarnessInfo {
    const hold = this.supervisor?.hold
    return {
      name: this.name,
      state: this.state(),
      restarts: this.supervisor?.restarts ?? 0,
      recentFailures: this.failures.length,
      note: hold != null && this.state() === 'held' ? hold.reason : this.note,
      sandbox: this.daemon.sandbox?.kind ?? 'none'
    }
  }

  state(): HarnessState {
    const s = this.supervisor?.state ?? 'idle'
    // held: the budget is reached or the provider is limited (the start gate); not a failure
    if (s === 'waiting') return this.supervisor?.hold != null ? 'held' : this.failing ? 'failing' : 'backing_off'
    return s
  }

  /** `agency stop`: stops the harness and gives its claims back; false when none was running. */
  async stop(): Promise<boolean> {
    const stopped = await this.shutdown()
    if (stopped) {
      this.note = 'stopped with agency stop'
      this.giveBackClaims('the agent was stopped (agency stop) before finishing this task')
    }
    return stopped
  }

  /** Stops the harness and keeps its claims (the daemon is stopping: a restart carries on). */
  async shutdown(): Promise<boolean> {
    const s = this.supervisor
    if (s == null || s.state === 'stopped' || s.state === 'finished') {
      await this.box?.stop()
      return false
    }
    await s.stop()
    await this.box?.stop()
    this.beat()
    return true
  }

  // After the exit hook returns: the supervisor sets its next state right after calling it.
  private beat(): void {
    setImmediate(() => {
      for (const l of this.changeListeners) l()
    })
  }
}

/** The end of the harness log, for a hand-off note: what the failure looked like. */
function lastOutput(dataDir: string): string {
  try {
    const text = readFileSync(harnessLogPath(dataDir), 'utf8')
    return text
      .slice(-600)
      .split('\n')
      .filter(l => l.trim() !== '')
      .slice(-5)
      .join(' | ')
  } catch {
    return '(no harness log)'
  }
}
