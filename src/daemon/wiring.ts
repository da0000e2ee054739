// agentd's composition root: builds each part once, hands it the parts it
// uses and its options, and returns them with the one list that orders their
// start (and, reversed, their stop: startable.ts). It does wiring and nothing
// else: no domain logic lives here.
//
// Where a new thing goes:
// - a long-lived part (timers, subscriptions, files of its own): a class with
//   the start/stop moments of startable.ts, built here as `new X(components,
//   options)`, and put in `order` after the parts it uses;
// - a use case joining several parts (what an agent or an operator asks the
//   daemon to do): a method of agent-work.ts (the agent's work) or a module
//   beside it, built here from the parts it calls;
// - something the API or the dashboard reads: a field of BuiltParts, handed
//   to them by src/cli/serve.ts as the narrow interface they declare.
// - a sentence the daemon says to its agent (a notice, a refusal, a next
//   step): a function of src/core/agent-words.ts, called by the part.
import { EventEmitter } from 'node:events'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { peerIdFromString } from '@libp2p/peer-id'
import { openStore, type AgencyStore } from '../store/index.js'
import { createMeshNode, type MeshLibp2p } from '../mesh/node.js'
import { SwarmGossip } from '../mesh/swarm-gossip.js'
import { DirectMessaging, utf8Length } from '../mesh/direct-messages.js'
import { PeerDialer } from '../mesh/peer-dialer.js'
import { RoundTripProbe } from '../mesh/round-trips.js'
import { PeerGuard } from '../mesh/peer-guard.js'
import { MAX_ANNOUNCE_TEXT_BYTES } from '../mesh/constants.js'
import { createSigner, type Signer } from '../core/log/crypto.js'
import { verifyAnnouncement } from '../core/presence/signed-messages.js'
import { AgencyError } from '../core/errors.js'
import { PeerDirectory } from '../core/presence/peer-directory.js'
import { heartbeatPolicy } from '../core/presence/heartbeat-interval.js'
import { ASSIST_DEFAULTS, HANDOFF_DEFAULTS, TASK_STATES } from '../core/board/index.js'
import { createMetrics, registerStateGauges, type Metrics } from '../metrics/metrics.js'
import { createLibp2pMetrics } from '../metrics/libp2p-metrics.js'
import type { Logger } from '../logger.js'
import { VERSION } from '../version.js'
import type { DaemonConfig } from './config.js'
import type { EventBus } from './event-bus.js'
import type { StartPhases } from './start-phases.js'
import { Repeating, type NamedPart } from './startable.js'
import { loadOrCreateIdentity, type Identity } from './identity.js'
import { RememberedPeers } from './remembered-peers.js'
import { PresenceService } from './presence-service.js'
import { LogService } from './log-service.js'
import { BoardService } from './board-service.js'
import type { RepoService } from './repo-service.js'
import type { RepoWorkspace } from './repo-workspace.js'
import type { BackgroundIntegration } from './background-integration.js'
import { AssistService } from './assist-service.js'
import { DEFAULT_HANDOFF_CHECK_MS, HandoffService } from './handoff-service.js'
import { AgentInbox } from './agent-inbox.js'
import { NoticeWriter } from './notice-writer.js'
import { MessageOutbox } from './message-outbox.js'
import type { HarnessService } from './harness-service.js'
import { AgentWork, testSummaryOf } from './agent-work.js'
import { PeerContact, addressesOf } from './peer-contact.js'
import { OperatorService } from './operator-service.js'
import { OperatorNotices } from './operator-notices.js'
import { ApprovalQueue } from './approval-queue.js'
import { SpendService } from './spend-service.js'
import { MembershipService } from './membership-service.js'
import { providerAccount } from '../harness/usage/provider-account.js'

/** What the daemon's context gives the wiring: nothing here is a part. */
export interface WiringContext {
  config: DaemonConfig
  events: EventBus
  log: Logger
  /** this machine's wall clock: the time entries, heartbeats and messages carry (informational to peers) */
  wallClock: () => number
  phases: StartPhases
  /** the daemon cannot go on (its data dir stopped taking writes) */
  onFatal: (err: Error) => void
}

/** The parts of a running daemon, each built once, after the parts it uses. */
export interface BuiltParts {
  name: string
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
  /** the use cases that join the board, the repository and the assists */
  work: AgentWork
  /** peers, the status line, direct messages, announcements */
  contact: PeerContact
  /** the operator's use cases: carry a signed action, refuse the unsigned forms (docs/operator.md) */
  operator: OperatorService
  /** the swarm's spend, its budget and this agent's rate-limit holds */
  spend: SpendService
  /** calls back whenever a new item reaches the agent's inbox; returns the unsubscribe function */
  onInbox: (listener: (cursor: number) => void) => () => void
  /** the start order: started in this order, stopped in reverse */
  order: NamedPart[]
}

/**
 * Builds the parts. The store is opened first: its lock refuses a second
 * daemon on the same data dir before anything else is touched. On a failure
 * what was opened is closed again.
 */
export async function wireDaemon(ctx: WiringContext): Promise<BuiltParts> {
  const { config, phases } = ctx
  const store = await openStore(config.dataDir)
  phases.mark('store open')
  let node: MeshLibp2p | undefined
  try {
    const identity = await loadOrCreateIdentity(config.dataDir)
    const metrics = createMetrics({ version: VERSION, swarm: config.swarm, processMetrics: exportsProcessMetrics(config) })
    const guard = newGuard(ctx, metrics)
    node = await newNode(config, identity, guard, metrics)
    phases.mark('libp2p')
    return await wireParts(ctx, { store, identity, metrics, guard, node })
  } catch (err) {
    try {
      await node?.stop()
    } catch {
      /* the start's error is the one to report */
    }
    await store.close().catch(() => {})
    throw err
  }
}

/**
 * Process and libp2p metrics only when a metrics endpoint can read them: the
 * event-loop monitor wakes the loop ten times a second, GC is observed, and
 * libp2p's metrics wrap every connection's and stream's data events, all for a
 * registry nobody scrapes. The daemon's own counters and gauges stay (they
 * cost only when something happens).
 */
function exportsProcessMetrics(config: DaemonConfig): boolean {
  return config.processMetrics && config.metrics != null
}

function newGuard(ctx: WiringContext, metrics: Metrics): PeerGuard {
  return new PeerGuard({
    allowPeers: ctx.config.allowPeers,
    onBan: (peer, reason) => {
      metrics.peerBans.inc()
      ctx.log.warn({ peer, reason }, 'banned a peer for a while: it kept sending invalid data')
    },
    onLimited: (_peer, protocol) => {
      metrics.rateLimited.inc({ protocol })
    }
  })
}

async function newNode(config: DaemonConfig, identity: Identity, guard: PeerGuard, metrics: Metrics): Promise<MeshLibp2p> {
  try {
    return await createMeshNode({
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
      metrics: exportsProcessMetrics(config) ? createLibp2pMetrics(metrics.registry) : undefined
    })
  } catch (err) {
    throw new AgencyError('FAILED_PRECONDITION', `cannot start the libp2p node: ${(err as Error).message}`, { cause: err })
  }
}

interface Opened {
  store: AgencyStore
  identity: Identity
  metrics: Metrics
  guard: PeerGuard
  node: MeshLibp2p
}

/**
 * Builds the parts on the opened store and node. Callbacks may name a part
 * built further down: none is called before the parts start, when all exist.
 */
async function wireParts(ctx: WiringContext, { store, identity, metrics, guard, node }: Opened): Promise<BuiltParts> {
  const { config, events, wallClock } = ctx
  const logger = (part: string): Logger => ctx.log.child({ part })
  const me = identity.peerId
  const name = config.name !== '' ? config.name : me.slice(-8)
  const signer = createSigner(me, identity.privateKey.raw)
  const inboxFeed = new EventEmitter()
  inboxFeed.setMaxListeners(0)
  const onInbox = (listener: (cursor: number) => void): (() => void) => {
    inboxFeed.on('message', listener)
    return () => {
      inboxFeed.off('message', listener)
    }
  }
  const storeNotice = (err: unknown): void => {
    ctx.log.warn({ err }, 'cannot store a notice')
  }

  // The node consults the guard for every connection; the guard drops a banned peer's.
  guard.onBanned(peer => {
    node.hangUp(peerIdFromString(peer)).catch(() => {})
  })
  const dialer = new PeerDialer({
    node,
    bootstrap: config.peers,
    targetConnections: config.connections?.target,
    maxConnections: config.connections?.max,
    log: logger('dialer')
  })
  const remembered = new RememberedPeers({
    state: store.state,
    mode: config.rememberedPeers,
    // most recently connected first, with the addresses their heartbeats gave
    connected: () =>
      [...node.getConnections()]
        .sort((x, y) => y.timeline.open - x.timeline.open)
        .map(c => ({ peer: c.remotePeer.toString(), addrs: dialer.addressesOf(c.remotePeer.toString()).map(a => a.toString()) })),
    dial: (peer, addrs) => {
      dialer.remember(peer, addrs)
    },
    logger: logger('remembered-peers')
  })
  node.addEventListener('peer:connect', () => {
    remembered.connected()
  })
  const directory = new PeerDirectory({ liveTimeoutMs: config.liveTimeoutMs })
  const messaging = new DirectMessaging({
    node,
    now: wallClock,
    store: store.messages,
    guard,
    addressesOf: peer => dialer.addressesOf(peer),
    log: logger('dm'),
    hooks: {
      onReceived: (msg, cursor) => {
        metrics.dmReceived.inc()
        inboxFeed.emit('message', cursor)
        events.emit({
          type: 'message',
          peerId: msg.from,
          peerName: msg.fromName,
          text: msg.text,
          detail: { id: msg.id, thread: msg.thread, replyTo: msg.replyTo, cursor }
        })
      },
      onDelivered: (_msg, latencyMs) => {
        metrics.dmSent.inc()
        metrics.dmLatency.observe(latencyMs / 1000)
      },
      onFailed: (msg, reason) => {
        metrics.dmFailed.inc({ reason: reason.startsWith('refused') ? 'refused' : 'expired' })
        events.emit({ type: 'message_failed', peerId: msg.to, text: msg.text, detail: { id: msg.id, reason } })
      },
      onMalformed: (peer, reason) => {
        metrics.dmMalformed.inc()
        ctx.log.info({ peer, reason }, 'closed a malformed direct-message stream')
      }
    }
  })
  const outbox = new MessageOutbox({ me, name, directory, store: store.messages, messaging, ttlMs: config.dmTtlMs, wallClock })
  const notify = async (peer: string, text: string): Promise<void> => {
    await outbox.send({ to: peer, text })
  }
  const gossip: SwarmGossip = new SwarmGossip(
    node,
    config.swarm,
    {
      onEntry: async (bytes, from) => await logService.receiveGossip(bytes, from),
      onPresence: (p, from) => presence.receive(p, from),
      onAnnouncement: a => {
        if (utf8Length(a.text) > MAX_ANNOUNCE_TEXT_BYTES || !verifyAnnouncement(a)) return 'reject'
        if (a.from === me) return 'ignore'
        metrics.announcementsReceived.inc()
        events.emit({ type: 'announcement', peerId: a.from, peerName: a.name, text: a.text, detail: { id: a.id, time: a.time } })
        return 'accept'
      },
      onForkProof: async (p, from) => await logService.receiveForkProof(p, from),
      onPublished: kind => {
        metrics.gossipOut.inc({ kind })
        if (kind === 'entry') presence.published()
      },
      onJudged: (kind, verdict, from) => {
        metrics.gossipIn.inc({ kind, verdict })
        if (verdict === 'reject') guard.strike(from, `invalid gossip (${kind})`)
      },
      onPeerSubscribed: peer => {
        presence.greet(peer)
      }
    },
    logger('gossip')
  )
  const logService: LogService = new LogService({
    store,
    signer,
    node,
    gossip,
    metrics,
    events,
    logger: logger('log'),
    syncIntervalMs: config.syncIntervalMs,
    findingsWorker: config.findingsWorker,
    guard,
    onStorageFailure: err => {
      ctx.onFatal(err)
    },
    // A new identity has signed nothing anyone could hold.
    ownHeadWaitMs: identity.created ? 0 : config.ownHeadWaitMs,
    hasBootstrapPeers: config.peers.length > 0,
    wallClock,
    onGossipAccepted: author => {
      presence.heardFrom(author)
    },
    phases: ctx.phases
  })
  // A forked author's entries from its fork point on count for nothing, on every replica alike.
  logService.onFault((author, fromSeq) => {
    boardService.board.markFaulty(author, fromSeq)
  })
  const presence: PresenceService = new PresenceService({
    signer,
    name,
    gossip,
    // a member the operator removed is not present, whatever it still sends
    excluded: peer => boardService.board.isRemoved(peer),
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
    onLeft: p => {
      events.emit({ type: 'peer_left', peerId: p.peerId, peerName: p.name })
    },
    onHeartbeat: (p, heartbeat) => {
      dialer.remember(p.peerId, p.addrs)
      boardService.heard(p.peerId, heartbeat.intervalMs)
    },
    onSignOfLife: p => {
      boardService.heard(p.peerId, p.intervalMs ?? config.heartbeatMs)
    },
    wallClock
  })
  // Round trips to peers, on this machine's own clock, set the claim settle window,
  // and the same pings check the connections (libp2p's monitor is off).
  // Pinged at the interval this daemon's heartbeat announces (a daemon that
  // holds nothing and has nothing new to say pings as seldom as it beats; one
  // that claims is back at the swarm's interval at once), but every connection
  // at least once a minute. The window keeps the last samples, however old.
  const roundTrips = new RoundTripProbe({
    node,
    intervalMs: () => presence.announcedIntervalMs,
    onSample: (_peer, ms) => {
      boardService.observeRoundTrip(ms)
    },
    logger: logger('ping')
  })
  const boardService: BoardService = new BoardService({
    me,
    operators: config.operators,
    log: logService,
    events,
    state: store.state,
    logger: logger('board'),
    heartbeats: heartbeatPolicy(config.heartbeatMs, config.liveTimeoutMs, config.heartbeatMaxRate),
    // The start-up grace lasts the lease of a swarm of the size the log shows.
    knownPeers: () => logService.state.authorCount - 1,
    notify,
    settle: config.settle,
    checkpoint: { dataDir: store.dataDir, writtenCursor: () => store.log.lastCursor(), sinceBatchMs: () => logService.msSinceBatch() },
    metrics: {
      claimsLost: () => {
        metrics.claimsLost.inc()
      },
      claimConflicts: () => {
        metrics.claimConflicts.inc()
      },
      takeovers: () => {
        metrics.takeovers.inc()
      }
    }
  })
  const livePeers = (): string[] => presence.livePeers().map(p => p.peerId)
  const assists = new AssistService({
    me,
    board: boardService,
    log: logService,
    logger: logger('assist'),
    wallClock,
    policy: {
      budget: config.assist?.budget ?? ASSIST_DEFAULTS.budget,
      floorMs: config.assist?.floorMs ?? ASSIST_DEFAULTS.floorMs,
      spare: config.assist?.spare ?? ASSIST_DEFAULTS.spare
    },
    livePeers,
    notice: (text, task) => {
      inbox.notice('assist', text, task).catch(storeNotice)
    }
  })
  const repo =
    config.repo == null
      ? undefined
      : await newRepository(ctx, config.repo, {
          me,
          name,
          metrics,
          boardService,
          logService,
          assists,
          logger,
          notify,
          notice: (text, task, once) => {
            inbox.notice('integration', text, task, once).catch(storeNotice)
          }
        })
  const repoService = repo?.service
  const inbox = new AgentInbox({
    me,
    messages: store.messages,
    state: store.state,
    onStored: cursor => {
      inboxFeed.emit('message', cursor)
    }
  })
  const notices = new NoticeWriter({
    me,
    name: () => name,
    inbox,
    events,
    log: logService,
    logger: logger('notices'),
    currentGoalId: () => boardService.board.goal()?.entryId,
    assisted: (task, epoch) => assists.assistedAt(task, epoch),
    board: () => boardService.board
  })
  const work = new AgentWork({ me, board: boardService, repo: repoService, assists, inbox, log: logService, onInbox })
  const handoffs = new HandoffService({
    me,
    board: boardService,
    log: logService,
    assists,
    logger: logger('handoff'),
    wallClock,
    policy: { factor: config.handoff?.factor ?? HANDOFF_DEFAULTS.factor, floorMs: config.handoff?.floorMs ?? HANDOFF_DEFAULTS.floorMs },
    checkMs: config.handoff?.checkMs ?? DEFAULT_HANDOFF_CHECK_MS,
    livePeers,
    merging: (task, epoch) => repoService?.merging(task, epoch) ?? false,
    saveWork: async task => await (repoService?.saveWork(task) ?? Promise.resolve('')),
    claim: async (task, fromAssist) => {
      const a = await work.claim(task, [], false, { fromAssist })
      return { outcome: a.outcome, epoch: a.epoch, winner: a.winner, workspace: a.workspace }
    },
    notice: (text, task) => {
      inbox.notice('handoff', text, task).catch(storeNotice)
    }
  })
  const operator = new OperatorService({
    board: () => boardService.board,
    append: async envelope => await logService.append('operator', envelope),
    knows: peer => peer === me || logService.state.vector().has(peer) || presence.directory.get(peer) !== undefined,
    me,
    onEntry: listener =>
      logService.onAccepted(e => {
        listener({ id: e.id, author: e.entry.author, kind: e.entry.kind })
      }),
    metrics
  })
  const afterEntry = (listener: () => void): (() => void) =>
    logService.onAccepted(() => {
      listener()
    })
  const operatorNotices = new OperatorNotices({
    me,
    board: () => boardService.board,
    onEntry: afterEntry,
    notice: async (kind, text, once) => await inbox.notice(kind, text, '', once),
    saveWork: async () => {
      for (const h of boardService.held()) await repoService?.saveWork(h.task)
    },
    resumed: () => {
      harness?.service.resume()
    },
    releaseHeld: async note => {
      for (const h of boardService.working()) await work.release(h.task, note, '')
    },
    logger: logger('operator')
  })
  const membership = new MembershipService({
    board: () => boardService.board,
    onEntry: listener =>
      logService.onAccepted(e => {
        if (e.entry.kind === 'operator' || e.entry.kind === 'goal') listener()
      }),
    guard,
    connected: () => node.getConnections().map(c => c.remotePeer.toString()),
    hangUp: peer => {
      node.hangUp(peerIdFromString(peer)).catch(() => {})
    },
    forget: peer => {
      presence.forget(peer)
    },
    logger: logger('membership')
  })
  const approvals = new ApprovalQueue({
    board: () => boardService.board,
    append: async request => await logService.append('approval_request', request),
    onEntry: afterEntry,
    timeoutMs: config.approvalTimeoutMs,
    wallClock,
    task: () => boardService.held()[0]?.task ?? '',
    tell: (text, once) => {
      inbox.notice('approval', text, '', once).catch(storeNotice)
    },
    logger: logger('approvals')
  })
  const contact = new PeerContact({
    me,
    name,
    node,
    presence,
    gossip,
    outbox,
    messages: store.messages,
    signer,
    metrics,
    held: () => boardService.held().map(h => ({ task: h.task, epoch: h.epoch })),
    wallClock
  })
  // A silent peer stays a member of the swarm for the budget's shares this long (docs/spend.md).
  const memberWindowMs = config.spend?.memberWindowMs ?? 30 * 60_000
  // the harness is built below; the spend service asks only once it runs
  let harnessRunning = (): boolean => false
  const spend = new SpendService(
    {
      peerId: me,
      name,
      entries: logService,
      governed: () => boardService.board.operatorBudget(),
      append: async (kind, body) => await logService.append(kind, body),
      livePeers: () => presence.livePeers().map(p => ({ id: p.peerId, name: p.name, harness: p.harness ?? '' })),
      members: () => [
        me,
        ...directory
          .all()
          .filter(p => p.live || performance.now() - p.lastSeen < memberWindowMs)
          .map(p => p.peerId)
      ],
      currentTask: () => boardService.working()[0]?.task ?? '',
      running: () => harnessRunning(),
      report: text => {
        inbox.notice('harness', text).catch(storeNotice)
      },
      releaseHeld: async note => {
        for (const h of boardService.working()) await work.release(h.task, note, '')
      },
      metrics,
      log: logger('spend'),
      now: wallClock
    },
    {
      prices: config.spend?.prices,
      provider: providerAccount(config.harness ?? '', process.env, config.spend?.providerAccount),
      spreadMs: config.spend?.spreadMs,
      keepLeasesMs: config.spend?.keepLeasesMs
    }
  )
  const harness = await newHarness(ctx, {
    me,
    name,
    metrics,
    presence,
    boardService,
    work,
    inbox,
    contact,
    onInbox,
    approvals,
    spend,
    workspace: () => repoService?.workspace.dir ?? ''
  })
  if (harness != null) harnessRunning = () => harness.service.state() === 'running'
  config.sandbox?.countRefusals(kind => {
    metrics.sandboxDenials.inc({ kind })
  })
  if (harness != null) presence.reportHarness(() => harness.service.heartbeatState(), config.sandbox?.kind ?? 'none')
  // Heartbeats carry the claims held and the harness state: a change goes out at once.
  boardService.onHeldChanged(() => {
    presence.beatIfChanged().catch(() => {})
  })
  harness?.service.onChange(() => {
    presence.beatIfChanged().catch(() => {})
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
    harness: harness == null ? undefined : { states: harness.states, current: () => harness.service.state() }
  })

  // The start order. Before the mesh is up (each part's beforeStart) the log
  // is restored, the board folded from it, the workspace opened, the inbox and
  // the notices subscribed; then the mesh starts, the log's exchange with
  // peers before presence (a redialled peer is synced with), hand-offs once
  // presence says who is live. Stopped in reverse: the agent first, the parts
  // that write on their own before the mesh goes, the store last.
  const order: NamedPart[] = [
    {
      name: 'store',
      part: {
        afterStop: async () => {
          await store.close()
        }
      }
    },
    { name: 'libp2p start', part: node },
    { name: 'direct messages', part: messaging },
    { name: 'gossip', part: gossip },
    { name: 'log', part: logService },
    { name: 'presence', part: presence },
    // the peers of the last run are dialled like peers learned from presence
    { name: 'remembered peers', part: remembered },
    { name: 'dialer', part: dialer },
    { name: 'round trips', part: roundTrips },
    { name: 'board', part: boardService },
    // the operator's membership, from the folded board, to the guard before the first connection
    { name: 'membership', part: membership },
    // counts what the fold refused of peers' operator actions: the board has folded each entry first
    { name: 'operator', part: operator },
    { name: 'spend', part: spend },
    { name: 'assists', part: assists },
    // the workspace is open before the background integrates resume in it
    ...(repo != null
      ? [
          { name: 'workspace', part: repo.workspace },
          { name: 'background integration', part: repo.background }
        ]
      : []),
    { name: 'inbox', part: inbox },
    { name: 'notices', part: notices },
    // the operator's messages and pauses reach the agent: the board and the inbox are up
    { name: 'operator notices', part: operatorNotices },
    // hand-off by speed reads who is live: presence is running
    { name: 'hand-offs', part: handoffs },
    {
      name: 'outbox',
      part: new Repeating(config.dmRetryMs, () => {
        messaging.flushAll().catch(() => {})
      })
    },
    // serve() starts the harness once the API is up; a stopping daemon keeps its claims (a restart carries on)
    ...(harness != null
      ? [
          {
            name: 'harness',
            part: {
              stop: async () => {
                await harness.service.shutdown()
              }
            }
          }
        ]
      : [])
  ]
  return {
    name,
    store,
    identity,
    signer,
    metrics,
    guard,
    node,
    dialer,
    remembered,
    messaging,
    outbox,
    logService,
    boardService,
    assists,
    handoffs,
    repoService,
    inbox,
    notices,
    harness: harness?.service,
    presence,
    gossip,
    roundTrips,
    work,
    contact,
    operator,
    spend,
    onInbox,
    order
  }
}

interface HarnessComponents {
  me: string
  name: string
  metrics: Metrics
  presence: PresenceService
  boardService: BoardService
  work: AgentWork
  inbox: AgentInbox
  contact: PeerContact
  onInbox: (listener: (cursor: number) => void) => () => void
  approvals: ApprovalQueue
  spend: SpendService
  workspace: () => string
}

/** Waits `ms`, or less when the wait is aborted or the spend changes (a raised budget). */
async function heldFor(ms: number, signal: AbortSignal | undefined, spend: Pick<SpendService, 'onChange'>): Promise<void> {
  await new Promise<void>(resolve => {
    const done = (): void => {
      clearTimeout(timer)
      off()
      signal?.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    const off = spend.onChange(done)
    signal?.addEventListener('abort', done, { once: true })
  })
}

/** The agent beside this daemon, when --harness names one (its module loaded only then). */
async function newHarness(
  ctx: WiringContext,
  c: HarnessComponents
): Promise<{ service: HarnessService; states: readonly string[] } | undefined> {
  const { config } = ctx
  if (config.harness == null) return undefined
  const { HarnessService, HARNESS_STATES } = await import('./harness-service.js')
  const service = new HarnessService(
    {
      peerId: c.me,
      name: c.name,
      dataDir: config.dataDir,
      apiToken: config.apiToken,
      sandbox: config.sandbox,
      workspace: c.workspace,
      goalMet: () => c.work.goalMet(),
      paused: () => c.boardService.board.paused().paused,
      // a failing harness gives back the tasks its agent works on; those on their way land and are done by the daemon (carry-on)
      held: () => c.boardService.working(),
      release: async (task, note) => await c.work.release(task, note, ''),
      spend: c.spend,
      metrics: c.metrics,
      log: ctx.log,
      acp: {
        permissions: config.acpPermissions,
        inbox: c.inbox,
        onInbox: l =>
          c.onInbox(() => {
            l()
          }),
        // no new turn while the budget is reached or the provider is limited: the session waits and asks again
        waitForWork: async (timeoutMs, signal) => {
          const hold = c.spend.gate()
          if (hold == null) return await c.work.waitForWork(timeoutMs, signal)
          await heldFor(Math.min(hold.waitMs, timeoutMs), signal, c.spend)
          return { reason: 'timeout', ready: [], unread: 0, text: '' }
        },
        recordTurn: (usage, ms) => {
          const report = {
            usage:
              usage == null
                ? []
                : [
                    {
                      model: '',
                      inputTokens: usage.input,
                      cacheReadTokens: usage.cachedRead,
                      cacheWriteTokens: usage.cachedWrite,
                      outputTokens: usage.output + usage.thought,
                      usd: null
                    }
                  ],
            limit: null
          }
          c.spend.recordRun(report, ms, config.harness ?? '').catch(err => {
            ctx.log.warn({ err }, "cannot record the turn's usage")
          })
        },
        goalMet: () => c.work.goalMet(),
        held: () => c.work.held(),
        metrics: c.metrics,
        events: ctx.events,
        setStatusLine: async text => {
          await c.contact.setStatusLine(text)
        },
        paused: () => c.boardService.board.paused().paused,
        approvals: c.approvals
      }
    },
    config.harness,
    config.harnessPolicy
  )
  return { service, states: HARNESS_STATES }
}

interface RepositoryComponents {
  me: string
  name: string
  metrics: Metrics
  boardService: BoardService
  logService: LogService
  assists: AssistService
  logger: (part: string) => Logger
  notify: (peer: string, text: string) => Promise<void>
  notice: (text: string, task: string, once: string) => void
}

/**
 * The shared repository's parts, when --repo names one (their modules, git
 * and its helpers, loaded only then: a tenth of a second of a start).
 */
async function newRepository(
  ctx: WiringContext,
  repo: NonNullable<DaemonConfig['repo']>,
  c: RepositoryComponents
): Promise<{ service: RepoService; workspace: RepoWorkspace; background: BackgroundIntegration }> {
  const [{ RepoWorkspace }, { DirectIntegration }, { BackgroundIntegration }, { Integrator }, { RepoService }] = await Promise.all([
    import('./repo-workspace.js'),
    import('./integration.js'),
    import('./background-integration.js'),
    import('./integrator.js'),
    import('./repo-service.js')
  ])
  const logger = c.logger('repo')
  const base = { me: c.me, board: c.boardService, log: c.logService, metrics: c.metrics, logger }
  const workspace = new RepoWorkspace(
    { me: c.me, name: c.name, board: c.boardService, logger },
    {
      remote: repo.remote,
      branch: repo.branch,
      workdir: repo.workdir ?? join(ctx.config.dataDir, 'workspace'),
      mirrorDir: repo.mirrorDir,
      wipPushMs: repo.wipPushMs
    }
  )
  const integration = new DirectIntegration({ ...base, workspace, assists: c.assists }, { verify: repo.verify })
  const integrator = new Integrator({
    ...base,
    notify: c.notify,
    workspace: () => workspace.workspace,
    verifyCommand: () => integration.verifyCommand()
  })
  const background = new BackgroundIntegration(
    { ...base, workspace, integration, integrator, notice: c.notice },
    { integratorWindowMs: repo.integratorWindowMs }
  )
  return { service: new RepoService({ workspace, integration, background, integrator }), workspace, background }
}
