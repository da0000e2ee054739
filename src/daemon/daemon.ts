// agentd's lifecycle: start() has the wiring (wiring.ts) build the parts and
// starts them in the one order it gives; stop() stops them in reverse
// (startable.ts). Nothing of the domain lives here: the agent's work is
// agent-work.ts, the dealings with peers peer-contact.ts. The getters below
// are how an in-process caller (agentd's serve, the tests, the benchmarks)
// reaches a part; the API and the dashboard get narrow interfaces instead.
import { mkdir } from 'node:fs/promises'
import { performance } from 'node:perf_hooks'
import type { AgencyStore, InboxRecord } from '../store/index.js'
import type { MeshLibp2p } from '../mesh/node.js'
import type { SwarmGossip } from '../mesh/swarm-gossip.js'
import type { DirectMessaging } from '../mesh/direct-messages.js'
import type { PeerDialer } from '../mesh/peer-dialer.js'
import type { RoundTripProbe } from '../mesh/round-trips.js'
import type { PeerGuard } from '../mesh/peer-guard.js'
import type { Signer } from '../core/log/crypto.js'
import { FailedPreconditionError } from '../core/errors.js'
import type { NewTask, TaskView } from '../core/board/index.js'
import type { AssistReply, TestRunSummary } from '../gen/agency/v1/api.js'
import type { Metrics } from '../metrics/metrics.js'
import { componentLogger, type Logger } from '../logger.js'
import { EventBus } from './event-bus.js'
import type { Identity } from './identity.js'
import type { PresenceService } from './presence-service.js'
import type { LogService } from './log-service.js'
import type { BoardService, ClaimAnswer, NextClaimAnswer } from './board-service.js'
import type { RepoService } from './repo-service.js'
import type { AssistService } from './assist-service.js'
import type { HandoffService } from './handoff-service.js'
import type { AgentInbox, InboxItem } from './agent-inbox.js'
import type { NoticeWriter } from './notice-writer.js'
import type { OutgoingMessage } from './message-outbox.js'
import type { HarnessService } from './harness-service.js'
import type { SpendService } from './spend-service.js'
import type { WaitAnswer } from './work-wait.js'
import type { AgentWork, WorkspaceAnswer } from './agent-work.js'
import type { PeerContact, PeerView } from './peer-contact.js'
import type { OperatorService } from './operator-service.js'
import { resolveConfig, type DaemonConfig } from './config.js'
import { StartPhases } from './start-phases.js'
import { startParts, stopParts } from './startable.js'
import { wireDaemon, type BuiltParts } from './wiring.js'

export type { PeerView } from './peer-contact.js'

/** What a daemon may be given instead of building it: tests give a clock that is off. */
export interface DaemonParts {
  wallClock?: () => number
}

export class Daemon {
  readonly config: DaemonConfig
  readonly events = new EventBus()
  readonly log: Logger
  /** this machine's wall clock: the time entries, heartbeats and messages carry (informational to peers) */
  private readonly wallClock: () => number
  private built?: BuiltParts
  private readonly fatalListeners = new Set<(err: Error) => void>()
  private startedAt = 0
  private stopping?: Promise<void>
  /** how long each phase of the last start took (start-phases.ts) */
  startPhases = new StartPhases()

  constructor(config: Partial<DaemonConfig> & { dataDir: string }, parts: DaemonParts = {}) {
    this.config = resolveConfig(config)
    this.wallClock = parts.wallClock ?? Date.now
    this.log = componentLogger('agentd', { name: this.config.name })
  }

  private part<K extends keyof BuiltParts>(key: K): NonNullable<BuiltParts[K]> {
    const p = this.built?.[key]
    if (p == null) throw new FailedPreconditionError('the daemon is not started')
    return p
  }

  get metrics(): Metrics {
    return this.part('metrics')
  }
  get store(): AgencyStore {
    return this.part('store')
  }
  get identity(): Identity {
    return this.part('identity')
  }
  get signer(): Signer {
    return this.part('signer')
  }
  get node(): MeshLibp2p {
    return this.part('node')
  }
  get gossip(): SwarmGossip {
    return this.part('gossip')
  }
  get presence(): PresenceService {
    return this.part('presence')
  }
  get messaging(): DirectMessaging {
    return this.part('messaging')
  }
  get dialer(): PeerDialer {
    return this.part('dialer')
  }
  get roundTrips(): RoundTripProbe {
    return this.part('roundTrips')
  }
  get guard(): PeerGuard {
    return this.part('guard')
  }
  get logService(): LogService {
    return this.part('logService')
  }
  get boardService(): BoardService {
    return this.part('boardService')
  }
  get repoService(): RepoService | undefined {
    return this.built?.repoService
  }
  get assists(): AssistService {
    return this.part('assists')
  }
  get handoffs(): HandoffService {
    return this.part('handoffs')
  }
  /** what turns the daemon's events and entries into the agent's notices */
  get notices(): NoticeWriter {
    return this.part('notices')
  }
  /** what the agent reads: peers' messages and this daemon's notices, with the read cursor */
  get inbox(): AgentInbox {
    return this.part('inbox')
  }
  /** the agent beside this daemon, when --harness names one; serve() starts it once the API is up */
  get harness(): HarnessService | undefined {
    return this.built?.harness
  }
  /** the agent's work: the use cases that join the board, the repository and the assists */
  get work(): AgentWork {
    return this.part('work')
  }
  /** peers, the status line, direct messages, announcements */
  get contact(): PeerContact {
    return this.part('contact')
  }
  /** the operator's use cases (docs/operator.md) */
  get operator(): OperatorService {
    return this.part('operator')
  }

  /** the swarm's spend, its budget and this agent's rate-limit holds */
  get spend(): SpendService {
    return this.part('spend')
  }

  get peerId(): string {
    return this.identity.peerId
  }
  get name(): string {
    return this.part('name')
  }

  /**
   * Calls back when the daemon cannot go on (its data dir stopped taking
   * writes): agentd stops and exits non-zero. The error is logged either way.
   * Returns the unsubscribe function.
   */
  onFatalError(listener: (err: Error) => void): () => void {
    this.fatalListeners.add(listener)
    return () => {
      this.fatalListeners.delete(listener)
    }
  }

  private fatal(err: Error): void {
    this.log.error({ err }, 'fatal: the daemon cannot go on')
    for (const l of this.fatalListeners) l(err)
  }

  async start(): Promise<void> {
    this.startedAt = performance.now()
    const phases = (this.startPhases = new StartPhases())
    await mkdir(this.config.dataDir, { recursive: true, mode: 0o700 }).catch(() => {})
    this.built = await wireDaemon({
      config: this.config,
      events: this.events,
      log: this.log,
      wallClock: this.wallClock,
      phases,
      onFatal: err => {
        this.fatal(err)
      }
    })
    phases.mark('parts')
    try {
      await startParts(this.built.order, name => {
        phases.mark(name)
      })
      this.log.info({ peerId: this.peerId, addrs: this.listenAddrs() }, 'agentd started')
    } catch (err) {
      await this.stop().catch(() => {})
      throw err
    }
  }

  async stop(): Promise<void> {
    this.stopping ??= this.shutdown()
    await this.stopping
  }

  private async shutdown(): Promise<void> {
    if (this.built === undefined) return
    await stopParts(this.built.order, (name, err) => {
      this.log.warn({ err, part: name }, 'a part failed to stop')
    })
    this.log.info('agentd stopped')
  }

  uptimeSeconds(): number {
    return (performance.now() - this.startedAt) / 1000
  }

  // ---- one-line forwards to work and contact, for in-process callers ----

  listenAddrs(): string[] {
    return this.contact.listenAddrs()
  }
  testSummary(): TestRunSummary | undefined {
    return this.work.testSummary()
  }
  workspacePath(): string {
    return this.work.workspacePath()
  }
  repo(): RepoService {
    return this.work.repo()
  }
  async claimTask(task: string, scope: string[], noWait: boolean, o: { fromAssist?: string } = {}): Promise<ClaimAnswer & WorkspaceAnswer> {
    return await this.work.claim(task, scope, noWait, o)
  }
  async claimNextTask(scope: string[]): Promise<NextClaimAnswer & WorkspaceAnswer & { assist?: AssistReply }> {
    return await this.work.claimNext(scope)
  }
  async assist(req: { task: string; approach: string; stop: string }): Promise<AssistReply> {
    return await this.work.assist(req)
  }
  async releaseTask(task: string, note: string, branch: string): Promise<TaskView> {
    return await this.work.release(task, note, branch)
  }
  async doneTask(task: string, commit: string, paths: string[], noChange: string): Promise<TaskView> {
    return await this.work.done(task, commit, paths, noChange)
  }
  async addTasks(tasks: NewTask[]): Promise<TaskView[]> {
    return await this.work.addTasks(tasks)
  }
  goalMet(): boolean {
    return this.work.goalMet()
  }
  async waitForWork(timeoutMs: number, signal?: AbortSignal): Promise<WaitAnswer> {
    return await this.work.waitForWork(timeoutMs, signal)
  }
  async readAgentInbox(o: { after?: number; limit?: number; all?: boolean; peek?: boolean }): Promise<InboxItem[]> {
    return await this.work.readInbox(o)
  }
  peers(includeOffline = true): PeerView[] {
    return this.contact.peers(includeOffline)
  }
  selfView(): PeerView {
    return this.contact.selfView()
  }
  async setStatusLine(status: string): Promise<void> {
    await this.contact.setStatusLine(status)
  }
  async sendMessage(req: OutgoingMessage): Promise<{ id: string; to: string; thread: string }> {
    return await this.contact.sendMessage(req)
  }
  async readInbox(after: number, limit: number): Promise<InboxRecord[]> {
    return await this.contact.readMessages(after, limit)
  }
  async announce(text: string): Promise<string> {
    return await this.contact.announce(text)
  }
  /** Calls back whenever a new inbox item is stored; returns the unsubscribe function. */
  onInbox(listener: (cursor: number) => void): () => void {
    return this.part('onInbox')(listener)
  }
}
