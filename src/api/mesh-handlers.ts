// gRPC handlers for presence, peers, direct messages, announcements and events.
import type { AgencyServer, InboxMessage, PeerInfo, StatusReply } from '../gen/agency/v1/api.js'
import type { PeerContact, PeerView } from '../daemon/peer-contact.js'
import type { AgentInbox, InboxItem } from '../daemon/agent-inbox.js'
import type { AgentWork } from '../daemon/agent-work.js'
import type { BoardService } from '../daemon/board-service.js'
import type { LogService } from '../daemon/log-service.js'
import type { EventBus } from '../daemon/event-bus.js'
import type { HarnessService } from '../daemon/harness-service.js'
import type { SpendService } from '../daemon/spend-service.js'
import type { DaemonConfig } from '../daemon/config.js'
import type { MessageStore } from '../store/index.js'
import type { MeshLibp2p } from '../mesh/node.js'
import { InvalidArgumentError } from '../core/errors.js'
import { serverStream, unary } from './grpc-errors.js'
import { WakeSignal } from './wake-signal.js'
import { VERSION } from '../version.js'
import { operatorStatus } from './operator-status.js'
import { goalMessage, pendingMessage, taskMessage } from './board-handlers.js'
import { agentsAtWork, freeAgentCount, reviewersFree } from '../core/board/index.js'

export function peerInfo(p: PeerView): PeerInfo {
  return {
    peerId: p.peerId,
    name: p.name,
    status: p.status,
    live: p.live,
    connected: p.connected,
    lastSeenMsAgo: Math.round(p.lastSeenMsAgo),
    addrs: p.addrs,
    claims: p.claims,
    harness: p.harness,
    sandbox: p.sandbox
  }
}

function inboxMessage(item: InboxItem): InboxMessage {
  const r = item.record
  const m = r.message
  return {
    cursor: r.cursor,
    id: m.id,
    from: m.from,
    fromName: m.fromName,
    thread: m.thread,
    replyTo: m.replyTo,
    text: m.text,
    time: m.time,
    receivedAt: r.receivedAt,
    kind: item.kind,
    task: item.task
  }
}

/** What the status answer reads of the daemon. */
export interface StatusParts {
  config: Pick<DaemonConfig, 'swarm'>
  boardService: Pick<BoardService, 'board' | 'now' | 'readyChoice' | 'protocol' | 'working' | 'held'>
  work: Pick<AgentWork, 'testSummary' | 'workspacePath' | 'goalMet'>
  contact: Pick<PeerContact, 'peers' | 'selfView' | 'listenAddrs'>
  inbox: Pick<AgentInbox, 'unread'>
  store: { messages: Pick<MessageStore, 'inboxCount' | 'outboxCount'> }
  logService: Pick<LogService, 'state'>
  node: Pick<MeshLibp2p, 'getPeers'>
  harness?: Pick<HarnessService, 'info'>
  spend?: Pick<SpendService, 'budget'>
  uptimeSeconds: () => number
}

/** What the mesh's handlers use of the daemon. */
export interface MeshApiParts extends StatusParts {
  work: Pick<AgentWork, 'testSummary' | 'workspacePath' | 'goalMet' | 'readInbox'>
  contact: Pick<PeerContact, 'peers' | 'selfView' | 'listenAddrs' | 'setStatusLine' | 'sendMessage' | 'readMessages' | 'announce'>
  inbox: Pick<AgentInbox, 'unread' | 'item'>
  events: Pick<EventBus, 'subscribe'>
  /** calls back whenever a new item reaches the agent's inbox; returns the unsubscribe function */
  onInbox: (listener: () => void) => () => void
}

export async function meshStatus(d: StatusParts): Promise<StatusReply> {
  const live = d.contact.peers(false)
  const board = d.boardService.board
  const goal = board.goal()
  const tasks = board.tasks(d.boardService.now())
  const tasksByState: Record<string, number> = {}
  for (const t of tasks) tasksByState[t.state] = (tasksByState[t.state] ?? 0) + 1
  const choice = d.boardService.readyChoice()
  const agentsFree = freeAgentCount([d.contact.selfView().peerId, ...live.map(p => p.peerId)], agentsAtWork(board), new Set())
  return {
    self: peerInfo(d.contact.selfView()),
    swarm: d.config.swarm,
    listenAddrs: d.contact.listenAddrs(),
    livePeers: live.map(peerInfo),
    peersConnected: d.node.getPeers().length,
    peersLive: live.length,
    inboxCount: d.store.messages.inboxCount(),
    outboxPending: await d.store.messages.outboxCount(),
    logEntries: d.logService.state.size,
    goal: goal != null ? goalMessage(goal) : undefined,
    tasksByState,
    tasks: tasks.map(taskMessage),
    version: VERSION,
    uptimeSeconds: d.uptimeSeconds(),
    tests: d.work.testSummary(),
    workspace: d.work.workspacePath(),
    unread: d.inbox.unread(),
    held: heldWorkingFirst(d)
      .map(h => board.task(h.task, d.boardService.now()))
      .filter(t => t != null)
      .map(taskMessage),
    goalMet: d.work.goalMet(),
    harness: d.harness?.info(),
    pending: choice.pending.map(p => pendingMessage(p, d.boardService.now())),
    agentsFree,
    reviewersFree: reviewersFree(choice.ready.length, agentsFree),
    ...operatorStatus(board),
    spend: d.spend?.budget()
  }
}

/** The held tasks: the one claim --next answers first, the others worked on, then those on their way to the shared branch (carry-on). */
function heldWorkingFirst(d: Pick<StatusParts, 'boardService'>): Array<{ task: string }> {
  const current = d.boardService.protocol.current()?.task
  const working = d.boardService.working()
  const rank = (task: string): number => (task === current ? 0 : working.some(h => h.task === task) ? 1 : 2)
  return d.boardService
    .held()
    .map((h, i) => ({ h, i }))
    .sort((a, b) => rank(a.h.task) - rank(b.h.task) || a.i - b.i)
    .map(x => x.h)
}

const INBOX_PAGE = 500

export function meshHandlers(
  d: MeshApiParts
): Pick<
  AgencyServer,
  'getStatus' | 'listPeers' | 'setStatusLine' | 'sendMessage' | 'readInbox' | 'watchInbox' | 'announce' | 'watchEvents'
> {
  return {
    getStatus: unary(async () => await meshStatus(d)),
    listPeers: unary(async req => ({ peers: d.contact.peers(req.includeOffline).map(peerInfo) })),
    setStatusLine: unary(async req => {
      await d.contact.setStatusLine(req.status)
      return {}
    }),
    sendMessage: unary(async req => await d.contact.sendMessage({ to: req.to, text: req.text, thread: req.thread, replyTo: req.replyTo })),
    readInbox: unary(async req => {
      const limit = req.limit === 0 ? 100 : req.limit
      if (limit > 10_000) throw new InvalidArgumentError('limit is at most 10000')
      const items = await d.work.readInbox({ after: req.after, limit, all: req.all, peek: req.peek })
      return { messages: items.map(inboxMessage), unread: d.inbox.unread() }
    }),
    watchInbox: serverStream(async (req, write, closed) => {
      const wake = new WakeSignal()
      const unsubscribe = d.onInbox(() => {
        wake.notify()
      })
      try {
        let after = req.after
        while (!closed.aborted) {
          const page = await d.contact.readMessages(after, INBOX_PAGE)
          for (const r of page) {
            write(inboxMessage(d.inbox.item(r)))
            after = r.cursor
          }
          if (page.length < INBOX_PAGE) await wake.wait(closed)
        }
      } finally {
        unsubscribe()
      }
    }),
    announce: unary(async req => ({ id: await d.contact.announce(req.text) })),
    watchEvents: serverStream(async (_req, write, closed) => {
      const unsubscribe = d.events.subscribe(e => {
        write(e)
      })
      await new Promise<void>(resolve => {
        closed.addEventListener(
          'abort',
          () => {
            resolve()
          },
          { once: true }
        )
      })
      unsubscribe()
    })
  }
}
