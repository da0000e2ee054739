// What an agent needs from `status` on every turn, small enough to read each
// time: itself (held tasks, unread count), the goal, the tasks that are in
// play (one line each), the live peers, the tests. Long lists are cut and
// summarised, so 200 tasks and 64 peers stay within a few KiB; `--full` and
// `task show` give the rest.
import type { PeerInfo, StatusReply, TaskView } from '../gen/agency/v1/api.js'

export const DIGEST_LIMITS = { activeTasks: 40, readyTasks: 20, peers: 16, goalChars: 400, statusChars: 80 } as const

export interface TaskLine {
  id: string
  state: string
  holder: string
  epoch: number
}

export interface StatusDigest {
  you: { name: string; id: string; status: string; held: TaskLine[]; unread: number }
  goal: string
  tests: string
  goalMet: boolean
  /** whether a review costs no task's time now (core/board/review-timing): some agent has nothing to claim */
  reviews: string
  /** pending: tasks a peer's claim is settling on ("task (peer)"), left out of ready */
  tasks: { total: number; byState: Record<string, number>; inPlay: TaskLine[]; ready: string[]; pending: string[]; notShown: number }
  /** sandbox: what each peer's agent runs in (bwrap | none), as its heartbeats say; '' without a harness */
  peers: { live: number; shown: Array<{ name: string; holds: string[]; status: string; sandbox: string }>; notShown: number }
  harness: string
  workspace: string
  /** an operator paused the swarm: no new harness runs or turns */
  paused: boolean
  /** who steers: the operator keys' count and where they come from, or that there is none */
  operator: string
  approvalsPending: number
  /** the swarm's spend so far and its budget: "budget reached" when no new run starts */
  spend: string
}

export function statusDigest(s: StatusReply): StatusDigest {
  const names = new Map<string, string>()
  for (const p of s.livePeers) names.set(p.peerId, p.name)
  if (s.self != null) names.set(s.self.peerId, s.self.name)
  const nameOf = (id: string): string => names.get(id) ?? (id.length > 12 ? `…${id.slice(-8)}` : id)
  const line = (t: TaskView): TaskLine => ({ id: t.id, state: t.state, holder: t.holder !== '' ? nameOf(t.holder) : '', epoch: t.epoch })
  const byPriority = (a: TaskView, b: TaskView): number => b.priority - a.priority || a.id.localeCompare(b.id)
  const done = new Set(s.tasks.filter(t => t.state === 'done').map(t => t.id))
  const inPlay = s.tasks.filter(t => t.state === 'claimed' || t.state === 'expired').sort(byPriority)
  const settling = new Set((s.pending ?? []).map(p => p.task))
  const ready = s.tasks
    .filter(t => (t.state === 'open' || t.state === 'expired') && t.deps.every(d => done.has(d)) && !settling.has(t.id))
    .sort(byPriority)
  const pending = (s.pending ?? []).slice(0, DIGEST_LIMITS.readyTasks).map(p => `${p.task} (${nameOf(p.peer)})`)
  const shownInPlay = inPlay.slice(0, DIGEST_LIMITS.activeTasks)
  const shownReady = ready.slice(0, DIGEST_LIMITS.readyTasks)
  const peers = [...s.livePeers].sort((a, b) => b.claims.length - a.claims.length || a.name.localeCompare(b.name))
  const t = s.tests
  const tests =
    t == null || t.runs === 0
      ? 'no test run on the shared branch yet'
      : `${t.passed} passed, ${t.failed} failed of ${t.total} on ${t.commit.slice(0, 12)} (${t.runs} runs)`
  const h = s.harness
  return {
    you: { name: s.self?.name ?? '', id: s.self?.peerId ?? '', status: s.self?.status ?? '', held: s.held.map(line), unread: s.unread },
    goal:
      s.goal == null
        ? ''
        : clip(s.goal.text, DIGEST_LIMITS.goalChars) + (s.goal.testCommand !== '' ? ` (tests: ${s.goal.testCommand})` : ''),
    tests,
    goalMet: s.goalMet,
    reviews: s.reviewersFree
      ? `worth asking: ${s.agentsFree} agent(s) with no task at work, ${ready.length} ready`
      : `not now: ${ready.length} ready for ${s.agentsFree} agent(s) with no task at work, so a review would cost a task's time`,
    tasks: {
      total: s.tasks.length,
      byState: s.tasksByState,
      inPlay: shownInPlay.map(line),
      ready: shownReady.map(r => r.id),
      pending,
      notShown: inPlay.length - shownInPlay.length + (ready.length - shownReady.length)
    },
    peers: {
      live: s.peersLive,
      shown: peers.slice(0, DIGEST_LIMITS.peers).map((p: PeerInfo) => ({
        name: p.name,
        holds: p.claims.map(c => `${c.task}@${c.epoch}`),
        status: clip(p.status, DIGEST_LIMITS.statusChars),
        sandbox: p.sandbox
      })),
      notShown: Math.max(0, peers.length - DIGEST_LIMITS.peers)
    },
    harness:
      h == null ? '' : `${h.name} ${h.state}${h.sandbox !== '' ? ` (sandbox ${h.sandbox})` : ''}${h.note !== '' ? `: ${h.note}` : ''}`,
    workspace: s.workspace,
    paused: s.paused,
    operator:
      s.operators.length === 0
        ? 'none: any member may set the goal (start agentd with --operator <key> to have one)'
        : `${s.operators.length} operator key(s), from ${s.operatorSource === 'goal' ? 'the first goal' : "the daemon's configuration"}${s.pauseReason !== '' ? `; paused: ${clip(s.pauseReason, DIGEST_LIMITS.statusChars)}` : ''}`,
    approvalsPending: s.approvalsPending,
    spend: spendLine(s.spend)
  }
}

/** The digest as lines for people (and agents reading a shell). */
export function digestLines(d: StatusDigest): string[] {
  const held = d.you.held.length > 0 ? d.you.held.map(t => `${t.id}@${t.epoch}`).join(', ') : 'nothing'
  const out = [`you: ${d.you.name} (${d.you.id}) hold ${held}; ${d.you.unread} unread${d.you.unread > 0 ? ' (agency inbox)' : ''}`]
  if (d.paused) out.push('PAUSED by the operator: no new runs or turns until the operator resumes the swarm')
  if (d.goal !== '') out.push(`goal: ${d.goal}${d.goalMet ? ' — MET: stop' : ''}`)
  else out.push('goal: none yet (agency goal set "<goal>" --test "<command>")')
  const states = Object.entries(d.tasks.byState)
    .map(([k, v]) => `${v} ${k}`)
    .join(', ')
  out.push(`tasks: ${d.tasks.total}${states !== '' ? ` (${states})` : ''}`)
  for (const t of d.tasks.inPlay) out.push(`  ${t.id} ${t.state} ${t.holder}@${t.epoch}`)
  if (d.tasks.ready.length > 0) out.push(`ready: ${d.tasks.ready.join(', ')}`)
  if (d.tasks.pending.length > 0) out.push(`pending (a peer's claim is settling): ${d.tasks.pending.join(', ')}`)
  if (d.tasks.notShown > 0) out.push(`  (${d.tasks.notShown} more not shown: agency task list)`)
  out.push(`peers: ${d.peers.live} live`)
  for (const p of d.peers.shown)
    out.push(
      `  ${p.name}${p.sandbox !== '' ? ` (sandbox ${p.sandbox})` : ''}${p.holds.length > 0 ? ` holds ${p.holds.join(',')}` : ''}${p.status !== '' ? ` — ${p.status}` : ''}`
    )
  if (d.peers.notShown > 0) out.push(`  (${d.peers.notShown} more: agency peers)`)
  out.push(`tests: ${d.tests}`)
  if (d.tasks.total > 0) out.push(`reviews: ${d.reviews}`)
  if (d.harness !== '') out.push(`harness: ${d.harness}`)
  if (d.workspace !== '') out.push(`workspace: ${d.workspace}`)
  out.push(`operator: ${d.operator}`)
  if (d.approvalsPending > 0) out.push(`approvals: ${d.approvalsPending} waiting for the operator (agency approvals)`)
  if (d.spend !== '') out.push(`spend: ${d.spend}`)
  return out
}

/** The swarm's total and its budget in one line; '' before anything was spent or capped. */
export function spendLine(b: StatusReply['spend']): string {
  if (b == null) return ''
  const t = b.spent
  const caps = b.budget != null && (b.budget.usd > 0 || b.budget.tokens > 0 || b.budget.hours > 0 || b.budget.perAgentUsd > 0)
  if ((t == null || t.runs === 0) && !caps && b.hold == null) return ''
  const tokens = (t?.inputTokens ?? 0) + (t?.outputTokens ?? 0)
  const total = `swarm ${tokens.toLocaleString('en-US')} tokens, $${(t?.usd ?? 0).toFixed(2)}${t?.estimated === true ? ' (est.)' : ''}`
  const budget = !caps
    ? 'no budget'
    : b.reached
      ? `budget reached (${b.reasons.join('; ')}): no new run starts until it is raised`
      : 'within budget'
  const hold = b.hold != null && b.hold.until > 0 ? `; provider limited until ${new Date(b.hold.until).toISOString()}` : ''
  return `${total}; ${budget}${hold}`
}

function clip(text: string, max: number): string {
  const one = text.replace(/\s+/g, ' ').trim()
  return one.length > max ? `${one.slice(0, max - 1)}…` : one
}
