// Runs the agent's harness beside the daemon: writes its MCP configuration,
// starts it in the agent's workspace with the shared prompt, and restarts it
// when it exits, until the goal's tests pass or the agent is stopped.
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { harnessLaunch } from '../harness/index.js'
import { renderPrompt } from '../harness/prompt.js'
import { HarnessSupervisor } from '../harness/supervisor.js'
import { shellQuote } from '../harness/command-line.js'
import { compiledModulePath } from '../harness/package-paths.js'
import type { Daemon } from './daemon.js'

export function agencyBinCommand (): string {
  return `${shellQuote(process.execPath)} ${shellQuote(compiledModulePath('cli/agency.js'))}`
}

export class HarnessService {
  private supervisor?: HarnessSupervisor
  private readonly daemon: Daemon
  private readonly name: string

  constructor (daemon: Daemon, name: string) {
    this.daemon = daemon
    this.name = name
  }

  /** The goal counts as met when the latest run on the shared branch passes every test. */
  private goalMet (): boolean {
    const t = this.daemon.testSummary()
    return t != null && t.total > 0 && t.passed === t.total
  }

  async start (grpcAddress: string): Promise<void> {
    const d = this.daemon
    const workspace = d.workspacePath() !== '' ? d.workspacePath() : join(d.config.dataDir, 'work')
    await mkdir(workspace, { recursive: true })
    const launch = harnessLaunch(this.name, {
      agentId: d.peerId,
      agentName: d.name,
      workspace,
      dataDir: d.config.dataDir,
      agencyAddr: grpcAddress,
      prompt: renderPrompt({ agentId: d.peerId, agentName: d.name, agencyAddr: grpcAddress }),
      agencyBin: agencyBinCommand()
    })
    // The agent (and the MCP server it starts) must be able to call the daemon.
    if (d.config.apiToken != null) launch.env.AGENCY_TOKEN = d.config.apiToken
    this.supervisor = new HarnessSupervisor({
      launch,
      dataDir: d.config.dataDir,
      minBackoffMs: 1000,
      maxBackoffMs: 30_000,
      shouldContinue: () => !this.goalMet(),
      onRestart: () => { d.metrics.harnessRestarts.inc() }
    })
    await this.supervisor.start()
    d.log.info({ harness: this.name, workspace }, 'harness started')
  }

  /** Stops the harness; false when none was running. */
  async stop (): Promise<boolean> {
    const s = this.supervisor
    if (s == null || s.state === 'stopped' || s.state === 'finished') return false
    await s.stop()
    return true
  }
}
