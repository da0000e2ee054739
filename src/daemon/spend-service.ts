// The swarm's spend as this daemon sees it, and what it implies for this
// agent: the usage, budget and rate-limit entries folded (core/spend), each
// run's usage written as an entry of this agent's, a provider's limit
// announced to the swarm, and the gate the harness asks before each run or
// turn: held while the budget is reached (recorded + in flight >= a cap) or
// while this agent's provider account is limited (until T, plus a spread of
// its own). Held at the budget, the agent keeps its claims for a stated time
// (budget-lease-keeper.ts). See docs/spend.md.
import {
  checkBudget,
  changedBudget,
  hasAnyCap,
  NO_BUDGET,
  resumeAt,
  SpendFold,
  SwarmWholeness,
  allInput,
  type BudgetChange,
  type BudgetSetting,
  type BudgetVerdict,
  type GovernedBudget,
  type SpendGrouping,
  type SpendTotals,
  type RateLimitHoldView,
  type RunSize
} from '../core/spend/index.js'
import { SPEND_KINDS, type SpendEntry } from '../core/spend/spend-fold.js'
import { decodeBody, type EntryKind } from '../core/log/kinds.js'
import type { StoredEntry } from '../core/log/ingest-result.js'
import type { LogService } from './log-service.js'
import { DEFAULT_HOLD_MS, DEFAULT_PRICES, priced, type PriceTable, type RateLimitSignal, type RunReport } from '../harness/usage/index.js'
import type { StartHold } from '../harness/supervisor.js'
import { BudgetLeaseKeeper } from './budget-lease-keeper.js'
import type { BudgetReply, SpendTotals as SpendTotalsView, UsageReply } from '../gen/agency/v1/api.js'
import type { ModelSpend } from '../gen/agency/v1/log.js'
import type { Metrics } from '../metrics/metrics.js'
import type { Logger } from '../logger.js'
import { operatorOnly } from './operator-service.js'

/** How often a held start asks the gate again, at the latest (a change in the fold wakes it sooner). */
const BUDGET_RECHECK_MS = 30_000

/** How long an agent held at the budget keeps its claims, by default (as a pause's --keep-leases). */
export const DEFAULT_BUDGET_KEEP_LEASES_MS = 60 * 60_000

export interface SpendPeer {
  id: string
  name: string
  /** the peer's harness state from its heartbeat ('running' counts as a run in flight) */
  harness: string
}

export interface SpendHost {
  peerId: string
  name: string
  /** the log: folded at start, then each accepted entry */
  entries: Pick<LogService, 'state' | 'onAccepted'>
  /** whether operators govern the swarm, and their budget (Board.operatorBudget); none: no operator */
  governed?: () => GovernedBudget
  /** signs and appends an entry of this agent's; resolves once it is in the log (and folded here) */
  append: (kind: 'usage' | 'budget' | 'rate_limit', body: object) => Promise<unknown>
  /** live peers, this daemon excluded */
  livePeers: () => SpendPeer[]
  /** the swarm's members as this daemon knows them (peers heard from within its member window), this one included */
  members: () => Iterable<string>
  /** the task this agent holds, if any ('' for none) */
  currentTask: () => string
  /** this agent's harness has a run going */
  running: () => boolean
  /** a quota ran out: the operator is told (an inbox notice, a log line) */
  report: (text: string) => void
  /** gives this agent's held tasks back with a hand-off note (held at the budget past the time its claims are kept) */
  releaseHeld: (note: string) => Promise<void>
  metrics: Pick<Metrics, 'spendTokens' | 'spendUsd' | 'rateLimitedRuns' | 'budgetReached'> & Partial<Pick<Metrics, 'operatorRefusals'>>
  log: Logger
  now: () => number
}

export interface SpendOptions {
  /** the price table for CLIs that report no dollars (--prices FILE; default DEFAULT_PRICES) */
  prices?: PriceTable
  /** this agent's provider account hash (harness/usage/provider-account.ts) */
  provider: string
  /** the spread after a hold, ms (default 10 s) */
  spreadMs?: number
  /** the least a run in flight is counted at before any run is recorded */
  minRunAllowance?: RunSize
  /** how long the agent keeps its claims once the budget holds it (--budget-keep-leases; default 1 h; 0: as long as it holds) */
  keepLeasesMs?: number
}

export class SpendService {
  readonly fold = new SpendFold()
  private readonly host: SpendHost
  private readonly prices: PriceTable
  private readonly provider: string
  private readonly spreadMs: number
  private readonly minRunAllowance: RunSize | undefined
  private readonly wholeness = new SwarmWholeness()
  /** a limit this daemon saw itself, held at once (before its entry is back from the log) */
  private localHold: RateLimitHoldView | undefined
  private readonly listeners = new Set<() => void>()
  private readonly leases: BudgetLeaseKeeper
  /** the carrying entry of the budget in force, to tell when an operator entry changed it */
  private operatorBudgetId: string | undefined

  constructor(host: SpendHost, o: SpendOptions) {
    this.host = host
    this.prices = o.prices ?? DEFAULT_PRICES
    this.provider = o.provider
    this.spreadMs = o.spreadMs ?? 10_000
    this.minRunAllowance = o.minRunAllowance
    this.leases = new BudgetLeaseKeeper({
      keepMs: o.keepLeasesMs ?? DEFAULT_BUDGET_KEEP_LEASES_MS,
      stillHeld: () => !host.running() && this.verdict(1).reached,
      releaseHeld: host.releaseHeld,
      onReleased: note => {
        host.log.info({ note }, 'budget: gave the held tasks back')
      },
      onError: err => {
        host.log.warn({ err }, 'budget: cannot give the held tasks back')
      }
    })
  }

  /** Folds the restored log's spend entries, then each entry the log accepts. */
  beforeStart(): void {
    for (const e of this.host.entries.state.iterateAfter(0, SPEND_KINDS)) this.applyStored(e)
    this.operatorBudgetId = this.currentBudget()?.entryId
    // an operator's budget is folded by the board, which takes each entry in before this
    this.host.entries.onAccepted(e => {
      if (SPEND_KINDS.has(e.entry.kind)) this.applyStored(e)
      else if (e.entry.kind === 'operator') this.operatorEntry()
    })
  }

  /** The budget in force: the operator's while operators govern, else the latest budget entry. */
  currentBudget(): BudgetSetting | undefined {
    return this.fold.budgets.current(this.host.governed?.())
  }

  private operatorEntry(): void {
    const now = this.currentBudget()?.entryId
    if (now === this.operatorBudgetId) return
    this.operatorBudgetId = now
    this.host.log.info({ by: this.currentBudget()?.setBy }, 'budget changed by the operator')
    for (const l of this.listeners) l()
  }

  stop(): void {
    this.leases.stop()
  }

  private applyStored(e: StoredEntry): void {
    let body: unknown
    try {
      body = decodeBody(e.entry.kind as EntryKind, e.entry.body)
    } catch {
      return
    }
    this.apply({
      id: e.id,
      author: e.entry.author,
      seq: e.entry.seq,
      lamport: e.entry.lamport,
      time: e.entry.time,
      kind: e.entry.kind,
      body
    })
  }

  /** Folds a log entry in (other kinds are ignored). */
  apply(e: SpendEntry): void {
    if (!this.fold.apply(e)) return
    if (e.kind === 'budget') {
      if (this.host.governed?.().governs === true) {
        this.host.log.info({ by: e.author }, "a member's own budget entry counts for nothing: the operator sets the budget")
        return
      }
      this.host.log.info({ by: e.author }, 'budget changed')
    }
    for (const l of this.listeners) l()
  }

  /** Calls back when the spend, the budget or a hold changed (a held harness asks its gate again). */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener)
    return () => {
      this.listeners.delete(listener)
    }
  }

  /** The start gate: why this agent may not start a run or turn now, or null. */
  gate(): StartHold | null {
    const now = this.host.now()
    const hold = this.hold(now)
    if (hold != null) {
      const at = resumeAt(hold.until, this.host.peerId, this.spreadMs)
      return {
        reason: `provider limited (${hold.kind}) until ${new Date(hold.until).toISOString()}: ${hold.message}`,
        waitMs: Math.max(10, at - now)
      }
    }
    const v = this.verdict(1)
    this.host.metrics.budgetReached.set(v.reached ? 1 : 0)
    this.leases.observe(v.reached)
    if (v.reached) return { reason: `budget reached: ${v.reasons.join('; ')}`, waitMs: BUDGET_RECHECK_MS }
    return null
  }

  /** The hold on this agent's provider in force, if any. */
  hold(now = this.host.now()): RateLimitHoldView | undefined {
    const shared = this.fold.holds.current(this.provider, now)
    const local = this.localHold != null && this.localHold.until > now ? this.localHold : undefined
    if (shared == null) return local
    if (local == null) return shared
    return shared.until >= local.until ? shared : local
  }

  /**
   * Writes one run's (or ACP turn's) usage as an entry of this agent's and, when
   * it ended on a provider's limit, announces the limit. Returns the limit so
   * the caller does not count the run as a failure.
   */
  async recordRun(report: RunReport, wallMs: number, harness: string): Promise<RateLimitSignal | null> {
    const models: ModelSpend[] = report.usage.map(u => {
      const { usd, estimated } = priced(this.prices, [u])
      return {
        model: u.model,
        inputTokens: u.inputTokens,
        cacheReadTokens: u.cacheReadTokens,
        cacheWriteTokens: u.cacheWriteTokens,
        outputTokens: u.outputTokens,
        microUsd: Math.round(usd * 1e6),
        estimated
      }
    })
    const m = this.host.metrics
    for (const u of report.usage) {
      m.spendTokens.inc({ kind: 'input' }, u.inputTokens)
      m.spendTokens.inc({ kind: 'cache_read' }, u.cacheReadTokens)
      m.spendTokens.inc({ kind: 'cache_write' }, u.cacheWriteTokens)
      m.spendTokens.inc({ kind: 'output' }, u.outputTokens)
    }
    m.spendUsd.inc(models.reduce((s, x) => s + x.microUsd, 0) / 1e6)
    const appends: Array<Promise<unknown>> = [
      this.host.append('usage', {
        models,
        wallMs: Math.max(0, Math.round(wallMs)),
        task: this.host.currentTask(),
        harness: harness.slice(0, 200)
      })
    ]
    if (report.limit != null) appends.push(this.announce(report.limit))
    await Promise.all(appends)
    return report.limit
  }

  /** "Provider P limited until T", to the swarm; held here at once. A quota is also reported to the operator. */
  async announce(limit: RateLimitSignal): Promise<void> {
    const now = this.host.now()
    const until = limit.until != null && limit.until > now ? limit.until : now + DEFAULT_HOLD_MS[limit.kind]
    this.localHold = { provider: this.provider, until, kind: limit.kind, message: limit.message, reportedBy: this.host.peerId }
    this.host.metrics.rateLimitedRuns.inc({ kind: limit.kind })
    this.host.log.warn(
      { kind: limit.kind, until: new Date(until).toISOString(), message: limit.message },
      'provider limit: holding runs on this account'
    )
    if (limit.kind === 'quota')
      this.host.report(
        `The provider's quota for this agent's account is used up (${limit.message}). Its agents hold their runs until ${new Date(until).toISOString()}; raise the quota or change the account to go on sooner.`
      )
    await this.host.append('rate_limit', { provider: this.provider, until, kind: limit.kind, message: limit.message.slice(0, 1000) })
  }

  /** The budget verdict for this agent, counting `starting` runs of its own about to start. */
  verdict(starting = 0): BudgetVerdict {
    const caps = this.currentBudget() ?? NO_BUDGET
    if (!hasAnyCap(caps)) return { reached: false, reasons: [], inFlightMicroUsd: 0 }
    const book = this.fold.book
    const peers = this.host.livePeers()
    const mine = (this.host.running() ? 1 : 0) + starting
    const total = book.totals()
    const own = book.agent(this.host.peerId)
    const share = this.wholeness.observe(new Set(this.host.members()), new Set([this.host.peerId, ...peers.map(p => p.id)]), total, own)
    return checkBudget(
      caps,
      {
        total,
        own,
        largestRun: book.largestRun(),
        runsInFlight: mine + peers.filter(p => p.harness === 'running').length,
        ownInFlight: mine,
        share
      },
      { minRunAllowance: this.minRunAllowance }
    )
  }

  usage(by: string): UsageReply {
    const book = this.fold.book
    const names = new Map(this.host.livePeers().map(p => [p.id, p.name]))
    names.set(this.host.peerId, this.host.name)
    const rows =
      by === ''
        ? []
        : book
            .by(by as SpendGrouping)
            .map(r => ({ key: r.key, name: by === 'agent' ? (names.get(r.key) ?? '') : '', totals: totalsView(r.totals) }))
    return { total: totalsView(book.totals()), by, rows }
  }

  budget(): BudgetReply {
    const b = this.currentBudget()
    // what a run of this agent's would face if it started now
    const v = this.verdict(this.host.running() ? 0 : 1)
    const hold = this.hold()
    return {
      budget: {
        usd: (b?.microUsd ?? 0) / 1e6,
        tokens: b?.tokens ?? 0,
        hours: (b?.agentSeconds ?? 0) / 3600,
        perAgentUsd: (b?.perAgentMicroUsd ?? 0) / 1e6,
        setBy: b?.setBy ?? ''
      },
      reached: v.reached,
      reasons: v.reasons,
      spent: totalsView(this.fold.book.totals()),
      inFlightUsd: v.inFlightMicroUsd / 1e6,
      hold:
        hold != null
          ? { provider: hold.provider, until: hold.until, kind: hold.kind, message: hold.message, reportedBy: hold.reportedBy }
          : undefined
    }
  }

  /**
   * Changes the budget in a swarm without an operator (any agent may); a bad
   * value throws InvalidArgumentError and writes nothing. While operators
   * govern, OperatorOnlyError: the operator signs a budget action instead.
   */
  async setBudget(change: BudgetChange): Promise<BudgetReply> {
    if (this.host.governed?.().governs === true) {
      this.host.metrics.operatorRefusals?.inc({ source: 'api', reason: 'unsigned' })
      throw operatorOnly('setting the budget')
    }
    const next = changedBudget(this.currentBudget() ?? NO_BUDGET, change)
    await this.host.append('budget', {
      microUsd: next.microUsd,
      tokens: next.tokens,
      agentSeconds: next.agentSeconds,
      perAgentMicroUsd: next.perAgentMicroUsd
    })
    return this.budget()
  }
}

export function totalsView(t: SpendTotals): SpendTotalsView {
  return {
    inputTokens: allInput(t),
    outputTokens: t.outputTokens,
    cacheReadTokens: t.cacheReadTokens,
    cacheWriteTokens: t.cacheWriteTokens,
    usd: t.microUsd / 1e6,
    estimated: t.estimated,
    runs: t.runs,
    agentSeconds: t.wallMs / 1000
  }
}
