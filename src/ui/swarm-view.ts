// What the dashboard shows, read from the daemon's own folds: the board,
// the findings index, presence, the log, the inbox and outbox, the harness
// supervisor. Nothing here keeps state of its own beyond memos of the last
// answer, keyed by what the answer depends on. Every list is paged; text a
// peer wrote is passed on as data (JSON) and the page renders it as text.
import { performance } from 'node:perf_hooks'
import type { LogService } from '../daemon/log-service.js'
import type { BoardService } from '../daemon/board-service.js'
import type { PresenceService } from '../daemon/presence-service.js'
import type { AgentWork } from '../daemon/agent-work.js'
import type { DaemonConfig } from '../daemon/config.js'
import type { MessageStore } from '../store/index.js'
import { TASK_STATES, type TaskState, type TaskView } from '../core/board/index.js'
import { overlapPairs } from './overlap-pairs.js'
import { FINDING_KINDS } from '../core/findings/finding-kinds.js'
import { decodeBody } from '../core/log/kinds.js'
import { InvalidArgumentError, NotFoundError } from '../core/errors.js'
import type { FindingHit } from '../core/findings/findings-index.js'
import { clip, pageOf, thin, type Page, type PageRequest } from './paging.js'
import type { SwarmFeed } from './swarm-feed.js'
import type { SpendService } from '../daemon/spend-service.js'
import { VERSION } from '../version.js'

export interface AgentRow {
  peerId: string
  name: string
  self: boolean
  live: boolean
  status: string
  /** tasks it holds on the board (not done), with the epoch */
  held: Array<{ task: string; epoch: number }>
  /** wall time of its last heartbeat here; 0: never heard (known from the log only) */
  lastSeen: number
  /** its harness: idle, running, backing_off, failing, stopped, finished; '' for none or unknown */
  harness: string
  /** what its harness runs in (bwrap, none); '' when not known (peers do not announce it) */
  sandbox: string
}

export interface TaskRow {
  id: string
  title: string
  state: TaskState
  holder: string
  holderName: string
  holderLive: boolean
  epoch: number
  priority: number
  deps: Array<{ id: string; done: boolean }>
  scope: string[]
  commit: string
  doneBy: string
}

export interface FindingRow {
  id: string
  kind: string
  text: string
  paths: string[]
  tags: string[]
  author: string
  authorName: string
  time: number
  superseded: boolean
}

export interface OverlapRow {
  a: { task: string; holder: string; name: string }
  b: { task: string; holder: string; name: string }
  paths: string[]
}

/** Longest status line or harness word passed on; the rest of a peer's long string is of no use on a page. */
const MAX_STATUS_CHARS = 300
const MAX_HARNESS_CHARS = 24
/** Overlap pairs sent at most; the total says how many there are. */
const MAX_OVERLAPS = 500
/** Live claims beyond which overlaps are not computed on request (the pairwise check grows with the square). */
const MAX_OVERLAP_CLAIMS = 2048
/** Entries of one author looked at for its page, newest first. */
const AGENT_SCAN = 5000
/** Inbox messages looked at for one agent's page, newest first. */
const AGENT_INBOX_SCAN = 2000

/** What the dashboard reads of the daemon: its folds, never a write. */
export interface SwarmSource {
  peerId: string
  name: string
  config: Pick<DaemonConfig, 'swarm' | 'harness' | 'sandbox'>
  boardService: Pick<BoardService, 'board'>
  logService: Pick<LogService, 'state' | 'findings'>
  presence: Pick<PresenceService, 'directory' | 'livePeers' | 'status'>
  store: { messages: Pick<MessageStore, 'inboxCount' | 'listOutbox' | 'lastCursor' | 'inboxAfter'> }
  work: Pick<AgentWork, 'testSummary'>
  /** the swarm's spend and budget (absent in a source without one) */
  spend?: Pick<SpendService, 'budget'>
  uptimeSeconds: () => number
}

export interface SwarmViewInit {
  daemon: SwarmSource
  feed: SwarmFeed
  /** this daemon's harness state ('' when it runs none) */
  harnessState: () => string
}

export class SwarmView {
  private readonly d: SwarmSource
  private readonly feed: SwarmFeed
  private readonly harnessState: () => string
  private overlapMemo?: { key: string; rows: OverlapRow[] }
  private integrationMemo?: { size: number; counts: Record<string, number> }

  constructor(init: SwarmViewInit) {
    this.d = init.daemon
    this.feed = init.feed
    this.harnessState = init.harnessState
  }

  private now(): number {
    return performance.now()
  }

  /** A peer's display name: its heartbeat's, else the end of its id. */
  nameOf(peerId: string): string {
    if (peerId === this.d.peerId) return this.d.name
    const n = this.d.presence.directory.get(peerId)?.name
    return n != null && n !== '' ? clip(n, 64) : peerId.slice(-8)
  }

  /** A peer id from an id or a name (as typed in a filter); undefined when nobody has it. */
  resolvePeer(idOrName: string): string | undefined {
    const t = idOrName.trim()
    if (t === '') return undefined
    if (t === this.d.peerId || t === this.d.name) return this.d.peerId
    const p = this.d.presence.directory.resolve(t)
    if (p != null) return p.peerId
    return this.d.logService.state.vector().has(t) ? t : undefined
  }

  // ---- summary ----

  summary(): Record<string, unknown> {
    const d = this.d
    const board = d.boardService.board
    const goal = board.goal()
    const tasks: Record<string, number> = Object.fromEntries(TASK_STATES.map(s => [s, 0]))
    const all = board.tasks(this.now())
    for (const t of all) tasks[t.state]++
    const live = d.presence.livePeers().length + 1
    const known = this.knownPeers().size
    const tests = d.work.testSummary()
    return {
      swarm: d.config.swarm,
      version: VERSION,
      self: { peerId: d.peerId, name: d.name },
      uptimeSeconds: Math.round(d.uptimeSeconds()),
      goal:
        goal == null
          ? null
          : { text: goal.text, testCommand: goal.testCommand, setBy: goal.setBy, setByName: this.nameOf(goal.setBy), time: goal.time },
      tasks: { ...tasks, total: all.length },
      agents: { live, total: known },
      findings: { total: d.logService.findings.size, byKind: this.findingCounts() },
      entries: d.logService.state.size,
      tests:
        tests == null
          ? null
          : {
              passed: tests.passed,
              failed: tests.failed,
              total: tests.total,
              passRate: tests.passRate,
              time: tests.time,
              runs: tests.runs
            },
      integrations: this.integrationCounts(),
      messages: { inbox: d.store.messages.inboxCount(), announcements: this.feed.announcements().length },
      harness: this.harnessState(),
      spend: this.spendSummary()
    }
  }

  /** Tokens and dollars so far, the caps and whether the budget holds new runs. */
  private spendSummary(): Record<string, unknown> | null {
    const b = this.d.spend?.budget()
    if (b == null) return null
    const t = b.spent
    return {
      inputTokens: t?.inputTokens ?? 0,
      outputTokens: t?.outputTokens ?? 0,
      usd: t?.usd ?? 0,
      estimated: t?.estimated ?? false,
      runs: t?.runs ?? 0,
      budget: {
        usd: b.budget?.usd ?? 0,
        tokens: b.budget?.tokens ?? 0,
        hours: b.budget?.hours ?? 0,
        perAgentUsd: b.budget?.perAgentUsd ?? 0
      },
      reached: b.reached,
      reasons: b.reasons,
      holdUntil: b.hold?.until ?? 0
    }
  }

  private findingCounts(): Record<string, number> {
    const counts = this.d.logService.findings.countsByKind()
    const out: Record<string, number> = {}
    for (const k of FINDING_KINDS) out[k] = counts.get(k) ?? 0
    for (const [k, n] of counts) if (!(k in out)) out.other = (out.other ?? 0) + n
    return out
  }

  private integrationCounts(): Record<string, number> {
    const board = this.d.boardService.board
    if (this.integrationMemo?.size !== board.size) {
      const counts: Record<string, number> = { total: 0, merged: 0, conflict: 0, failed: 0 }
      for (const i of board.integrationResults()) {
        counts.total++
        const r = i.result === '' ? 'merged' : i.result
        counts[r in counts ? r : 'failed']++
      }
      this.integrationMemo = { size: board.size, counts }
    }
    return { ...this.integrationMemo.counts }
  }

  // ---- agents ----

  /** Every peer this daemon knows of: itself, those heard in presence, and the authors in the log. */
  private knownPeers(): Set<string> {
    const ids = new Set<string>([this.d.peerId])
    for (const p of this.d.presence.directory.all()) ids.add(p.peerId)
    for (const a of this.d.logService.state.vector().keys()) ids.add(a)
    return ids
  }

  private heldByAgent(): Map<string, Array<{ task: string; epoch: number }>> {
    const out = new Map<string, Array<{ task: string; epoch: number }>>()
    for (const h of this.d.boardService.board.holders().values()) {
      const list = out.get(h.holder) ?? []
      list.push({ task: h.task, epoch: h.epoch })
      out.set(h.holder, list)
    }
    return out
  }

  private agentRow(peerId: string, held: Map<string, Array<{ task: string; epoch: number }>>, nowMono: number, nowWall: number): AgentRow {
    const d = this.d
    if (peerId === d.peerId) {
      return {
        peerId,
        name: d.name,
        self: true,
        live: true,
        status: clip(d.presence.status, MAX_STATUS_CHARS),
        held: held.get(peerId) ?? [],
        lastSeen: nowWall,
        harness: this.harnessState(),
        sandbox: d.config.harness != null ? (d.config.sandbox?.kind ?? 'none') : ''
      }
    }
    const p = d.presence.directory.get(peerId)
    return {
      peerId,
      name: this.nameOf(peerId),
      self: false,
      live: p != null && d.presence.directory.isLive(peerId, nowMono),
      status: clip(p?.status ?? '', MAX_STATUS_CHARS),
      held: held.get(peerId) ?? [],
      lastSeen: p == null ? 0 : Math.round(nowWall - (nowMono - p.lastSeen)),
      harness: clip(p?.harness ?? '', MAX_HARNESS_CHARS),
      sandbox: clip(p?.sandbox ?? '', MAX_HARNESS_CHARS)
    }
  }

  /** Agents, live ones first, then by name; `q` matches name, id or status line; `live` filters. */
  agents(req: PageRequest, filter: { q?: string; live?: 'live' | 'offline' | '' } = {}): Page<AgentRow> {
    const held = this.heldByAgent()
    const mono = this.now()
    const wall = Date.now()
    let rows = [...this.knownPeers()].map(id => this.agentRow(id, held, mono, wall))
    const q = (filter.q ?? '').trim().toLowerCase()
    if (q !== '')
      rows = rows.filter(
        r =>
          r.name.toLowerCase().includes(q) ||
          r.peerId.toLowerCase().includes(q) ||
          r.status.toLowerCase().includes(q) ||
          r.held.some(h => h.task.toLowerCase().includes(q))
      )
    if (filter.live === 'live') rows = rows.filter(r => r.live)
    if (filter.live === 'offline') rows = rows.filter(r => !r.live)
    rows.sort((a, b) => Number(b.live) - Number(a.live) || a.name.localeCompare(b.name) || a.peerId.localeCompare(b.peerId))
    return pageOf(rows, req)
  }

  /** One agent's page: what it is doing, its claims, findings, messages with this daemon, integrations. */
  async agent(idOrName: string): Promise<Record<string, unknown>> {
    const peerId = this.resolvePeer(idOrName)
    if (peerId == null || !this.knownPeers().has(peerId))
      throw new NotFoundError(`no agent ${JSON.stringify(clip(idOrName, 80))} is known to this daemon`)
    const d = this.d
    const board = d.boardService.board
    const row = this.agentRow(peerId, this.heldByAgent(), this.now(), Date.now())
    const claims: Array<{ task: string; epoch: number; time: number; status: string }> = []
    const integrations: Array<{ task: string; epoch: number; result: string; commit: string; time: number }> = []
    const state = d.logService.state
    const last = state.vector().get(peerId) ?? 0
    let entries = 0
    let claimsTotal = 0
    let integrationsTotal = 0
    for (let seq = last; seq >= 1 && last - seq < AGENT_SCAN; seq--) {
      const e = state.byAuthorSeq(peerId, seq)
      if (e == null) continue
      entries++
      try {
        if (e.entry.kind === 'claim') {
          claimsTotal++
          if (claims.length >= 100) continue
          const c = decodeBody('claim', e.entry.body)
          claims.push({ task: c.task, epoch: c.epoch, time: e.entry.time, status: this.claimStatus(c.task, peerId, c.epoch) })
        } else if (e.entry.kind === 'integration') {
          integrationsTotal++
          if (integrations.length >= 100) continue
          const i = decodeBody('integration', e.entry.body)
          integrations.push({
            task: i.task,
            epoch: i.epoch,
            result: i.result === '' ? 'merged' : i.result,
            commit: i.commit,
            time: e.entry.time
          })
        }
      } catch {
        /* a body that does not decode is not shown */
      }
    }
    const findings = d.logService.findings.page({ author: peerId, limit: 50 }, { failuresFirst: true })
    return {
      agent: row,
      seq: last,
      scanned: entries,
      claims: { items: claims, total: claimsTotal },
      done: board
        .tasks(this.now(), 'done')
        .filter(t => t.doneBy === peerId)
        .map(t => ({ task: t.id, commit: t.commit ?? '' })),
      findings: { items: findings.hits.map(h => this.findingRow(h)), total: findings.total },
      integrations: { items: integrations, total: integrationsTotal },
      messages: peerId === d.peerId ? { items: [], total: 0 } : await this.messagesWith(peerId)
    }
  }

  private claimStatus(task: string, author: string, epoch: number): string {
    const board = this.d.boardService.board
    const done = board.doneRecord(task)
    if (done != null && done.by === author && done.epoch === epoch) return 'done'
    const h = board.holder(task)
    if (h != null && h.holder === author && h.epoch === epoch) return 'holds'
    const s = board.claimStatus(task, author, epoch)
    if (s === 'released') return 'released'
    return done != null ? 'done by another' : 'outbid or superseded'
  }

  /**
   * Messages between this daemon and the peer, newest first: received ones
   * among the last inbox messages, and queued ones still undelivered. Messages
   * between two other peers never reach this daemon.
   */
  private async messagesWith(peerId: string): Promise<{ items: unknown[]; total: number }> {
    const store = this.d.store.messages
    const from = Math.max(0, store.lastCursor() - AGENT_INBOX_SCAN)
    const received = (await store.inboxAfter(from, AGENT_INBOX_SCAN)).filter(r => r.message.from === peerId)
    const queued = (await store.listOutbox()).filter(r => r.message.to === peerId)
    const items = [
      ...received.map(r => ({
        direction: 'in',
        from: peerId,
        to: this.d.peerId,
        time: r.message.time,
        chars: r.message.text.length,
        delivered: true
      })),
      ...queued.map(r => ({
        direction: 'out',
        from: this.d.peerId,
        to: peerId,
        time: r.message.time,
        chars: r.message.text.length,
        delivered: false
      }))
    ].sort((a, b) => b.time - a.time)
    return { items: items.slice(0, 100), total: items.length }
  }

  // ---- board ----

  private taskRow(t: TaskView): TaskRow {
    const board = this.d.boardService.board
    return {
      id: t.id,
      title: clip(t.title, 200),
      state: t.state,
      holder: t.holder ?? '',
      holderName: t.holder != null ? this.nameOf(t.holder) : '',
      holderLive: t.holderLive,
      epoch: t.epoch,
      priority: t.priority,
      deps: t.deps.map(id => ({ id, done: board.doneRecord(id) != null })),
      scope: t.claimScope.length > 0 ? t.claimScope : t.scope,
      commit: t.commit ?? '',
      doneBy: t.doneBy ?? ''
    }
  }

  private filteredTasks(state: TaskState | undefined, q: string): TaskView[] {
    let tasks = this.d.boardService.board.tasks(this.now(), state)
    const words = q.trim().toLowerCase()
    if (words !== '') {
      tasks = tasks.filter(
        t =>
          t.id.toLowerCase().includes(words) ||
          t.title.toLowerCase().includes(words) ||
          (t.holder != null && (t.holder.toLowerCase().includes(words) || this.nameOf(t.holder).toLowerCase().includes(words)))
      )
    }
    // The planning task comes first: holding it is the swarm's only election.
    return tasks.sort(
      (a, b) => Number(b.id === 'plan') - Number(a.id === 'plan') || b.priority - a.priority || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
    )
  }

  /** The board by state: counts, and the first page of every column. */
  board(limit: number, q = ''): Record<string, unknown> {
    const tasks = this.filteredTasks(undefined, q)
    const columns: Record<string, Page<TaskRow>> = {}
    for (const s of TASK_STATES) {
      const inState = tasks.filter(t => t.state === s)
      const page = pageOf(inState, { offset: 0, limit })
      columns[s] = { ...page, items: page.items.map(t => this.taskRow(t)) }
    }
    const goal = this.d.boardService.board.goal()
    return { goal: goal == null ? null : { text: goal.text, setByName: this.nameOf(goal.setBy) }, columns }
  }

  /** One page of one column. */
  tasks(state: string, req: PageRequest, q = ''): Page<TaskRow> {
    if (!(TASK_STATES as readonly string[]).includes(state))
      throw new InvalidArgumentError(`unknown task state ${JSON.stringify(clip(state, 40))}: use ${TASK_STATES.join(', ')}`)
    const page = pageOf(this.filteredTasks(state as TaskState, q), req)
    return { ...page, items: page.items.map(t => this.taskRow(t)) }
  }

  /**
   * Live claims of different agents whose scopes share a path, with the
   * agents' names: the edges of the overlap graph. Memoised on the board's
   * size and the live claims, which is all the answer depends on.
   */
  overlaps(): { items: OverlapRow[]; total: number; claims: number; skipped: boolean } {
    const board = this.d.boardService.board
    const now = this.now()
    const live = board.liveClaims(now)
    if (live.length > MAX_OVERLAP_CLAIMS) return { items: [], total: 0, claims: live.length, skipped: true }
    const key = `${board.size}|${live.map(c => `${c.task}@${c.epoch}:${c.holder}`).join(',')}`
    if (this.overlapMemo?.key !== key) {
      const rows = overlapPairs(live).map(o => ({
        a: { task: o.a.task, holder: o.a.holder, name: this.nameOf(o.a.holder) },
        b: { task: o.b.task, holder: o.b.holder, name: this.nameOf(o.b.holder) },
        paths: o.globs.map(([x, y]) => (x === y ? x : `${x} ~ ${y}`))
      }))
      this.overlapMemo = { key, rows }
    }
    const rows = this.overlapMemo.rows
    return { items: rows.slice(0, MAX_OVERLAPS), total: rows.length, claims: live.length, skipped: false }
  }

  // ---- findings ----

  private findingRow(h: FindingHit): FindingRow {
    return {
      id: h.id,
      kind: h.finding.kind,
      text: h.finding.text,
      paths: h.finding.paths,
      tags: h.finding.tags,
      author: h.entry.entry.author,
      authorName: this.nameOf(h.entry.entry.author),
      time: h.entry.entry.time,
      superseded: h.superseded
    }
  }

  /** Findings: full-text query and filters; failures first unless a kind is asked for. */
  findings(
    req: PageRequest,
    filter: { q?: string; kind?: string; path?: string; author?: string }
  ): Page<FindingRow> & { authorUnknown?: boolean } {
    const authorText = (filter.author ?? '').trim()
    const author = authorText === '' ? '' : this.resolvePeer(authorText)
    if (author == null) return { items: [], total: 0, offset: req.offset, limit: req.limit, authorUnknown: true }
    const kind = filter.kind ?? ''
    const page = this.d.logService.findings.page(
      { query: filter.q ?? '', kind, pathPrefix: filter.path ?? '', author, offset: req.offset, limit: req.limit },
      { failuresFirst: kind === '' }
    )
    return { items: page.hits.map(h => this.findingRow(h)), total: page.total, offset: req.offset, limit: req.limit }
  }

  // ---- messages ----

  /** This daemon's inbox, newest first: who wrote, when, how long; not the text (it was written to this agent). */
  async inbox(req: PageRequest): Promise<Page<Record<string, unknown>>> {
    const messages = this.d.store.messages
    const last = messages.lastCursor()
    const total = messages.inboxCount()
    const to = last - req.offset
    const from = Math.max(0, to - req.limit)
    const records = to <= 0 ? [] : await messages.inboxAfter(from, to - from)
    const me = this.d.peerId
    const items = records.reverse().map(r => ({
      cursor: r.cursor,
      from: r.message.from,
      fromName: r.message.fromName !== '' ? clip(r.message.fromName, 64) : this.nameOf(r.message.from),
      to: me,
      toName: this.d.name,
      thread: clip(r.message.thread, 64),
      time: r.message.time,
      receivedAt: r.receivedAt,
      chars: r.message.text.length
    }))
    return { items, total, offset: req.offset, limit: req.limit }
  }

  /** Messages this daemon still has to deliver: to whom, since when, how many attempts. */
  async outbox(req: PageRequest): Promise<Page<Record<string, unknown>>> {
    const queued = await this.d.store.messages.listOutbox()
    const rows = queued.reverse().map(r => ({
      id: r.message.id,
      from: this.d.peerId,
      fromName: this.d.name,
      to: r.message.to,
      toName: this.nameOf(r.message.to),
      time: r.message.time,
      attempts: r.attempts,
      chars: r.message.text.length
    }))
    return pageOf(rows, req)
  }

  /** Announcements heard since the dashboard started, newest first, with their text. */
  announcements(req: PageRequest): Page<Record<string, unknown>> {
    const all = this.feed.announcements()
    const total = all.length
    const end = total - req.offset
    const start = Math.max(0, end - req.limit)
    const items =
      end <= 0
        ? []
        : all
            .slice(start, end)
            .reverse()
            .map(a => ({ ...a, name: a.name !== '' ? clip(a.name, 64) : this.nameOf(a.from) }))
    return { items, total, offset: req.offset, limit: req.limit }
  }

  // ---- tests and integrations ----

  /**
   * Test runs and integrations over time for the plot, thinned to `points`
   * each, as tuples to keep a 2000-point answer small: runs are
   * [time, passed, total]; integrations are [time, result, pass rate of the
   * run on their commit or null], result 0 merged, 1 conflict, 2 failed.
   */
  runs(points: number): Record<string, unknown> {
    const board = this.d.boardService.board
    const runs = board.testRuns().sort((a, b) => a.time - b.time)
    const integrations = board.integrationResults().sort((a, b) => a.time - b.time)
    const rateByCommit = new Map(runs.map(r => [r.commit, r.total > 0 ? r.passed / r.total : 0]))
    const code = (result: string): number => (result === '' || result === 'merged' ? 0 : result === 'conflict' ? 1 : 2)
    return {
      runs: thin(runs, points).map(r => [r.time, r.passed, r.total]),
      integrations: thin(integrations, points).map(i => [
        i.time,
        code(i.result),
        i.commit !== '' ? (rateByCommit.get(i.commit) ?? null) : null
      ]),
      totals: { runs: runs.length, integrations: integrations.length }
    }
  }

  /** Integrations, newest first, with the test run of their commit when there is one. */
  integrations(req: PageRequest): Page<Record<string, unknown>> {
    const board = this.d.boardService.board
    const runByCommit = new Map<string, { passed: number; total: number }>()
    for (const r of board.testRuns()) runByCommit.set(r.commit, { passed: r.passed, total: r.total })
    const all = board.integrationResults().sort((a, b) => b.time - a.time)
    const page = pageOf(all, req)
    return {
      ...page,
      items: page.items.map(i => ({
        time: i.time,
        task: i.task,
        epoch: i.epoch,
        result: i.result === '' ? 'merged' : i.result,
        commit: i.commit,
        author: i.author,
        authorName: this.nameOf(i.author),
        tests: runByCommit.get(i.commit) ?? null
      }))
    }
  }
}
