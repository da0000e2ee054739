// Which ready task a daemon claims when its agent asks for "the next one"
// (`agency claim --next`, the MCP claim tool with no task), sans-IO.
//
// Agents that all take the first ready task collide on it: every one of them
// writes a claim for the same task, waits a settle window, and all but one
// lose and go again, one task per window. Ranking the tasks by a rendezvous
// hash of (agent id, task id) alone spreads the first choices, but
// independent hashes still collide (64 agents over 128 tasks: about 13 of
// them share a first choice), and each collision costs a second window. So
// each daemon computes one matching of the agents that may be choosing (this
// one and the live peers holding nothing) to the ready tasks, the same on
// every daemon with the same view, and claims its own match first: with equal
// views no two agents pick the same task while tasks remain; views that
// differ cost a conflict, which the claim protocol resolves as before. And it
// skips a task that a peer's claim is settling on (a claim that reached this
// daemon less than a settle window ago and holds the task by the holder
// rule), which `ready` shows as pending, with the peer.

import type { Board, TaskView } from './board.js'

/** A task a peer's claim is settling on: not worth claiming while it settles. */
export interface PendingTask {
  task: string
  /** the peer whose claim holds the task by the holder rule */
  peer: string
  epoch: number
  /** when its window ends, on this daemon's clock, at the latest (it is counted from receipt) */
  settlesAt: number
}

/** What `ready` shows: tasks to claim (priority, then id) and tasks that peers' claims are settling on. */
export interface ReadyChoice {
  ready: TaskView[]
  pending: PendingTask[]
}

interface Received {
  author: string
  epoch: number
  at: number
}

/**
 * When peers' claims reached this daemon, on its own clock: the only time a
 * peer's settle window can be judged by (the author's wall clock decides
 * nothing). Kept for a bounded time: claims older than `keepMs` are
 * forgotten, since no window is that long.
 */
export class RecentPeerClaims {
  private readonly byTask = new Map<string, Received[]>()
  /** hand-offs by speed folded in: task -> the receiver and when its release came */
  private readonly handoffs = new Map<string, { to: string; at: number }>()
  private readonly keepMs: number
  private oldest = Number.POSITIVE_INFINITY

  constructor(keepMs = 30_000) {
    this.keepMs = keepMs
  }

  /** A peer's claim on `task` at `epoch` was folded in at `now`. */
  record(task: string, author: string, epoch: number, now: number): void {
    this.prune(now)
    const list = this.byTask.get(task) ?? []
    if (!list.some(r => r.author === author && r.epoch === epoch)) list.push({ author, epoch, at: now })
    this.byTask.set(task, list)
    this.oldest = Math.min(this.oldest, now)
  }

  /** A release handing `task` to `to` by speed was folded in at `now`. */
  recordHandoff(task: string, to: string, now: number): void {
    for (const [t, h] of this.handoffs) if (now - h.at > this.keepMs) this.handoffs.delete(t)
    this.handoffs.set(task, { to, at: now })
  }

  /** Whether `task` was handed to `to` less than the keep time ago (its receiver has that long to claim it). */
  handedRecently(task: string, to: string, now: number): boolean {
    const h = this.handoffs.get(task)
    return h !== undefined && h.to === to && now - h.at <= this.keepMs
  }

  /** When the claim of `author` on `task` at `epoch` arrived, if it did recently. */
  receivedAt(task: string, author: string, epoch: number): number | undefined {
    return this.byTask.get(task)?.find(r => r.author === author && r.epoch === epoch)?.at
  }

  /** Tasks with a peer's claim received since `since`. */
  tasksSince(since: number): string[] {
    const out: string[] = []
    for (const [task, list] of this.byTask) if (list.some(r => r.at >= since)) out.push(task)
    return out
  }

  get size(): number {
    return this.byTask.size
  }

  private prune(now: number): void {
    if (now - this.oldest <= this.keepMs) return
    let oldest = Number.POSITIVE_INFINITY
    for (const [task, list] of this.byTask) {
      const kept = list.filter(r => now - r.at <= this.keepMs)
      if (kept.length === 0) this.byTask.delete(task)
      else this.byTask.set(task, kept)
      for (const r of kept) oldest = Math.min(oldest, r.at)
    }
    this.oldest = oldest
  }
}

/**
 * Tasks whose holder is a peer whose claim arrived less than `windowMs` ago:
 * not done, with their dependencies done (they would be ready otherwise).
 * Sorted by task id.
 */
export function pendingTasks(board: Board, me: string, now: number, recent: RecentPeerClaims, windowMs: number): PendingTask[] {
  const out: PendingTask[] = []
  for (const task of recent.tasksSince(now - windowMs)) {
    const h = board.holder(task)
    if (h === undefined || h.holder === me) continue
    const at = recent.receivedAt(task, h.holder, h.epoch)
    if (at === undefined || now - at >= windowMs) continue
    const t = board.task(task, now)
    if (t === undefined || t.deps.some(d => board.doneRecord(d) === undefined)) continue
    out.push({ task, peer: h.holder, epoch: h.epoch, settlesAt: at + windowMs })
  }
  return out.sort((a, b) => (a.task < b.task ? -1 : a.task > b.task ? 1 : 0))
}

/** The ready tasks minus those a peer's claim is settling on, and those pending ones. */
export function readyChoice(board: Board, me: string, now: number, recent: RecentPeerClaims, windowMs: number): ReadyChoice {
  const pending = pendingTasks(board, me, now, recent, windowMs)
  const settling = new Set(pending.map(p => p.task))
  // A task handed to another agent by speed waits for it while it is live and free (board.handedTo), for the
  // keep time after the release came here at most: a receiver that does not claim it (a daemon that predates
  // hand-off) holds nobody up for long.
  return { ready: board.ready(now).filter(t => !settling.has(t.id) && !handedAway(board, t, me, now, recent)), pending }
}

/** Whether `t` is reserved for another agent than `me` by a hand-off by speed (see readyChoice). */
export function handedAway(board: Board, t: TaskView, me: string, now: number, recent: RecentPeerClaims): boolean {
  const to = t.handoff?.to ?? ''
  return to !== '' && to !== me && recent.handedRecently(t.id, to, now) && board.handedTo(t.id, now) !== undefined
}

/**
 * `me`'s order of preference over `tasks`: higher priority first; among equal
 * priorities, the higher rendezvous score of (me, task) first (then task id,
 * should two scores tie). Every agent ranks the same tasks differently, and
 * a task leaving the list changes nobody's order of the others.
 */
export function preferenceOrder(me: string, tasks: readonly TaskView[]): TaskView[] {
  const scored = tasks.map(t => ({ t, score: rendezvousScore(me, t.id) }))
  scored.sort((a, b) => b.t.priority - a.t.priority || b.score - a.score || (a.t.id < b.t.id ? -1 : a.t.id > b.t.id ? 1 : 0))
  return scored.map(s => s.t)
}

/**
 * The tasks `me` would claim next, best first: the ready ones no peer's claim
 * is settling on, without those in `skip` (tried already by this call). With
 * `seekers` (the agents that may be choosing now, `me` among them): `me`'s
 * match in `matchSeekers` first, then the tasks matched to nobody, then those
 * matched to other agents, each part in `me`'s preference order. Without,
 * `me`'s preference order.
 */
export function nextChoices(
  choice: ReadyChoice,
  me: string,
  skip: ReadonlySet<string> = new Set(),
  seekers?: readonly string[]
): TaskView[] {
  const tasks = choice.ready.filter(t => !skip.has(t.id))
  if (seekers === undefined) return preferenceOrder(me, tasks)
  const byTask = matchSeekers([...seekers, me], tasks)
  const mine: TaskView[] = []
  const unmatched: TaskView[] = []
  const others: TaskView[] = []
  for (const t of tasks) {
    const agent = byTask.get(t.id)
    if (agent === me) mine.push(t)
    else if (agent === undefined) unmatched.push(t)
    else others.push(t)
  }
  return [...mine, ...preferenceOrder(me, unmatched), ...preferenceOrder(me, others)]
}

/**
 * A matching of agents to tasks, task id -> agent, that every daemon computes
 * alike from the same agents and tasks (in whatever order they are given):
 * the tasks in ready's order (priority, then id), each to the agent not yet
 * matched with the highest rendezvous score for it (then the smaller id). A
 * task goes to no agent that handed it back (its hand-off is from that
 * agent), so a peer gets it first. Stops once every agent is matched: at most
 * agents x agents scores.
 *
 * Taking out a matched pair (an agent whose claim arrived, with its task, now
 * pending) leaves every other pair as it was: each task before it chose among
 * the same agents, and each after it among the same ones left. So the
 * matching holds still while the claims it led to come in.
 */
export function matchSeekers(agents: readonly string[], tasks: readonly TaskView[]): Map<string, string> {
  const free = [...new Set(agents)].sort(compareId).map(agent => ({ agent, score: rendezvousScorer(agent) }))
  const order = [...tasks].sort((a, b) => b.priority - a.priority || compareId(a.id, b.id))
  const byTask = new Map<string, string>()
  for (const t of order) {
    if (free.length === 0) break
    let best = -1
    let bestScore = -1
    for (let i = 0; i < free.length; i++) {
      if (t.handoff?.from === free[i].agent) continue
      const s = free[i].score(t.id)
      // Agents are sorted by id: on a tie the first (smaller id) stays.
      if (s > bestScore) {
        best = i
        bestScore = s
      }
    }
    if (best < 0) continue
    byTask.set(t.id, free[best].agent)
    free.splice(best, 1)
  }
  return byTask
}

function compareId(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/**
 * A 32-bit score for the pair (agent, task): FNV-1a over both strings (with a
 * separator no id contains), finished with murmur3's avalanche so that ids
 * differing in one character score unrelated values.
 */
export function rendezvousScore(agent: string, task: string): number {
  return rendezvousScorer(agent)(task)
}

/** `rendezvousScore(agent, task)` for one agent and many tasks: the agent's part of the hash is done once. */
export function rendezvousScorer(agent: string): (task: string) => number {
  // a 0 byte between the two (xor with 0 is a no-op)
  const prefix = Math.imul(fnv1a(0x811c9dc5, agent), 0x01000193)
  return task => {
    let h = fnv1a(prefix, task)
    h ^= h >>> 16
    h = Math.imul(h, 0x85ebca6b)
    h ^= h >>> 13
    h = Math.imul(h, 0xc2b2ae35)
    h ^= h >>> 16
    return h >>> 0
  }
}

function fnv1a(h: number, s: string): number {
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h
}
