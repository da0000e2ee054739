// Every metric agentd exports, defined in one place. Names: prefix agentd_,
// base units, _total/_seconds/_bytes suffixes; no peer or task ids as labels.
// Counters and histograms count events as they happen (createMetrics); the
// gauges of the daemon's state are read at scrape time from the parts that
// hold it (registerStateGauges, prom-client collect() callbacks).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import { KNOWN_KINDS } from '../core/log/kinds.js'
import { REJECT_REASONS } from '../core/log/ingest-result.js'

/**
 * Label values known in advance: their series exist (at 0) from the first scrape, so rate() and dashboards see them before the first event.
 */
export const LABEL_VALUES = {
  gossipKind: ['entry', 'presence', 'announcement', 'fork_proof'],
  gossipVerdict: ['accept', 'ignore', 'reject'],
  dmFailure: ['refused', 'expired'],
  syncDirection: ['sent', 'received'],
  integrationResult: ['merged', 'conflict', 'failed', 'contended'],
  guardedProtocol: ['dm', 'sync'],
  entryKind: KNOWN_KINDS,
  rejectReason: REJECT_REASONS,
  stopReason: ['end_turn', 'max_tokens', 'max_turn_requests', 'refusal', 'cancelled', 'unknown'],
  toolKind: ['read', 'edit', 'delete', 'move', 'search', 'execute', 'think', 'fetch', 'switch_mode', 'other'],
  tokenType: ['input', 'output', 'thought', 'cached_read', 'cached_write'],
  permissionDecision: ['allowed', 'denied'],
  spendTokenKind: ['input', 'cache_read', 'cache_write', 'output'],
  rateLimitKind: ['transient', 'quota'],
  protocolFault: ['unsupported_version', 'malformed', 'flood', 'oversized', 'auth_required', 'refused', 'unresponsive', 'closed'],
  sandboxDenial: ['fs', 'net'],
  operatorRefusalSource: ['api', 'peer'],
  operatorRefusalReason: ['unsigned', 'not_operator', 'bad_signature', 'malformed']
} as const

/**
 * prom-client's default metrics include three gauges named *_total
 * (active handles, requests, resources) that `promtool check metrics` flags:
 * only counters may end in _total. Their per-type siblings carry the same
 * information (sum them), so these three are dropped.
 */
const GAUGES_NAMED_TOTAL = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']

/** How often the event-loop delay monitor samples (ms). */
export const EVENT_LOOP_MONITORING_MS = 100

export interface MetricsInit {
  version: string
  swarm: string
  /** default process metrics (off in tests that create many daemons in one process) */
  processMetrics?: boolean
}

export function createMetrics(init: MetricsInit) {
  const registry = new Registry()
  if (init.processMetrics !== false) {
    // The event-loop delay monitor wakes the loop at this precision: prom-client's
    // default of 10 ms cost a quarter of a percent of a core on an idle daemon.
    collectDefaultMetrics({ register: registry, prefix: 'agentd_', eventLoopMonitoringPrecision: EVENT_LOOP_MONITORING_MS })
    for (const name of GAUGES_NAMED_TOTAL) registry.removeSingleMetric(`agentd_${name}`)
  }
  const r = [registry]

  const buildInfo = new Gauge({
    name: 'agentd_build_info',
    help: 'Build information; always 1.',
    labelNames: ['version', 'swarm', 'node'] as const,
    registers: r
  })
  buildInfo.set({ version: init.version, swarm: init.swarm, node: process.version }, 1)

  const metrics = {
    registry,
    gossipIn: new Counter({
      name: 'agentd_gossip_messages_received_total',
      help: 'Gossip messages received, by kind and verdict.',
      labelNames: ['kind', 'verdict'] as const,
      registers: r
    }),
    gossipOut: new Counter({
      name: 'agentd_gossip_messages_sent_total',
      help: 'Gossip messages published, by kind.',
      labelNames: ['kind'] as const,
      registers: r
    }),
    dmSent: new Counter({
      name: 'agentd_direct_messages_sent_total',
      help: 'Direct messages acknowledged by their recipient.',
      registers: r
    }),
    dmReceived: new Counter({
      name: 'agentd_direct_messages_received_total',
      help: 'Direct messages stored in the inbox (duplicates excluded).',
      registers: r
    }),
    dmFailed: new Counter({
      name: 'agentd_direct_messages_failed_total',
      help: 'Direct messages dropped: expired or refused.',
      labelNames: ['reason'] as const,
      registers: r
    }),
    dmMalformed: new Counter({
      name: 'agentd_direct_message_streams_rejected_total',
      help: 'Inbound direct-message streams closed for malformed or invalid frames.',
      registers: r
    }),
    dmLatency: new Histogram({
      name: 'agentd_direct_message_delivery_seconds',
      help: 'Time from the first delivery attempt to the ack.',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers: r
    }),
    announcementsSent: new Counter({
      name: 'agentd_announcements_sent_total',
      help: 'Announcements broadcast by this daemon.',
      registers: r
    }),
    announcementsReceived: new Counter({
      name: 'agentd_announcements_received_total',
      help: 'Announcements received from peers.',
      registers: r
    }),

    // the shared record
    logEntries: new Counter({
      name: 'agentd_log_entries_ingested_total',
      help: 'Log entries accepted (local and from peers), by kind.',
      labelNames: ['kind'] as const,
      registers: r
    }),
    logRejected: new Counter({
      name: 'agentd_log_entries_rejected_total',
      help: 'Entries rejected, by reason.',
      labelNames: ['reason'] as const,
      registers: r
    }),
    gossipLatency: new Histogram({
      name: 'agentd_gossip_entry_latency_seconds',
      help: "From an entry's author timestamp to its acceptance here (clock skew included).",
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: r
    }),
    syncRounds: new Counter({ name: 'agentd_sync_rounds_total', help: 'Anti-entropy exchanges completed.', registers: r }),
    syncBytes: new Counter({
      name: 'agentd_sync_bytes_total',
      help: 'Bytes moved by anti-entropy, by direction.',
      labelNames: ['direction'] as const,
      registers: r
    }),
    syncRejected: new Counter({
      name: 'agentd_sync_streams_rejected_total',
      help: 'Sync streams closed for malformed frames.',
      registers: r
    }),
    claimConflicts: new Counter({
      name: 'agentd_claim_conflicts_total',
      help: "Scope overlaps between this daemon's live claims and a peer's.",
      registers: r
    }),
    takeovers: new Counter({
      name: 'agentd_claim_takeovers_total',
      help: 'Claims this daemon took over from an expired holder.',
      registers: r
    }),
    claimsLost: new Counter({
      name: 'agentd_claims_lost_total',
      help: 'Claims of this daemon that lost a race or were superseded.',
      registers: r
    }),
    integrations: new Counter({
      name: 'agentd_integrations_total',
      help: 'Integrations into the shared branch, by result.',
      labelNames: ['result'] as const,
      registers: r
    }),
    integrationRetries: new Counter({
      name: 'agentd_integration_push_retries_total',
      help: 'Pushes retried after a non-fast-forward rejection.',
      registers: r
    }),
    verifySeconds: new Histogram({
      name: 'agentd_verify_duration_seconds',
      help: 'Duration of verify (test) runs during integration.',
      buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800],
      registers: r
    }),
    harnessRestarts: new Counter({ name: 'agentd_harness_restarts_total', help: 'Restarts of the agent harness process.', registers: r }),
    harnessFailures: new Counter({
      name: 'agentd_harness_failures_total',
      help: 'Harness runs that failed: non-zero exit, could not start, or hung past the run timeout.',
      registers: r
    }),
    spendTokens: new Counter({
      name: 'agentd_tokens_total',
      help: "Model tokens this agent's harness runs reported, by kind (input is uncached input; cache reads and writes apart).",
      labelNames: ['kind'] as const,
      registers: r
    }),
    spendUsd: new Counter({
      name: 'agentd_spend_usd_total',
      help: "Dollars this agent's harness runs spent, as reported or estimated from the price table.",
      registers: r
    }),
    rateLimitedRuns: new Counter({
      name: 'agentd_harness_rate_limited_runs_total',
      help: "Harness runs that ended on a provider's limit (not counted as failures), by kind.",
      labelNames: ['kind'] as const,
      registers: r
    }),
    budgetReached: new Gauge({
      name: 'agentd_budget_reached',
      help: "1 while the swarm's budget holds this agent's next run, else 0.",
      registers: r
    }),
    harnessRunTimeouts: new Counter({
      name: 'agentd_harness_run_timeouts_total',
      help: 'Harness runs killed for running longer than --harness-run-timeout.',
      registers: r
    }),
    harnessTurns: new Counter({
      name: 'agentd_harness_turns_total',
      help: "Turns of the agent's ACP session, by how they ended.",
      labelNames: ['stop_reason'] as const,
      registers: r
    }),
    harnessToolCalls: new Counter({
      name: 'agentd_harness_tool_calls_total',
      help: 'Tool calls the agent made in its ACP session, by kind.',
      labelNames: ['kind'] as const,
      registers: r
    }),
    harnessTokens: new Counter({
      name: 'agentd_harness_tokens_total',
      help: 'Model tokens the agent reported for its ACP turns, by type.',
      labelNames: ['type'] as const,
      registers: r
    }),
    harnessContextTokens: new Gauge({
      name: 'agentd_harness_context_tokens',
      help: "Tokens in the agent's context, as its ACP session last reported.",
      registers: r
    }),
    harnessPermissions: new Counter({
      name: 'agentd_harness_permission_requests_total',
      help: "Permission requests of the agent's ACP session, by the policy's answer.",
      labelNames: ['decision'] as const,
      registers: r
    }),
    harnessPushed: new Counter({
      name: 'agentd_harness_inbox_items_pushed_total',
      help: "Inbox items (messages and notices) delivered into the agent's ACP session.",
      registers: r
    }),
    harnessProtocolErrors: new Counter({
      name: 'agentd_harness_protocol_errors_total',
      help: 'ACP sessions ended because the agent broke the protocol or stopped answering, by fault.',
      labelNames: ['fault'] as const,
      registers: r
    }),
    sandboxDenials: new Counter({
      name: 'agentd_sandbox_denials_total',
      help: "What the sandbox refused the agent's harness or a test run, by kind: fs (a path) or net (a connection or name).",
      labelNames: ['kind'] as const,
      registers: r
    }),
    operatorRefusals: new Counter({
      name: 'agentd_operator_refusals_total',
      help: "Operator actions refused: by source, the agent's API (an unsigned call, or an action not signed by an operator) or a peer's entry folded here; by reason: unsigned (a member's own goal or budget), not_operator, bad_signature, malformed.",
      labelNames: ['source', 'reason'] as const,
      registers: r
    }),
    peerBans: new Counter({
      name: 'agentd_peer_bans_total',
      help: 'Peers banned for a while for sending invalid data repeatedly.',
      registers: r
    }),
    rateLimited: new Counter({
      name: 'agentd_peer_rate_limited_total',
      help: 'Requests refused because a peer went over its rate limit, by protocol.',
      labelNames: ['protocol'] as const,
      registers: r
    })
  }

  const v = LABEL_VALUES
  for (const kind of v.gossipKind) {
    metrics.gossipOut.inc({ kind }, 0)
    for (const verdict of v.gossipVerdict) metrics.gossipIn.inc({ kind, verdict }, 0)
  }
  metrics.gossipIn.inc({ kind: 'malformed', verdict: 'reject' }, 0)
  for (const reason of v.dmFailure) metrics.dmFailed.inc({ reason }, 0)
  for (const direction of v.syncDirection) metrics.syncBytes.inc({ direction }, 0)
  for (const result of v.integrationResult) metrics.integrations.inc({ result }, 0)
  for (const kind of v.entryKind) metrics.logEntries.inc({ kind }, 0)
  for (const reason of v.rejectReason) metrics.logRejected.inc({ reason }, 0)
  for (const protocol of v.guardedProtocol) metrics.rateLimited.inc({ protocol }, 0)
  for (const reason of v.stopReason) metrics.harnessTurns.inc({ stop_reason: reason }, 0)
  for (const kind of v.toolKind) metrics.harnessToolCalls.inc({ kind }, 0)
  for (const type of v.tokenType) metrics.harnessTokens.inc({ type }, 0)
  for (const decision of v.permissionDecision) metrics.harnessPermissions.inc({ decision }, 0)
  for (const fault of v.protocolFault) metrics.harnessProtocolErrors.inc({ fault }, 0)
  for (const kind of v.sandboxDenial) metrics.sandboxDenials.inc({ kind }, 0)
  for (const source of v.operatorRefusalSource)
    for (const reason of v.operatorRefusalReason) metrics.operatorRefusals.inc({ source, reason }, 0)
  for (const kind of v.spendTokenKind) metrics.spendTokens.inc({ kind }, 0)
  for (const kind of v.rateLimitKind) metrics.rateLimitedRuns.inc({ kind }, 0)
  return metrics
}

export type Metrics = ReturnType<typeof createMetrics>

/** Where the state gauges read from at scrape time. */
export interface StateSources {
  peersConnected: () => number
  peersLive: () => number
  /** entries in the local log by kind (kinds not named count 0) */
  logByKind: () => Iterable<[string, number]>
  logAuthors: () => number
  logPending: () => number
  logForks: () => number
  secondsSinceSync: () => number
  outboxMessages: () => Promise<number>
  claimsHeld: () => number
  /** the state of every task on the board */
  taskStates: () => Iterable<string>
  /** every state a task can be in: each has a series, at 0 when no task is in it */
  allTaskStates: readonly string[]
  /** the shared branch's latest test run, if any */
  sharedTests: () => { passed: number; failed: number; total: number; passRate: number } | undefined
  /** the harness beside the daemon, when there is one: its states and the current one */
  harness?: { states: readonly string[]; current: () => string }
}

/** The gauges of the daemon's state, read from `s` on every scrape. */
export function registerStateGauges(registry: Registry, s: StateSources): void {
  const r = [registry]
  const gauge = (name: string, help: string, read: () => number): void => {
    new Gauge({
      name,
      help,
      registers: r,
      collect() {
        this.set(read())
      }
    })
  }
  gauge('agentd_peers_connected', 'Peers with an open libp2p connection.', s.peersConnected)
  gauge('agentd_peers_live', 'Peers whose presence heartbeats are arriving.', s.peersLive)
  new Gauge({
    name: 'agentd_outbox_messages',
    help: 'Direct messages waiting in the outbox.',
    registers: r,
    async collect() {
      this.set(await s.outboxMessages())
    }
  })
  new Gauge({
    name: 'agentd_log_entries',
    help: 'Entries in the local log, by kind.',
    labelNames: ['kind'] as const,
    registers: r,
    collect() {
      this.reset()
      for (const kind of LABEL_VALUES.entryKind) this.set({ kind }, 0)
      for (const [kind, n] of s.logByKind()) this.set({ kind }, n)
    }
  })
  gauge('agentd_log_authors', 'Authors in the local log.', s.logAuthors)
  gauge('agentd_log_pending_entries', "Entries waiting for a gap in their author's feed.", s.logPending)
  gauge('agentd_log_forks', 'Fork proofs held (authors that signed two entries at one seq).', s.logForks)
  gauge(
    'agentd_sync_last_exchange_age_seconds',
    'Seconds since the last completed anti-entropy exchange (-1: none yet).',
    s.secondsSinceSync
  )
  gauge('agentd_claims_held', 'Tasks this daemon holds.', s.claimsHeld)
  new Gauge({
    name: 'agentd_tasks',
    help: 'Tasks on the board, by state.',
    labelNames: ['state'] as const,
    registers: r,
    collect() {
      for (const state of s.allTaskStates) this.set({ state }, 0)
      for (const state of s.taskStates()) this.inc({ state })
    }
  })
  new Gauge({
    name: 'agentd_shared_branch_tests',
    help: 'Tests on the shared branch in the latest recorded run, by result (passed, failed, all).',
    labelNames: ['result'] as const,
    registers: r,
    collect() {
      const t = s.sharedTests()
      this.set({ result: 'passed' }, t?.passed ?? 0)
      this.set({ result: 'failed' }, t?.failed ?? 0)
      this.set({ result: 'all' }, t?.total ?? 0)
    }
  })
  gauge(
    'agentd_shared_branch_pass_ratio',
    'Passed / all tests on the shared branch in the latest recorded run.',
    () => s.sharedTests()?.passRate ?? 0
  )
  const harness = s.harness
  if (harness !== undefined) {
    new Gauge({
      name: 'agentd_harness_state',
      help: 'The agent harness state: 1 for the current one (idle, running, backing_off, held, failing, stopped, finished).',
      labelNames: ['state'] as const,
      registers: r,
      collect() {
        const current = harness.current()
        for (const state of harness.states) this.set({ state }, state === current ? 1 : 0)
      }
    })
  }
}
