// The daemon's configuration, with defaults merged once.
import type { HarnessPolicy } from '../harness/policy.js'
import type { Sandbox } from '../sandbox/index.js'
import type { PriceTable } from '../harness/usage/prices.js'
import type { RememberedPeersMode } from './remembered-peers.js'

export interface DaemonConfig {
  dataDir: string
  /** libp2p listen multiaddrs */
  listen: string[]
  /** multiaddrs to advertise instead of the listen addresses (NAT, public address) */
  announce: string[]
  /** bootstrap multiaddrs */
  peers: string[]
  /**
   * the connections a daemon holds: it dials while below `target` (default 4, gossipsub's lowest mesh degree) and closes the oldest outside
   * the gossip mesh above `max` (default 16); libp2p refuses inbound ones at twice `max`
   */
  connections?: { target?: number; max?: number }
  swarm: string
  name: string
  /** gRPC address (HOST:PORT or unix:PATH), or null for none (in-process use) */
  grpc: string | null
  /** metrics HTTP address, or null for none */
  metrics: string | null
  /** the dashboard's HTTP address (HOST:PORT), or null/absent for none; beyond loopback only with apiToken */
  ui?: string | null
  /** the shortest presence heartbeat interval; it grows with the swarm (heartbeatMaxRate) */
  heartbeatMs: number
  /** heartbeats per second a daemon may receive from the whole swarm (default 16) */
  heartbeatMaxRate?: number
  /** a peer with no heartbeat for this long is not live */
  liveTimeoutMs: number
  /** how long an undelivered direct message is retried */
  dmTtlMs: number
  /** how often the outbox is retried */
  dmRetryMs: number
  /** how often anti-entropy runs with a random peer */
  syncIntervalMs: number
  /**
   * build a first bulk catch-up's findings index in a worker thread (default false): faster, but the joiner's memory peaks higher when the
   * index is taken back (docs/benchmarks/bench-log.md)
   */
  findingsWorker?: boolean
  /** after a restart, how long the first own entry may wait for an exchange with a peer (default 10 s) */
  ownHeadWaitMs?: number
  /** the claim settle window: derived from round trips to peers within [minMs, maxMs], or fixed */
  settle?: { minMs?: number; maxMs?: number; defaultMs?: number; fixedMs?: number }
  /**
   * assists of idle agents (docs/assist.md): assistants per task at most (default 2), the floor of the time a task must be held before it
   * is assisted (default 0), and the spare places per task while more agents are free than places are left (default 2; 0: none)
   */
  assist?: { budget?: number; floorMs?: number; spare?: number }
  /**
   * hand-off by speed (docs/handoff.md): a holder past factor x the median claim-to-done time (default 2; 0: off) and the floor (default 15
   * min) hands its task to a faster peer; held tasks are checked every checkMs (default 10 s)
   */
  handoff?: { factor?: number; floorMs?: number; checkMs?: number }
  /** the shared repository; none: no workspace, integrate answers FAILED_PRECONDITION */
  repo?: {
    remote: string
    branch: string
    workdir?: string
    verify?: string
    mirrorDir?: string
    wipPushMs?: number
    integratorWindowMs?: number
  }
  /** the agent harness to run beside the daemon: claude, codex, copilot, gemini, pi, aider, sim, cmd:... or acp:<agent> */
  harness?: string
  /** run time limit and failure handling of the harness */
  harnessPolicy?: Partial<HarnessPolicy>
  /** what confines the harness (src/sandbox); none given: it runs as it is */
  sandbox?: Sandbox
  /** how an ACP harness's permission requests are answered (see harness/acp/permission-policy.ts); default workspace,agency,shell */
  acpPermissions?: string
  /**
   * the operator keys (core/operator parseOperatorKeys): only they may set the goal, pause, resume, answer approvals; none: those the first
   * goal carries, if any (docs/operator.md)
   */
  operators?: string[]
  /** how long an approval request (--acp-permissions ask) waits for the operator before it is denied (default 10 min) */
  approvalTimeoutMs?: number
  /**
   * spend (docs/spend.md): the price table for CLIs that report no dollars (--prices), the provider account named outright
   * (--provider-account), the spread after a rate-limit hold, how long a silent peer stays a member for the budget's shares, how long
   * an agent held at the budget keeps its claims (--budget-keep-leases)
   */
  spend?: { prices?: PriceTable; providerAccount?: string; spreadMs?: number; memberWindowMs?: number; keepLeasesMs?: number }
  /** a token every API call must carry (required for a gRPC bind beyond loopback) */
  apiToken?: string
  /** the swarm key (libp2p pre-shared key file contents): a private swarm */
  swarmKey?: Uint8Array
  /** when non-empty, only these peer ids may connect */
  allowPeers?: string[]
  /**
   * the peers of the last run (daemon/remembered-peers): redialled and remembered (on, the default), neither (off: a restart without peers
   * stays alone), or forgotten at start and remembered anew (forget)
   */
  rememberedPeers?: RememberedPeersMode
  /** default process metrics and libp2p's, kept only with a metrics endpoint (`metrics`); off when many daemons share one process */
  processMetrics: boolean
}

export const DEFAULTS = {
  listen: ['/ip4/0.0.0.0/tcp/0'],
  swarm: 'default',
  heartbeatMs: 2000,
  liveTimeoutMs: 10_000,
  dmTtlMs: 24 * 3600_000,
  dmRetryMs: 2000,
  syncIntervalMs: 3000
} as const

/** Agents one agentd process may host (`agentd --agents`): past this one event loop is the bottleneck (docs/many-agents.md). */
export const MAX_AGENTS_PER_PROCESS = 128

export function resolveConfig(partial: Partial<DaemonConfig> & { dataDir: string }): DaemonConfig {
  return {
    listen: [...DEFAULTS.listen],
    announce: [],
    peers: [],
    swarm: DEFAULTS.swarm,
    name: '',
    grpc: null,
    metrics: null,
    heartbeatMs: DEFAULTS.heartbeatMs,
    liveTimeoutMs: DEFAULTS.liveTimeoutMs,
    dmTtlMs: DEFAULTS.dmTtlMs,
    dmRetryMs: DEFAULTS.dmRetryMs,
    syncIntervalMs: DEFAULTS.syncIntervalMs,
    processMetrics: true,
    ...partial
  }
}
