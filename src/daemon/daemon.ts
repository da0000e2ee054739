// agentd: the composition root. start() builds the parts (the store, the
// libp2p mesh, the log, the board, the repository, the inbox, the harness,
// presence, gossip) once each, in the order they depend on each other, hands
// each the parts it uses, and starts them; this object is what the gRPC API,
// the dashboard and the tests drive.
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
import { RememberedPeers } from './remembered-peers.js'
import { RoundTripProbe } from '../mesh/round-trips.js'
import { PeerGuard } from '../mesh/peer-guard.js'
import { peerIdFromString } from '@libp2p/peer-id'
import { MAX_ANNOUNCE_TEXT_BYTES } from '../mesh/constants.js'
import { createSigner, type Signer } from '../core/log/crypto.js'
import { signAnnouncement, verifyAnnouncement } from '../core/presence/signed-messages.js'
import { AgencyError, FailedPreconditionError, InvalidArgumentError, TooLargeError } from '../core/errors.js'
import { PeerDirectory, type PeerRecord } from '../core/presence/peer-directory.js'
import { heartbeatPolicy } from '../core/presence/heartbeat-interval.js'
import type { TestRunSummary } from '../gen/agency/v1/api.js'
import { createMetrics, registerStateGauges, type Metrics } from '../metrics/metrics.js'
import { createLibp2pMetrics } from '../metrics/libp2p-metrics.js'
import { componentLogger, type Logger } from '../logger.js'
import { EventBus } from './event-bus.js'
import { loadOrCreateIdentity, type Identity } from './identity.js'
import { PresenceService } from './presence-service.js'
import { LogService } from './log-service.js'
import { BoardService } from './board-service.js'
import type { RepoService } from './repo-service.js'
import { AssistService, checkAssistRequest } from './assist-service.js'
import { DEFAULT_HANDOFF_CHECK_MS, HandoffService } from './handoff-service.js'
import { ASSIST_DEFAULTS, HANDOFF_DEFAULTS } from '../core/board/index.js'
import type { AssistReply } from '../gen/agency/v1/api.js'
import { AgentInbox, type InboxItem } from './agent-inbox.js'
import { NoticeWriter } from './notice-writer.js'
import { MessageOutbox, type OutgoingMessage } from './message-outbox.js'
import type { HarnessService } from './harness-service.js'
import { waitForWork, type WaitAnswer } from './work-wait.js'
import { PLAN_TASK_ID, TASK_STATES, type NewTask, type TaskView } from '../core/board/index.js'
import type { ClaimAnswer, NextClaimAnswer } from './board-service.js'
import { resolveConfig, type DaemonConfig } from './config.js'
import { VERSION } from '../version.js'
import { StartPhases } from './start-phases.js'

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

/** The parts of a running daemon, each built once, after the parts it uses. */
interface Built {
  store: AgencyStore
  identity: Identity
  signer: Signer
  metrics: Metrics
  guard: PeerGuard
  node: MeshLibp2p
  dialer: PeerDialer
  remembered: RememberedPeers
  messaging: DirectMessaging
  outbox: MessageOutbox
  logService: LogService
  boardService: BoardService
  assists: AssistService
  handoffs: HandoffService
  repoService?: RepoService
  inbox: AgentInbox
  notices: NoticeWriter
  harness?: HarnessService
  presence: PresenceService
  gossip: SwarmGossip
  roundTrips: RoundTripProbe
}

export class Daemon {
  readonly config: DaemonConfig
  readonly events = new EventBus()
  readonly log: Logger
  /** this machine's wall clock: the time entries, heartbeats and messages carry (informational to peers) */
  private readonly wallClock: () => number
  /** the parts, filled in as they are built (a failed start stops what was built) */
  private readonly built: Partial<Built> = {}
  private readonly fatalListeners = new Set<(err: Error) => void>()
  private readonly inboxFeed = new EventEmitter()
  private outboxTimer?: NodeJS.Timeout
  private startedAt = 0
  private stopping?: Promise<void>
  /** how long each phase of the last start took (start-phases.ts) */
  startPhases = new StartPhases()

  constructor (config: Partial<DaemonConfig> & { dataDir: string }, parts: DaemonParts = {}) {
    this.config = resolveConfig(config)
    this.wallClock = parts.wallClock ?? Date.now
    this.log = componentLogger('agentd', { name: this.config.name })
    this.inboxFeed.setMaxListeners(0)
  }

  get metrics (): Metrics { return this.part('metrics') }
  get store (): AgencyStore { return this.part('store') }
  get identity (): Identity { return this.part('identity') }
  get signer (): Signer { return this.part('signer') }
  get node (): MeshLibp2p { return this.part('node') }
  get gossip (): SwarmGossip { return this.part('gossip') }
  get presence (): PresenceService { return this.part('presence') }
  get messaging (): DirectMessaging { return this.part('messaging') }
  get dialer (): PeerDialer { return this.part('dialer') }
  get roundTrips (): RoundTripProbe { return this.part('roundTrips') }
  get guard (): PeerGuard { return this.part('guard') }
  get logService (): LogService { return this.part('logService') }
  get boardService (): BoardService { return this.part('boardService') }
  get repoService (): RepoService | undefined { return this.built.repoService }
  get assists (): AssistService { return this.part('assists') }
  get handoffs (): HandoffService { return this.part('handoffs') }
  /** what turns the daemon's events and entries into the agent's notices */
  get notices (): NoticeWriter { return this.part('notices') }
  /** what the agent reads: peers' messages and this daemon's notices, with the read cursor */
  get inbox (): AgentInbox { return this.part('inbox') }
  /** the agent beside this daemon, when --harness names one; serve() starts it once the API is up */
  get harness (): HarnessService | undefined { return this.built.harness }

  get peerId (): string { return this.identity.peerId }
  get name (): string { return this.config.name !== '' ? this.config.name : this.identity.peerId.slice(-8) }

  private part<K extends keyof Built> (key: K): NonNullable<Built[K]> {
    const p = this.built[key]
    if (p == null) throw new FailedPreconditionError('the daemon is not started')
    return p as NonNullable<Built[K]>
  }

  /**
   * Calls back when the daemon cannot go on (its data dir stopped taking
   * writes): agentd stops and exits non-zero. The error is logged either way.
   * Returns the unsubscribe function.
   */
  onFatalError (listener: (err: Error) => void): () => void {
    this.fatalListeners.add(listener)
    return () => { this.fatalListeners.delete(listener) }
  }

  private fatal (err: Error): void {
    this.log.error({ err }, 'fatal: the daemon cannot go on')
    for (const l of this.fatalListeners) l(err)
  }

  async start (): Promise<void> {
    this.startedAt = performance.now()
    this.startPhases = new StartPhases()
    await mkdir(this.config.dataDir, { recursive: true, mode: 0o700 }).catch(() => {})
    try {
      await this.build()
      const { node, messaging, gossip, logService, presence, dialer, remembered, roundTrips } = this.built as Built
      await node.start()
      this.startPhases.mark('libp2p start')
      await messaging.start()
      gossip.start()
      await logService.start(gossip)
      presence.start(gossip)
      // the peers of the last run are dialled like peers learned from presence
      await remembered.start()
      dialer.start()
      roundTrips.start()
      // Hand-off by speed reads who is live: presence is running.
      this.handoffs.start()
      this.startPhases.mark('mesh')
      node.addEventListener('peer:connect', () => { remembered.connected() })
      this.outboxTimer = setInterval(() => { messaging.flushAll().catch(() => {}) }, this.config.dmRetryMs)
      this.log.info({ peerId: this.peerId, addrs: this.listenAddrs() }, 'agentd started')
    } catch (err) {
      await this.stop().catch(() => {})
      throw err
    }
  }

  /** Builds the parts in the order they depend on each other; each is handed the parts it uses, already built. */
  private async build (): Promise<void> {
    const b = this.built
    const config = this.config
    const events = this.events
    // The store first: its lock refuses a second daemon on the same data dir
    // before anything else is touched.
    const phases = this.startPhases
    const store = b.store = await openStore(config.dataDir)
    phases.mark('store open')
    const identity = b.identity = await loadOrCreateIdentity(config.dataDir)
    const me = identity.peerId
    const name = this.name
    const signer = b.signer = createSigner(me, identity.privateKey.raw)
    // Process and libp2p metrics only when a metrics endpoint can read them:
    // the event-loop monitor wakes the loop ten times a second, GC is
    // observed, and libp2p's metrics wrap every connection's and stream's
    // data events, all for a registry nobody scrapes. The daemon's own
    // counters and gauges stay (they cost only when something happens).
    const exported = config.processMetrics && config.metrics != null
    const metrics = b.metrics = createMetrics({ version: VERSION, swarm: config.swarm, processMetrics: exported })
    const guard = b.guard = new PeerGuard({
      allowPeers: config.allowPeers,
      onBan: (peer, reason) => {
        metrics.peerBans.inc()
        this.log.warn({ peer, reason }, 'banned a peer for a while: it kept sending invalid data')
      },
      onLimited: (_peer, protocol) => { metrics.rateLimited.inc({ protocol }) }
    })
    let node: MeshLibp2p
    try {
      node = b.node = await createMeshNode({
        privateKey: identity.privateKey,
        listen: config.listen,
        announce: config.announce,
        swarmKey: config.swarmKey,
        maxConnections: config.connections?.max === undefined ? undefined : 2 * config.connections.max,
        guard,
        // the round-trip probe checks every connection (a muxer ping, no stream): libp2p's monitor would ping them all again
        connectionMonitor: false,
        // a yamux window update per half window, not per data frame: half the frames of a gossip message
        halfWindowUpdates: true,
        // libp2p's metrics component keeps a module-wide table: only one node per process may use it.
        metrics: exported ? createLibp2pMetrics(metrics.registry) : undefined
      })
    } catch (err) {
      throw new AgencyError('FAILED_PRECONDITION', `cannot start the libp2p node: ${(err as Error).message}`, { cause: err })
    }
    phases.mark('libp2p')
    // The node consults the guard for every connection; the guard drops a banned peer's.
    guard.onBanned(peer => { node.hangUp(peerIdFromString(peer)).catch(() => {}) })
    const dialer = b.dialer = new PeerDialer({ node, bootstrap: config.peers, targetConnections: config.connections?.target, maxConnections: config.connections?.max, log: this.log.child({ part: 'dialer' }) })
    b.remembered = new RememberedPeers({
      state: store.state,
      mode: config.rememberedPeers,
      // most recently connected first, with the addresses their heartbeats gave
      connected: () => [...node.getConnections()].sort((x, y) => y.timeline.open - x.timeline.open)
        .map(c => ({ peer: c.remotePeer.toString(), addrs: dialer.addressesOf(c.remotePeer.toString()).map(a => a.toString()) })),
      dial: (peer, addrs) => { dialer.remember(peer, addrs) },
      logger: this.log.child({ part: 'remembered-peers' })
    })
    const directory = new PeerDirectory({ liveTimeoutMs: config.liveTimeoutMs })
    const messaging = b.messaging = new DirectMessaging({
      node,
      now: this.wallClock,
      store: store.messages,
      guard,
      addressesOf: peer => dialer.addressesOf(peer),
      log: this.log.child({ part: 'dm' }),
      hooks: {
        onReceived: (msg, cursor) => {
          metrics.dmReceived.inc()
          this.inboxFeed.emit('message', cursor)
          events.emit({ type: 'message', peerId: msg.from, peerName: msg.fromName, text: msg.text, detail: { id: msg.id, thread: msg.thread, replyTo: msg.replyTo, cursor } })
        },
        onDelivered: (_msg, latencyMs) => { metrics.dmSent.inc(); metrics.dmLatency.observe(latencyMs / 1000) },
        onFailed: (msg, reason) => {
          metrics.dmFailed.inc({ reason: reason.startsWith('refused') ? 'refused' : 'expired' })
          events.emit({ type: 'message_failed', peerId: msg.to, text: msg.text, detail: { id: msg.id, reason } })
        },
        onMalformed: (peer, reason) => {
          metrics.dmMalformed.inc()
          this.log.info({ peer, reason }, 'closed a malformed direct-message stream')
        }
      }
    })
    const outbox = b.outbox = new MessageOutbox({ me, name, directory, store: store.messages, messaging, ttlMs: config.dmTtlMs, wallClock: this.wallClock })
    const notify = async (peer: string, text: string): Promise<void> => { await outbox.send({ to: peer, text }) }
    const logService = b.logService = new LogService({
      store,
      signer,
      node,
      metrics,
      events,
      logger: this.log.child({ part: 'log' }),
      syncIntervalMs: config.syncIntervalMs,
      findingsWorker: config.findingsWorker,
      guard,
      onStorageFailure: err => { this.fatal(err) },
      // A new identity has signed nothing anyone could hold.
      ownHeadWaitMs: identity.created ? 0 : config.ownHeadWaitMs,
      hasBootstrapPeers: config.peers.length > 0,
      wallClock: this.wallClock,
      onGossipAccepted: author => { b.presence?.heardFrom(author) }
    })
    phases.mark('parts')
    await logService.restore(phases)
    const boardService = b.boardService = new BoardService({
      me,
      log: logService,
      events,
      state: store.state,
      logger: this.log.child({ part: 'board' }),
      heartbeats: heartbeatPolicy(config.heartbeatMs, config.liveTimeoutMs, config.heartbeatMaxRate),
      // The start-up grace lasts the lease of a swarm of the size the log shows.
      knownPeers: () => logService.state.authorCount - 1,
      notify,
      settle: config.settle,
      checkpoint: { dataDir: store.dataDir, writtenCursor: () => store.log.lastCursor(), sinceBatchMs: () => logService.msSinceBatch() },
      metrics: {
        claimsLost: () => { metrics.claimsLost.inc() },
        claimConflicts: () => { metrics.claimConflicts.inc() },
        takeovers: () => { metrics.takeovers.inc() }
      }
    })
    await boardService.start()
    phases.mark('board')
    // A forked author's entries from its fork point on count for nothing, on every replica alike.
    logService.onFault((author, fromSeq) => { boardService.board.markFaulty(author, fromSeq) })
    const assists = b.assists = new AssistService({
      me,
      board: boardService,
      log: logService,
      logger: this.log.child({ part: 'assist' }),
      wallClock: this.wallClock,
      policy: { budget: config.assist?.budget ?? ASSIST_DEFAULTS.budget, floorMs: config.assist?.floorMs ?? ASSIST_DEFAULTS.floorMs, spare: config.assist?.spare ?? ASSIST_DEFAULTS.spare },
      livePeers: () => b.presence?.livePeers().map(p => p.peerId) ?? [],
      // The inbox is built after the repository; notices come from accepted entries, once everything is up.
      notice: (text, task) => { b.inbox?.notice('assist', text, task).catch(err => { this.log.warn({ err }, 'cannot store a notice') }) }
    })
    assists.start()
    let repoService: RepoService | undefined
    if (config.repo != null) {
      const r = config.repo
      // loaded only by a daemon with a shared repository (git and its helpers: a tenth of a second of a start)
      const { RepoService } = await import('./repo-service.js')
      repoService = b.repoService = new RepoService({
        config: { remote: r.remote, branch: r.branch, workdir: r.workdir ?? join(config.dataDir, 'workspace'), verify: r.verify, mirrorDir: r.mirrorDir, wipPushMs: r.wipPushMs, integratorWindowMs: r.integratorWindowMs },
        me,
        name,
        board: boardService,
        log: logService,
        metrics,
        logger: this.log.child({ part: 'repo' }),
        notify,
        assists,
        // The inbox is built after the repository: a background verify answers minutes later, once it is up.
        notice: (text, task, once) => { b.inbox?.notice('integration', text, task, once).catch(err => { this.log.warn({ err }, 'cannot store a notice') }) }
      })
      await repoService.start()
    }
    const inbox = b.inbox = new AgentInbox({ me, messages: store.messages, state: store.state, onStored: cursor => { this.inboxFeed.emit('message', cursor) } })
    await inbox.start()
    const notices = b.notices = new NoticeWriter({
      me,
      name: () => name,
      inbox,
      events,
      log: logService,
      logger: this.log.child({ part: 'notices' }),
      currentGoalId: () => boardService.board.goal()?.entryId,
      assisted: (task, epoch) => assists.assistedAt(task, epoch),
      board: () => boardService.board
    })
    notices.start()
    b.handoffs = new HandoffService({
      me,
      board: boardService,
      log: logService,
      assists,
      logger: this.log.child({ part: 'handoff' }),
      wallClock: this.wallClock,
      policy: { factor: config.handoff?.factor ?? HANDOFF_DEFAULTS.factor, floorMs: config.handoff?.floorMs ?? HANDOFF_DEFAULTS.floorMs },
      checkMs: config.handoff?.checkMs ?? DEFAULT_HANDOFF_CHECK_MS,
      livePeers: () => b.presence?.livePeers().map(p => p.peerId) ?? [],
      merging: (task, epoch) => repoService?.merging(task, epoch) ?? false,
      saveWork: async task => await (repoService?.saveWork(task) ?? Promise.resolve('')),
      claim: async (task, fromAssist) => {
        const a = await this.claimTask(task, [], false, { fromAssist })
        return { outcome: a.outcome, epoch: a.epoch, winner: a.winner, workspace: a.workspace }
      },
      notice: (text, task) => { inbox.notice('handoff', text, task).catch(err => { this.log.warn({ err }, 'cannot store a notice') }) }
    })
    const presence = b.presence = new PresenceService({
      signer,
      name,
      heartbeatMs: config.heartbeatMs,
      heartbeatMaxRate: config.heartbeatMaxRate,
      liveTimeoutMs: config.liveTimeoutMs,
      directory,
      addrs: () => addressesOf(node),
      heldClaims: () => boardService.held().map(h => ({ task: h.task, epoch: h.epoch })),
      onJoined: p => {
        events.emit({ type: 'peer_joined', peerId: p.peerId, peerName: p.name })
        dialer.remember(p.peerId, p.addrs)
        messaging.flushPeer(p.peerId).catch(() => {})
      },
      onLeft: p => { events.emit({ type: 'peer_left', peerId: p.peerId, peerName: p.name }) },
      onHeartbeat: (p, heartbeat) => {
        dialer.remember(p.peerId, p.addrs)
        boardService.heard(p.peerId, heartbeat.intervalMs)
      },
      onSignOfLife: p => { boardService.heard(p.peerId, p.intervalMs ?? config.heartbeatMs) },
      wallClock: this.wallClock
    })
    // loaded only by a daemon that runs an agent beside it
    const harnessCommand = config.harness
    const harnesses = harnessCommand == null ? undefined : await import('./harness-service.js')
    const harness = b.harness = harnesses === undefined || harnessCommand == null
      ? undefined
      : new harnesses.HarnessService({
        peerId: me,
        name,
        dataDir: config.dataDir,
        apiToken: config.apiToken,
        sandbox: config.sandbox,
        workspace: () => repoService?.workspace.dir ?? '',
        goalMet: () => boardService.board.goalMet(boardService.now()),
        // a failing harness gives back the tasks its agent works on; those on their way land and are done by the daemon (carry-on)
        held: () => boardService.working(),
        release: async (task, note) => await releaseWork(boardService, repoService, me, task, note, ''),
        metrics,
        log: this.log,
        acp: {
          permissions: config.acpPermissions,
          inbox,
          onInbox: l => this.onInbox(() => { l() }),
          waitForWork: async (timeoutMs, signal) => await waitForWorkOf(boardService, inbox, logService, l => this.onInbox(l), timeoutMs, signal),
          goalMet: () => boardService.board.goalMet(boardService.now()),
          held: () => boardService.working().map(h => ({ task: h.task, epoch: h.epoch, title: boardService.board.task(h.task, boardService.now())?.title })),
          metrics,
          events,
          setStatusLine: async text => { await setStatusOf(presence, text) }
        }
      }, harnessCommand, config.harnessPolicy)
    config.sandbox?.countRefusals(kind => { metrics.sandboxDenials.inc({ kind }) })
    if (harness != null) presence.reportHarness(() => harness.heartbeatState())
    // Heartbeats carry the claims held and the harness state: a change goes out at once.
    boardService.onHeldChanged(() => { presence.beatIfChanged().catch(() => {}) })
    harness?.onChange(() => { presence.beatIfChanged().catch(() => {}) })
    b.gossip = new SwarmGossip(node, config.swarm, {
      onEntry: async (bytes, from) => await logService.receiveGossip(bytes, from),
      onPresence: (p, from) => presence.receive(p, from),
      onAnnouncement: (a) => {
        if (utf8Length(a.text) > MAX_ANNOUNCE_TEXT_BYTES || !verifyAnnouncement(a)) return 'reject'
        if (a.from === me) return 'ignore'
        metrics.announcementsReceived.inc()
        events.emit({ type: 'announcement', peerId: a.from, peerName: a.name, text: a.text, detail: { id: a.id, time: a.time } })
        return 'accept'
      },
      onForkProof: async (p, from) => await logService.receiveForkProof(p, from),
      onPublished: (kind) => {
        metrics.gossipOut.inc({ kind })
        if (kind === 'entry') presence.published()
      },
      onJudged: (kind, verdict, from) => {
        metrics.gossipIn.inc({ kind, verdict })
        if (verdict === 'reject') guard.strike(from, `invalid gossip (${kind})`)
      },
      onPeerSubscribed: (peer) => { presence.greet(peer) }
    }, this.log.child({ part: 'gossip' }))
    // Round trips to peers, on this machine's own clock, set the claim settle window,
    // and the same pings check the connections (libp2p's monitor is off).
    // Pinged at the interval this daemon's heartbeat announces (a daemon that
    // holds nothing and has nothing new to say pings as seldom as it beats; one
    // that claims is back at the swarm's interval at once), but every connection
    // at least once a minute. The window keeps the last samples, however old.
    b.roundTrips = new RoundTripProbe({
      node,
      intervalMs: () => presence.announcedIntervalMs,
      onSample: (_peer, ms) => { boardService.observeRoundTrip(ms) },
      logger: this.log.child({ part: 'ping' })
    })
    registerStateGauges(metrics.registry, {
      peersConnected: () => node.getPeers().length,
      peersLive: () => presence.livePeers().length,
      logByKind: () => logService.state.countsByKind(),
      logAuthors: () => logService.state.authors().length,
      logPending: () => logService.state.pendingCount,
      logForks: () => logService.state.forks.length,
      secondsSinceSync: () => logService.secondsSinceSync(),
      outboxMessages: async () => await store.messages.outboxCount(),
      claimsHeld: () => boardService.held().length,
      taskStates: () => boardService.board.tasks(performance.now()).map(t => t.state),
      allTaskStates: TASK_STATES,
      sharedTests: () => testSummaryOf(boardService),
      harness: harness === undefined || harnesses === undefined ? undefined : { states: harnesses.HARNESS_STATES, current: () => harness.state() }
    })
  }

  async stop (): Promise<void> {
    this.stopping ??= this.shutdown()
    await this.stopping
  }

  private async shutdown (): Promise<void> {
    const b = this.built
    await b.harness?.shutdown().catch(err => { this.log.warn({ err }, 'harness stop failed') })
    b.notices?.stop()
    b.handoffs?.stop()
    b.boardService?.stop()
    b.assists?.stop()
    b.repoService?.stop()
    clearInterval(this.outboxTimer)
    b.roundTrips?.stop()
    b.dialer?.stop()
    // while the connections are still open: the next start redials them
    await b.remembered?.stop()
    b.presence?.stop()
    try { b.gossip?.stop() } catch { /* not started */ }
    await b.messaging?.stop().catch(() => {})
    await b.logService?.stop().catch(() => {})
    // after the log's last writes: the next start takes the board from it instead of folding the log
    await b.boardService?.checkpoint()
    try { await b.node?.stop() } catch (err) { this.log.warn({ err }, 'libp2p stop failed') }
    await b.store?.close()
    this.log.info('agentd stopped')
  }

  listenAddrs (): string[] {
    return addressesOf(this.node)
  }

  /** The shared branch's latest test run and pass rate, from the board. */
  testSummary (): TestRunSummary | undefined {
    return testSummaryOf(this.boardService)
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
  async claimTask (task: string, scope: string[], noWait: boolean, o: { fromAssist?: string } = {}): Promise<ClaimAnswer & { taskBranch: string, workspace: string }> {
    const a = await this.boardService.claim(task, scope, noWait)
    if (a.outcome !== 'HELD' || this.repoService == null || task === PLAN_TASK_ID) return { ...a, taskBranch: '', workspace: '' }
    const start = await this.repoService.startTask(task, a.branch, o)
    return { ...a, taskBranch: start.branch, workspace: start.note }
  }

  /** claim --next: the daemon picks the task (board-service claimNext); on HELD the workspace is put on its branch. */
  async claimNextTask (scope: string[]): Promise<NextClaimAnswer & { taskBranch: string, workspace: string, assist?: AssistReply }> {
    const a = await this.boardService.claimNext(scope)
    if (a.outcome === 'NONE_READY') {
      // Nothing to claim: the held task on the critical path this agent may assist instead (none when it holds or assists one).
      const assist = this.assists.offer()
      return { ...a, taskBranch: '', workspace: '', ...(assist !== undefined ? { assist } : {}) }
    }
    if (a.outcome !== 'HELD' || this.repoService == null || a.task === PLAN_TASK_ID) return { ...a, taskBranch: '', workspace: '' }
    const start = await this.repoService.startTask(a.task, a.branch)
    return { ...a, taskBranch: start.branch, workspace: start.note }
  }

  /**
   * An assist (docs/assist.md): with `stop`, ends this agent's assist with
   * what it learned; without an approach, looks (the task it may assist, with
   * the approaches to avoid; nothing written); with one, announces it and
   * puts the workspace on a new branch of its own for the task.
   */
  async assist (req: { task: string, approach: string, stop: string }): Promise<AssistReply> {
    checkAssistRequest(req)
    if (req.stop.trim() !== '') return await this.assists.end(req.stop)
    if (req.approach.trim() === '') return this.assists.look(req.task)
    const r = await this.assists.announce(req.task, req.approach)
    if ('outcome' in r) return r
    const start = this.repoService != null
      ? await this.repoService.startAssist(r.branchTask)
      : { branch: '', note: 'this agentd has no shared repository (--repo): your work cannot be integrated from here' }
    const c = r.candidate
    return {
      ...this.assists.reply('ASSISTING', c, `you assist ${c.task} (held by ${c.holder}); the first passing integration of it wins: commit on ${start.branch || 'your branch'}, then agency integrate. Stop when told, or when you give up: agency assist --stop "<what you learned>"`),
      assistants: c.assistants.length + 1,
      taskBranch: start.branch,
      workspace: start.note,
      entryId: r.entryId
    }
  }

  /** Releases a task; the work so far goes to the task's wip ref first, for whoever takes it next. */
  async releaseTask (task: string, note: string, branch: string): Promise<TaskView> {
    return await releaseWork(this.boardService, this.repoService, this.peerId, task, note, branch)
  }

  async doneTask (task: string, commit: string, paths: string[], noChange: string): Promise<TaskView> {
    // A landing the log lacks (a crash after the push) but the remote's fence proves counts.
    if (noChange.trim() === '') await this.repoService?.recoverLanding(task)
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
    return await waitForWorkOf(this.boardService, this.inbox, this.logService, l => this.onInbox(l), timeoutMs, signal)
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
    await setStatusOf(this.presence, status)
  }

  // ---- direct messages ----

  async sendMessage (req: OutgoingMessage): Promise<{ id: string, to: string, thread: string }> {
    return await this.part('outbox').send(req)
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
    const a = signAnnouncement(this.signer, { id: randomUUID(), name: this.name, text, time: this.wallClock() })
    await this.gossip.publishAnnouncement(a)
    this.metrics.announcementsSent.inc()
    return a.id
  }
}

function addressesOf (node: MeshLibp2p): string[] {
  return node.getMultiaddrs().map(a => a.toString())
}

/** The shared branch's latest test run and pass rate, from the board. */
function testSummaryOf (board: BoardService): TestRunSummary | undefined {
  const runs = board.board.testRuns()
  const last = runs.at(-1)
  if (last == null) return undefined
  return { commit: last.commit, passed: last.passed, failed: last.failed, total: last.total, passRate: last.total > 0 ? last.passed / last.total : 0, time: last.time, runs: runs.length }
}

/** Releases a task; the work so far goes to the task's wip ref first, for whoever takes it next. */
async function releaseWork (board: BoardService, repo: RepoService | undefined, me: string, task: string, note: string, branch: string): Promise<TaskView> {
  board.board.checkReleasable(task, me)
  const saved = branch === '' && repo != null ? await repo.saveWork(task) : ''
  return await board.release(task, note, branch !== '' ? branch : saved)
}

/** Blocks until there is something for the agent to do (or the time is up), and says what. */
async function waitForWorkOf (b: BoardService, inbox: AgentInbox, log: LogService, onInbox: (l: () => void) => () => void, timeoutMs: number, signal?: AbortSignal): Promise<WaitAnswer> {
  return await waitForWork({
    goalMet: () => b.board.goalMet(b.now()),
    unread: () => inbox.unread(),
    // a task on its way to the shared branch (carry-on) is not work to carry on with
    held: () => b.working().map(h => h.task),
    ready: () => b.readyChoice().ready,
    onChange: listener => {
      const offLog = log.onAccepted(listener)
      const offInbox = onInbox(listener)
      return () => { offLog(); offInbox() }
    }
  }, timeoutMs, signal)
}

/** The agent's status line, carried in heartbeats: a change goes out at once. */
async function setStatusOf (presence: PresenceService, status: string): Promise<void> {
  if (utf8Length(status) > 1024) throw new TooLargeError('status line', utf8Length(status), 1024)
  presence.status = status
  await presence.beat()
}
