// What a simulated run measures, the same way for every strategy: when each
// hidden test first passed, every interval an agent spent working on a task,
// trap hits (and whether the trap had already been recorded by then), claim
// settle times, and coordination traffic by kind. Also what the hazards
// cost (src/sim/swarm-model/hazards.ts): how long the shared branch had broken tests, and
// agent time by what it went on, so that waste (work thrown away or spent
// undoing harm) and the redundancy helpers are budgeted (parallel attempts on
// the critical path) are reported apart.

/**
 * Agent time that is not a plain attempt, by kind. Waste: `repair` (fixing
 * tests someone else's unverified merge broke), `mismatch` (repairing an
 * interface two overlapping tasks built apart disagree on), `defect` (fixing
 * a dependency's defect that got past review), `verifyWait` (re-verifying
 * after losing the race to the shared branch), `lost` (work a stalled holder
 * handed off or a fenced merge threw away). Overhead, not waste: `review`,
 * `reviewFix`, `breakFix` (fixing one's own change the verify caught),
 * `verify` (running the whole suite on one's own merge), `integrationWait`
 * (waiting for one's batch to land). Budgeted
 * redundancy: `helping` (helper attempts that lost the race, holders stopped
 * because a helper passed first).
 */
export const WASTE_KINDS = ['repair', 'mismatch', 'defect', 'verifyWait', 'lost'] as const
export const OVERHEAD_KINDS = ['review', 'reviewFix', 'breakFix', 'verify', 'integrationWait'] as const
/** Overhead spent outside any attempt (a review's fix is owed work done inside the author's next attempt). */
const OUTSIDE_ATTEMPTS = ['review', 'breakFix', 'verify', 'integrationWait'] as const
export type SpendKind = (typeof WASTE_KINDS)[number] | (typeof OVERHEAD_KINDS)[number] | 'helping'

export interface TrafficTotals {
  messages: number
  bytes: number
}

export interface SettleStats {
  count: number
  p50: number
  p99: number
  max: number
}

export interface RunResult {
  strategy: string
  /** label for tables and plots, e.g. "agency" or "git lock files" */
  label: string
  agents: number
  tasks: number
  /** the project's seed, when a benchmark job ran it */
  seed?: number
  /** every hidden test passed before the run's time limit */
  completed: boolean
  /** virtual ms when the last test passed, or when the run stopped */
  finishedAtMs: number
  /** [virtual ms, tests passing], one point per change (a broken test makes it fall) */
  passTimeline: Array<[number, number]>
  /** virtual ms at which the pass rate first reached 30, 50, 90 and 100 % (100 %: every test passing at once) */
  timeToMs: Record<'p30' | 'p50' | 'p90' | 'p100', number | null>
  attempts: number
  workAgentSeconds: number
  /** agent-seconds spent on a task while another agent was also working on it */
  duplicateAgentSeconds: number
  trapHits: number
  /** trap hits whose attempt started after someone had recorded that trap */
  repeatedTrapHits: number
  trapsRecorded: number
  /** agent-seconds of attempts that hit a trap someone had already recorded */
  repeatedTrapAgentSeconds: number
  /** virtual ms during which the shared branch had at least one broken test */
  brokenMainMs: number
  /** agent-seconds by kind of non-attempt time (see SpendKind) */
  spent: Record<string, number>
  /** duplicate work + repeated trap hits + the waste kinds, agent-seconds */
  wastedAgentSeconds: number
  /** budgeted redundancy of helpers, agent-seconds (not in waste) */
  helpingAgentSeconds: number
  /** agent-seconds of the overhead kinds outside attempts: reviews, verify runs, waiting for one's batch, fixing what a verify caught */
  overheadAgentSeconds: number
  messages: number
  bytes: number
  messagesPerAgentMinute: number
  bytesPerAgentMinute: number
  traffic: Record<string, TrafficTotals>
  /** claim → answer (agency: settle window; git: lock pushed; manager: assignment received), ms */
  claimSettle: SettleStats | null
  /** strategy-specific counters */
  extra: Record<string, number>
  wallSeconds: number
  /** CPU-seconds the run took (the process's, GC threads included), when a benchmark job ran it */
  cpuSeconds?: number
  events: number
}

interface Work {
  agent: number
  start: number
  end: number
  helper: boolean
}

export class RunRecorder {
  readonly strategy: string
  readonly label: string
  readonly agents: number
  readonly tasks: number
  readonly extra: Record<string, number> = {}
  private readonly passes: Array<[number, number]> = []
  private readonly work = new Map<string, Work[]>()
  private readonly recordedAt = new Map<string, number>()
  private readonly traffic = new Map<string, TrafficTotals>()
  private readonly settles: number[] = []
  private attempts = 0
  private trapHits = 0
  private repeated = 0
  private repeatedMs = 0
  private readonly spentMs = new Map<string, number>()
  private brokenSince: number | undefined
  private brokenMs = 0

  constructor(init: { strategy: string; label: string; agents: number; tasks: number }) {
    this.strategy = init.strategy
    this.label = init.label
    this.agents = init.agents
    this.tasks = init.tasks
  }

  get passedCount(): number {
    return this.passes[this.passes.length - 1]?.[1] ?? 0
  }

  /** The number of passing hidden tests changed to `count`. */
  passing(at: number, count: number): void {
    this.passes.push([at, count])
  }

  /** The shared branch went from green to broken (true) or back (false). */
  mainBroken(at: number, broken: boolean): void {
    if (broken && this.brokenSince === undefined) this.brokenSince = at
    if (!broken && this.brokenSince !== undefined) {
      this.brokenMs += at - this.brokenSince
      this.brokenSince = undefined
    }
  }

  /** An agent spent `ms` on something that is not a plain attempt (see SpendKind). */
  spend(kind: SpendKind, ms: number): void {
    if (ms > 0) this.spentMs.set(kind, (this.spentMs.get(kind) ?? 0) + ms)
  }

  /**
   * An agent worked on `task` from `start` to `end` (one attempt, rebase included); `helper`: a helper's attempt that won, whose overlap
   * with others is budgeted redundancy, not duplicate work.
   */
  worked(task: string, agent: number, start: number, end: number, helper = false): void {
    this.attempts++
    const list = this.work.get(task)
    const w = { agent, start, end, helper }
    if (list === undefined) this.work.set(task, [w])
    else list.push(w)
  }

  /** An attempt that started at `attemptStart` hit trap `key`. */
  trapHit(key: string, attemptStart: number, durationMs = 0): void {
    this.trapHits++
    const recorded = this.recordedAt.get(key)
    if (recorded !== undefined && recorded <= attemptStart) {
      this.repeated++
      this.repeatedMs += durationMs
    }
  }

  /** Someone wrote trap `key` down (in whatever channel the strategy has). Only the first time counts. */
  trapRecorded(key: string, at: number): void {
    if (!this.recordedAt.has(key)) this.recordedAt.set(key, at)
  }

  count(kind: string, messages: number, bytes: number): void {
    const t = this.traffic.get(kind)
    if (t === undefined) this.traffic.set(kind, { messages, bytes })
    else {
      t.messages += messages
      t.bytes += bytes
    }
  }

  settled(ms: number): void {
    this.settles.push(ms)
  }

  bump(counter: string, by = 1): void {
    this.extra[counter] = (this.extra[counter] ?? 0) + by
  }

  result(finishedAtMs: number, wallSeconds: number, events: number): RunResult {
    const last = this.passes[this.passes.length - 1]
    const completed = last !== undefined && last[1] === this.tasks
    const end = completed ? last[0] : finishedAtMs
    const timeTo = (share: number): number | null => {
      const need = Math.ceil(share * this.tasks)
      for (const [t, n] of this.passes) if (n >= need) return t
      return null
    }
    if (this.brokenSince !== undefined) this.mainBroken(end, false)
    const spent: Record<string, number> = {}
    for (const [k, v] of [...this.spentMs].sort(([a], [b]) => (a < b ? -1 : 1))) spent[k] = v / 1000
    let messages = 0
    let bytes = 0
    const traffic: Record<string, TrafficTotals> = {}
    for (const [k, v] of [...this.traffic].sort(([a], [b]) => (a < b ? -1 : 1))) {
      traffic[k] = { ...v }
      messages += v.messages
      bytes += v.bytes
    }
    const agentMinutes = (this.agents * Math.max(end, 1)) / 60_000
    let workMs = 0
    let dupMs = 0
    for (const list of this.work.values()) {
      for (const w of list) workMs += w.end - w.start
      dupMs += duplicateMs(list)
    }
    return {
      strategy: this.strategy,
      label: this.label,
      agents: this.agents,
      tasks: this.tasks,
      completed,
      finishedAtMs: end,
      passTimeline: this.passes.map(([t, n]) => [t, n]),
      timeToMs: { p30: timeTo(0.3), p50: timeTo(0.5), p90: timeTo(0.9), p100: timeTo(1) },
      attempts: this.attempts,
      workAgentSeconds: workMs / 1000,
      duplicateAgentSeconds: dupMs / 1000,
      trapHits: this.trapHits,
      repeatedTrapHits: this.repeated,
      trapsRecorded: this.recordedAt.size,
      repeatedTrapAgentSeconds: this.repeatedMs / 1000,
      brokenMainMs: this.brokenMs,
      spent,
      wastedAgentSeconds: dupMs / 1000 + this.repeatedMs / 1000 + WASTE_KINDS.reduce((n, k) => n + (spent[k] ?? 0), 0),
      helpingAgentSeconds: spent.helping ?? 0,
      overheadAgentSeconds: OUTSIDE_ATTEMPTS.reduce((n, k) => n + (spent[k] ?? 0), 0),
      messages,
      bytes,
      messagesPerAgentMinute: messages / agentMinutes,
      bytesPerAgentMinute: bytes / agentMinutes,
      traffic,
      claimSettle: stats(this.settles),
      extra: { ...this.extra },
      wallSeconds,
      events
    }
  }
}

/** Time spent, summed over agents, while two or more agents worked on the same task. */
function duplicateMs(list: readonly Work[]): number {
  if (list.length < 2) return 0
  const edges: Array<[number, number]> = []
  for (const w of list) if (w.end > w.start && !w.helper) edges.push([w.start, 1], [w.end, -1])
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1])
  let active = 0
  let last = 0
  let dup = 0
  for (const [t, d] of edges) {
    if (active >= 2) dup += active * (t - last)
    active += d
    last = t
  }
  return dup
}

function stats(values: number[]): SettleStats | null {
  if (values.length === 0) return null
  const s = [...values].sort((a, b) => a - b)
  const at = (q: number): number => s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]
  return { count: s.length, p50: at(0.5), p99: at(0.99), max: s[s.length - 1] }
}
