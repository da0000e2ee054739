// agentd: composes the store, the libp2p mesh, presence, direct messages and
// announcements (and, as they land, the log, the board and the repository)
// behind one object that the gRPC API and the tests drive.
import { randomUUID } from 'node:crypto'
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { EventEmitter } from 'node:events'
import { openStore, type AgencyStore, type InboxRecord } from '../store/index.js'
import { createMeshNode, type MeshLibp2p } from '../mesh/node.js'
import { SwarmGossip } from '../mesh/swarm-gossip.js'
import { DirectMessaging, utf8Length } from '../mesh/direct-messages.js'
import { PeerDialer } from '../mesh/peer-dialer.js'
import { RoundTripProbe } from '../mesh/round-trips.js'
import { PeerGuard } from '../mesh/peer-guard.js'
import { peerIdFromString } from '@libp2p/peer-id'
import { MAX_ANNOUNCE_TEXT_BYTES, MAX_DM_TEXT_BYTES } from '../mesh/constants.js'
import { createSigner, type Signer } from '../core/log/crypto.js'
import { signAnnouncement, verifyAnnouncement } from '../core/presence/signed-messages.js'
import { AgencyError, FailedPreconditionError, InvalidArgumentError, NotFoundError, TooLargeError } from '../core/errors.js'
import type { PeerRecord } from '../core/presence/peer-directory.js'
import type { Announcement, DirectMessage } from '../gen/agency/v1/wire.js'
import type { TestRunSummary } from '../gen/agency/v1/api.js'
import { createMetrics, LABEL_VALUES, type Metrics } from '../metrics/metrics.js'
import { createLibp2pMetrics } from '../metrics/libp2p-metrics.js'
import { componentLogger, type Logger } from '../logger.js'
import { EventBus } from './event-bus.js'
import { loadOrCreateIdentity, type Identity } from './identity.js'
import { PresenceService } from './presence-service.js'
import { LogService } from './log-service.js'
import { BoardService } from './board-service.js'
import { RepoService } from './repo-service.js'
import { AgentInbox, type InboxItem } from './agent-inbox.js'
import { NoticeWriter } from './notice-writer.js'
import { HARNESS_STATES, HarnessService } from './harness-service.js'
import { waitForWork, type WaitAnswer } from './work-wait.js'
import { PLAN_TASK_ID, TASK_STATES, type NewTask, type TaskView } from '../core/board/index.js'
import type { ClaimAnswer } from './board-service.js'
import { resolveConfig, type DaemonConfig } from './config.js'
import { VERSION } from '../version.js'

export interface PeerView {
  peerId: string
  name: string
  status: string
  live: boolean
  connected: boolean
  lastSeenMsAgo: number
  addrs: string[]
  claims: Array<{ task: string, epoch: number }>
}

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
  /**
   * Called when the daemon cannot go on (its data dir stopped taking writes).
   * agentd stops and exits non-zero; by default the error is only logged.
   */
  onFatal: (err: Error) => void = err => { this.log.error({ err }, 'fatal: the daemon cannot go on') }
  metrics!: Metrics
  store!: AgencyStore
  identity!: Identity
  signer!: Signer
  node!: MeshLibp2p
  gossip!: SwarmGossip
  presence!: PresenceService
  messaging!: DirectMessaging
  dialer!: PeerDialer
  roundTrips!: RoundTripProbe
  guard!: PeerGuard
  logService!: LogService
  boardService!: BoardService
  repoService?: RepoService
  /** what the agent reads: peers' messages and this daemon's notices, with the read cursor */
  inbox!: AgentInbox
  private notices?: NoticeWriter
  /** the agent beside this daemon, when --harness names one; serve() starts it once the API is up */
  harness?: HarnessService
  private readonly inboxFeed = new EventEmitter()
  private outboxTimer?: NodeJS.Timeout
  private startedAt = 0
  private stopping?: Promise<void>

  constructor (config: Partial<DaemonConfig> & { dataDir: string }, parts: DaemonParts = {}) {
    this.config = resolveConfig(config)
    this.wallClock = parts.wallClock ?? Date.now
    this.log = componentLogger('agentd', { name: this.config.name })
    this.inboxFeed.setMaxListeners(0)
  }

  get peerId (): string { return this.identity.peerId }
  get name (): string { return this.config.name !== '' ? this.config.name : this.identity.peerId.slice(-8) }

  async start (): Promise<void> {
    this.startedAt = performance.now()
    await mkdir(this.config.dataDir, { recursive: true, mode: 0o700 }).catch(() => {})
    // The store first: its lock refuses a second daemon on the same data dir
    // before anything else is touched.
    this.store = await openStore(this.config.dataDir)
    try {
      this.identity = await loadOrCreateIdentity(this.config.dataDir)
      this.signer = createSigner(this.identity.peerId, this.identity.privateKey.raw)
      this.metrics = createMetrics({ version: VERSION, swarm: this.config.swarm, processMetrics: this.config.processMetrics })
      this.guard = new PeerGuard({
        allowPeers: this.config.allowPeers,
        onBan: (peer, reason) => {
          this.metrics.peerBans.inc()
          this.log.warn({ peer, reason }, 'banned a peer for a while: it kept sending invalid data')
        },
        onLimited: (_peer, protocol) => { this.metrics.rateLimited.inc({ protocol }) }
      })
      try {
        this.node = await createMeshNode({
          privateKey: this.identity.privateKey,
          listen: this.config.listen,
          announce: this.config.announce,
          swarmKey: this.config.swarmKey,
          guard: this.guard,
          // libp2p's metrics component keeps a module-wide table: only one node per process may use it.
          metrics: this.config.processMetrics ? createLibp2pMetrics(this.metrics.registry) : undefined
        })
      } catch (err) {
        throw new AgencyError('FAILED_PRECONDITION', `cannot start the libp2p node: ${(err as Error).message}`, { cause: err })
      }
      this.guard.disconnect = peer => { this.node.hangUp(peerIdFromString(peer)).catch(() => {}) }
      this.presence = new PresenceService({
        signer: this.signer,
        name: this.name,
        heartbeatMs: this.config.heartbeatMs,
        heartbeatMaxRate: this.config.heartbeatMaxRate,
        liveTimeoutMs: this.config.liveTimeoutMs,
        addrs: () => this.listenAddrs(),
        heldClaims: () => this.boardService.held().map(h => ({ task: h.task, epoch: h.epoch })),
        onJoined: p => { this.onPeerJoined(p) },
        onLeft: p => { this.onPeerLeft(p) },
        onHeartbeat: (p, heartbeat) => {
          this.dialer.remember(p.peerId, p.addrs)
          this.boardService?.heard(p.peerId, heartbeat.intervalMs)
        },
        wallClock: this.wallClock
      })
      this.gossip = new SwarmGossip(this.node, this.config.swarm, {
        onEntry: async (bytes, from) => await this.logService.receiveGossip(bytes, from),
        onPresence: (p, from) => this.presence.receive(p, from),
        onAnnouncement: (a) => this.receiveAnnouncement(a),
        onForkProof: async (p, from) => await this.logService.receiveForkProof(p, from),
        onPublished: (kind) => { this.metrics.gossipOut.inc({ kind }) },
        onJudged: (kind, verdict, from) => {
          this.metrics.gossipIn.inc({ kind, verdict })
          if (verdict === 'reject') this.guard.strike(from, `invalid gossip (${kind})`)
        }
      }, this.log.child({ part: 'gossip' }))
      this.messaging = new DirectMessaging({
        node: this.node,
        now: this.wallClock,
        store: this.store.messages,
        guard: this.guard,
        log: this.log.child({ part: 'dm' }),
        hooks: {
          onReceived: (msg, cursor) => { this.onMessageReceived(msg, cursor) },
          onDelivered: (_msg, latencyMs) => { this.metrics.dmSent.inc(); this.metrics.dmLatency.observe(latencyMs / 1000) },
          onFailed: (msg, reason) => {
            this.metrics.dmFailed.inc({ reason: reason.startsWith('refused') ? 'refused' : 'expired' })
            this.events.emit({ type: 'message_failed', peerId: msg.to, text: msg.text, detail: { id: msg.id, reason } })
          },
          onMalformed: (peer, reason) => {
            this.metrics.dmMalformed.inc()
            this.log.info({ peer, reason }, 'closed a malformed direct-message stream')
          }
        }
      })
      this.logService = new LogService({
        store: this.store,
        signer: this.signer,
        node: this.node,
        metrics: this.metrics,
        events: this.events,
        logger: this.log.child({ part: 'log' }),
        syncIntervalMs: this.config.syncIntervalMs,
        guard: this.guard,
        onStorageFailure: err => { this.onFatal(err) },
        // A new identity has signed nothing anyone could hold.
        ownHeadWaitMs: this.identity.created ? 0 : this.config.ownHeadWaitMs,
        hasBootstrapPeers: this.config.peers.length > 0,
        wallClock: this.wallClock
      })
      await this.logService.restore()
      this.boardService = new BoardService({
        me: this.identity.peerId,
        log: this.logService,
        events: this.events,
        state: this.store.state,
        logger: this.log.child({ part: 'board' }),
        heartbeats: this.presence.policy,
        // The start-up grace lasts the lease of a swarm of the size the log shows.
        knownPeers: () => this.logService.state.authorCount - 1,
        notify: async (peer, text) => { await this.sendMessage({ to: peer, text }) },
        onHeldChanged: () => { this.presence.beat().catch(() => {}) },
        settle: this.config.settle,
        metrics: {
          claimsLost: () => { this.metrics.claimsLost.inc() },
          claimConflicts: () => { this.metrics.claimConflicts.inc() },
          takeovers: () => { this.metrics.takeovers.inc() }
        }
      })
      await this.boardService.start()
      // A forked author's entries from its fork point on count for nothing, on every replica alike.
      this.logService.onFault((author, fromSeq) => { this.boardService.board.markFaulty(author, fromSeq) })
      if (this.config.repo != null) {
        const r = this.config.repo
        this.repoService = new RepoService({
          config: { remote: r.remote, branch: r.branch, workdir: r.workdir ?? join(this.config.dataDir, 'workspace'), verify: r.verify, mirrorDir: r.mirrorDir, wipPushMs: r.wipPushMs },
          me: this.identity.peerId,
          name: this.name,
          board: this.boardService,
          log: this.logService,
          metrics: this.metrics,
          logger: this.log.child({ part: 'repo' }),
          notify: async (peer, text) => { await this.sendMessage({ to: peer, text }) }
        })
        await this.repoService.start()
      }
      this.inbox = new AgentInbox({ me: this.identity.peerId, messages: this.store.messages, state: this.store.state, onStored: cursor => { this.inboxFeed.emit('message', cursor) } })
      await this.inbox.start()
      this.notices = new NoticeWriter({
        me: this.identity.peerId,
        name: () => this.name,
        inbox: this.inbox,
        events: this.events,
        log: this.logService,
        logger: this.log.child({ part: 'notices' }),
        currentGoalId: () => this.boardService.board.goal()?.entryId
      })
      this.notices.start()
      if (this.config.harness != null) this.harness = new HarnessService(this, this.config.harness, this.config.harnessPolicy)
      this.dialer = new PeerDialer({ node: this.node, bootstrap: this.config.peers, log: this.log.child({ part: 'dialer' }) })
      // Round trips to peers, on this machine's own clock, set the claim settle window.
      this.roundTrips = new RoundTripProbe({
        node: this.node,
        intervalMs: () => this.presence.intervalMs(),
        onSample: (_peer, ms) => { this.boardService.observeRoundTrip(ms) },
        logger: this.log.child({ part: 'ping' })
      })
      this.registerGauges()

      await this.node.start()
      await this.messaging.start()
      this.gossip.start()
      await this.logService.start(this.gossip)
      this.presence.start(this.gossip)
      this.dialer.start()
      this.roundTrips.start()
      this.node.addEventListener('peer:connect', () => { this.presence.beat().catch(() => {}) })
      this.outboxTimer = setInterval(() => { this.messaging.flushAll().catch(() => {}) }, this.config.dmRetryMs)
      this.log.info({ peerId: this.peerId, addrs: this.listenAddrs() }, 'agentd started')
    } catch (err) {
      await this.stop().catch(() => {})
      throw err
    }
  }

  async stop (): Promise<void> {
    this.stopping ??= this.shutdown()
    await this.stopping
  }

  private async shutdown (): Promise<void> {
    await this.harness?.shutdown().catch(err => { this.log.warn({ err }, 'harness stop failed') })
    this.notices?.stop()
    this.boardService?.stop()
    this.repoService?.stop()
    clearInterval(this.outboxTimer)
    this.roundTrips?.stop()
    this.dialer?.stop()
    this.presence?.stop()
    try { this.gossip?.stop() } catch { /* not started */ }
    await this.messaging?.stop().catch(() => {})
    await this.logService?.stop().catch(() => {})
    try { await this.node?.stop() } catch (err) { this.log.warn({ err }, 'libp2p stop failed') }
    await this.store?.close()
    this.log.info('agentd stopped')
  }

  private registerGauges (): void {
    const m = this.metrics
    const collect = (): void => {
      m.peersConnected.set(this.node.getPeers().length)
      m.peersLive.set(this.presence.livePeers().length)
      const state = this.logService.state
      m.logSize.reset()
      for (const kind of LABEL_VALUES.entryKind) m.logSize.set({ kind }, 0)
      for (const [kind, n] of state.countsByKind()) m.logSize.set({ kind }, n)
      m.logAuthors.set(state.authors().length)
      m.logPending.set(state.pendingCount)
      m.logForks.set(state.forks.length)
      m.secondsSinceSync.set(this.logService.secondsSinceSync())
      m.claimsHeld.set(this.boardService.held().length)
      const tests = this.testSummary()
      m.sharedTests.set({ result: 'passed' }, tests?.passed ?? 0)
      m.sharedTests.set({ result: 'failed' }, tests?.failed ?? 0)
      m.sharedTests.set({ result: 'all' }, tests?.total ?? 0)
      m.sharedPassRatio.set(tests?.passRate ?? 0)
      for (const state of TASK_STATES) m.tasksByState.set({ state }, 0)
      for (const t of this.boardService.board.tasks(performance.now())) m.tasksByState.inc({ state: t.state })
      if (this.harness != null) {
        const current = this.harness.state()
        for (const state of HARNESS_STATES) m.harnessState.set({ state }, state === current ? 1 : 0)
      }
    }
    // Refresh the scrape-time gauges on every scrape.
    const original = m.registry.metrics.bind(m.registry)
    m.registry.metrics = async () => { collect(); m.outboxPending.set(await this.store.messages.outboxCount()); return await original() }
  }

  listenAddrs (): string[] {
    return this.node.getMultiaddrs().map(a => a.toString())
  }

  /** The shared branch's latest test run and pass rate, from the board. */
  testSummary (): TestRunSummary | undefined {
    const runs = this.boardService.board.testRuns()
    const last = runs.at(-1)
    if (last == null) return undefined
    return { commit: last.commit, passed: last.passed, failed: last.failed, total: last.total, passRate: last.total > 0 ? last.passed / last.total : 0, time: last.time, runs: runs.length }
  }

  workspacePath (): string {
    return this.repoService?.workspace.dir ?? ''
  }

  /** The repository part, or a clear error when this daemon runs without --repo. */
  repo (): RepoService {
    if (this.repoService == null) throw new FailedPreconditionError('this agentd has no shared repository: start it with --repo <git url or path>')
    return this.repoService
  }

  uptimeSeconds (): number {
    return (performance.now() - this.startedAt) / 1000
  }

  // ---- the agent's work: the board and the workspace together ----

  /**
   * Claims a task; on HELD the workspace is put on the task branch (from the
   * previous holder's pushed work on a takeover), so the agent only commits.
   */
  async claimTask (task: string, scope: string[], noWait: boolean): Promise<ClaimAnswer & { taskBranch: string, workspace: string }> {
    const a = await this.boardService.claim(task, scope, noWait)
    if (a.outcome !== 'HELD' || this.repoService == null || task === PLAN_TASK_ID) return { ...a, taskBranch: '', workspace: '' }
    const start = await this.repoService.startTask(task, a.branch)
    return { ...a, taskBranch: start.branch, workspace: start.note }
  }

  /** Releases a task; the work so far goes to the task's wip ref first, for whoever takes it next. */
  async releaseTask (task: string, note: string, branch: string): Promise<TaskView> {
    this.boardService.board.checkReleasable(task, this.peerId)
    const saved = branch === '' && this.repoService != null ? await this.repoService.saveWork(task) : ''
    return await this.boardService.release(task, note, branch !== '' ? branch : saved)
  }

  async doneTask (task: string, commit: string, paths: string[], noChange: string): Promise<TaskView> {
    return await this.boardService.done(task, commit, paths, noChange)
  }

  async addTasks (tasks: NewTask[]): Promise<TaskView[]> {
    return await this.boardService.addTasks(tasks)
  }

  /** Whether the swarm's goal is met: every task done and the shared tests green. */
  goalMet (): boolean {
    return this.boardService.board.goalMet(this.boardService.now())
  }

  /** Blocks until there is something for the agent to do (or the time is up), and says what. */
  async waitForWork (timeoutMs: number, signal?: AbortSignal): Promise<WaitAnswer> {
    const b = this.boardService
    return await waitForWork({
      goalMet: () => this.goalMet(),
      unread: () => this.inbox.unread(),
      held: () => b.held().map(h => h.task),
      ready: () => b.board.ready(b.now()),
      onChange: listener => {
        const offLog = this.logService.onAccepted(listener)
        const offInbox = this.onInbox(listener)
        return () => { offLog(); offInbox() }
      }
    }, timeoutMs, signal)
  }

  async readAgentInbox (o: { after?: number, limit?: number, all?: boolean, peek?: boolean }): Promise<InboxItem[]> {
    return await this.inbox.read(o)
  }

  // ---- peers ----

  peers (includeOffline = true): PeerView[] {
    const now = performance.now()
    const connected = new Set(this.node.getPeers().map(p => p.toString()))
    return this.presence.directory.all()
      .map(p => this.peerView(p, now, connected))
      .filter(p => includeOffline || p.live)
      .sort((a, b) => a.name.localeCompare(b.name) || a.peerId.localeCompare(b.peerId))
  }

  selfView (): PeerView {
    const claims = this.boardService.held().map(h => ({ task: h.task, epoch: h.epoch }))
    return { peerId: this.peerId, name: this.name, status: this.presence.status, live: true, connected: true, lastSeenMsAgo: 0, addrs: this.listenAddrs(), claims }
  }

  private peerView (p: PeerRecord, now: number, connected: Set<string>): PeerView {
    return {
      peerId: p.peerId,
      name: p.name,
      status: p.status,
      live: this.presence.directory.isLive(p.peerId, now),
      connected: connected.has(p.peerId),
      lastSeenMsAgo: now - p.lastSeen,
      addrs: p.addrs,
      claims: p.claims
    }
  }

  async setStatusLine (status: string): Promise<void> {
    if (utf8Length(status) > 1024) throw new TooLargeError('status line', utf8Length(status), 1024)
    this.presence.status = status
    await this.presence.beat()
  }

  private onPeerJoined (p: PeerRecord): void {
    this.events.emit({ type: 'peer_joined', peerId: p.peerId, peerName: p.name })
    this.dialer.remember(p.peerId, p.addrs)
    this.messaging.flushPeer(p.peerId).catch(() => {})
  }

  private onPeerLeft (p: PeerRecord): void {
    this.events.emit({ type: 'peer_left', peerId: p.peerId, peerName: p.name })
  }

  // ---- direct messages ----

  async sendMessage (req: { to: string, text: string, thread?: string, replyTo?: string }): Promise<{ id: string, to: string, thread: string }> {
    const size = utf8Length(req.text)
    if (size > MAX_DM_TEXT_BYTES) throw new TooLargeError('message', size, MAX_DM_TEXT_BYTES)
    if (req.text.length === 0) throw new InvalidArgumentError('message text is empty')
    const target = req.to.trim()
    if (target === '') throw new InvalidArgumentError('no recipient: give a peer id or name')
    if (target === this.peerId || target === this.name) throw new InvalidArgumentError('cannot send a direct message to yourself')
    const peer = this.presence.directory.resolve(target)
    if (peer == null) throw new NotFoundError(`unknown peer "${target}": no peer with that id or name has been seen (see \`agency peers\`)`)
    const id = randomUUID()
    const msg: DirectMessage = {
      id,
      from: this.peerId,
      fromName: this.name,
      to: peer.peerId,
      thread: req.thread != null && req.thread !== '' ? req.thread : id,
      replyTo: req.replyTo ?? '',
      text: req.text,
      time: this.wallClock()
    }
    await this.store.messages.enqueue(msg, { expiresAt: this.wallClock() + this.config.dmTtlMs })
    this.messaging.flushPeer(peer.peerId).catch(() => {})
    return { id, to: peer.peerId, thread: msg.thread }
  }

  private onMessageReceived (msg: DirectMessage, cursor: number): void {
    this.metrics.dmReceived.inc()
    this.inboxFeed.emit('message', cursor)
    this.events.emit({ type: 'message', peerId: msg.from, peerName: msg.fromName, text: msg.text, detail: { id: msg.id, thread: msg.thread, replyTo: msg.replyTo, cursor } })
  }

  async readInbox (after: number, limit: number): Promise<InboxRecord[]> {
    return await this.store.messages.inboxAfter(after, limit)
  }

  /** Calls back whenever a new inbox message is stored; returns the unsubscribe function. */
  onInbox (listener: (cursor: number) => void): () => void {
    this.inboxFeed.on('message', listener)
    return () => { this.inboxFeed.off('message', listener) }
  }

  // ---- announcements ----

  async announce (text: string): Promise<string> {
    const size = utf8Length(text)
    if (size > MAX_ANNOUNCE_TEXT_BYTES) throw new TooLargeError('announcement', size, MAX_ANNOUNCE_TEXT_BYTES)
    if (text.length === 0) throw new InvalidArgumentError('announcement text is empty')
    if (this.gossip == null) throw new FailedPreconditionError('the daemon is not started')
    const a = signAnnouncement(this.signer, { id: randomUUID(), name: this.name, text, time: this.wallClock() })
    await this.gossip.publishAnnouncement(a)
    this.metrics.announcementsSent.inc()
    return a.id
  }

  private receiveAnnouncement (a: Announcement): 'accept' | 'reject' | 'ignore' {
    if (utf8Length(a.text) > MAX_ANNOUNCE_TEXT_BYTES || !verifyAnnouncement(a)) return 'reject'
    if (a.from === this.peerId) return 'ignore'
    this.metrics.announcementsReceived.inc()
    this.events.emit({ type: 'announcement', peerId: a.from, peerName: a.name, text: a.text, detail: { id: a.id, time: a.time } })
    return 'accept'
  }
}
