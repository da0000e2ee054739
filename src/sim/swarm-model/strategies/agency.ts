// agency in simulation: one replica (a simulated agentd running the real
// board core) and one scripted agent per node, gossip delivered lazily over
// the modelled links, anti-entropy with a random peer every few seconds,
// presence heartbeats computed on demand, and partitions and crashes on a
// timeline. Coordination traffic is counted with the protobuf size model.

import type { SettleWindowInit } from '../../../core/board/settle.js'
import { reviewersFree } from '../../../core/board/review-timing.js'
import { Goal, TaskSpec } from '../../../gen/agency/v1/log.js'
import {
  PING_BYTES,
  directMessageBytes,
  gossipFrameBytes,
  gossipTransmissions,
  presenceBytes,
  syncBatchBytes,
  syncRequestBytes
} from '../cost-model.js'
import { EntryPool, type PoolEntry } from '../entry-pool.js'
import { HeartbeatModel } from '../heartbeat-model.js'
import { PingModel } from '../ping-model.js'
import { syncPeriodMs } from '../../../core/log/sync-backoff.js'
import { heartbeatIntervalMs, heartbeatPolicy } from '../../../core/presence/heartbeat-interval.js'
import { LinkLatency, type LinkLatencyInit } from '../../engine/link-latency.js'
import { ProjectProgress } from '../project-progress.js'
import { createRandom, type Random } from '../../engine/random.js'
import { Replica } from '../replica.js'
import { RunRecorder, type RunResult } from '../../../experiment/run-recorder.js'
import { Scheduler } from '../../engine/scheduler.js'
import { SharedFindings } from '../shared-findings.js'
import { Topology } from '../../engine/topology.js'
import type { Project, ProjectTask } from '../workload.js'
import { AgencyAgent } from './agency-agent.js'
import { AgencyHelpers } from './agency-helpers.js'
import { SimIntegrator } from './agency-integrator.js'
import { ALL_MECHANISMS, MECHANISM_DEFAULTS, type MechanismSettings, type Mechanisms } from './agency-mechanisms.js'
import type { ReviewRequest, SwarmContext } from './agency-types.js'
import { RUN_DEFAULTS, agentIndex, agentName, validateRun, type SwarmRunInit } from './common.js'

export interface PartitionPlan {
  at: number
  until: number
  /** node groups; default: two halves */
  groups?: number[][]
}

export interface CrashPlan {
  node: number
  at: number
  /** when it comes back; never when absent */
  restartAt?: number
}

export interface AgencyInit extends SwarmRunInit {
  latency?: Omit<LinkLatencyInit, 'seed'>
  /** probability that one gossip delivery is lost (anti-entropy repairs it) */
  loss?: number
  /** the base heartbeat interval (agentd's heartbeatMs); it grows with the swarm as agentd's does */
  heartbeatMs?: number
  /** heartbeats per second a daemon may receive (agentd's heartbeatMaxRate) */
  heartbeatMaxRate?: number
  /** lease period at the base interval (agentd's liveTimeoutMs); scaled as agentd scales it */
  leaseMs?: number
  /** anti-entropy period (agentd's syncIntervalMs) */
  syncMs?: number
  settle?: SettleWindowInit
  partitions?: PartitionPlan[]
  crashes?: CrashPlan[]
  /**
   * message the holders of overlapping live claims after a claim is won, as agentd's BoardService does (default:
   * mechanisms.overlapMessages)
   */
  overlapAlerts?: boolean
  /** which of agency's mechanisms run (default: all); see agency-mechanisms.ts */
  mechanisms?: Partial<Mechanisms>
  /** the mechanisms' settings (default MECHANISM_DEFAULTS, the same at every size; tests change one to see a rule at work) */
  settings?: Partial<MechanismSettings>
}

/** agentd's defaults (src/daemon/config.ts, src/core/board/settle.ts). */
export const AGENCY_DEFAULTS = { heartbeatMs: 2_000, leaseMs: 10_000, syncMs: 3_000, loss: 0 } as const

const SYNC_SALT = 0x5359

export class AgencySwarm implements SwarmContext {
  readonly project: Project
  readonly scheduler = new Scheduler()
  readonly topology: Topology
  readonly latency: LinkLatency
  readonly pool = new EntryPool()
  readonly replicas: Replica[] = []
  readonly agents: AgencyAgent[] = []
  readonly recorder: RunRecorder
  readonly progress: ProjectProgress
  readonly pollMs: number
  readonly mechanisms: Mechanisms
  readonly settings: MechanismSettings
  readonly integrator: SimIntegrator
  readonly helpers: AgencyHelpers
  /** crashes can expire leases: agents then also look for expired tasks */
  readonly expiryPossible: boolean
  private readonly init: AgencyInit
  private readonly heartbeats: HeartbeatModel
  private readonly pings: PingModel
  private readonly rng: Random
  private readonly syncMs: number
  private readonly overlapAlerts: boolean
  /** pairs of tasks whose holders were told of their overlap (and agreed their interface) */
  private readonly agreedPairs = new Set<number>()
  private readonly reviewQueue: ReviewRequest[] = []
  private syncKey = 0
  private readonly extraBeats: number[]
  /** per replica: anti-entropy rounds in a row that found the logs equal */
  private readonly quietRounds: number[]
  private readonly wallStart = performance.now()

  constructor(init: AgencyInit) {
    validateRun(init)
    this.init = init
    const n = init.agents
    this.project = init.project
    this.rng = createRandom(init.seed)
    this.pollMs = init.pollMs ?? RUN_DEFAULTS.pollMs
    this.syncMs = init.syncMs ?? AGENCY_DEFAULTS.syncMs
    this.mechanisms = { ...ALL_MECHANISMS, ...init.mechanisms }
    const settings: MechanismSettings = { ...MECHANISM_DEFAULTS, ...init.settings }
    this.settings = settings
    this.overlapAlerts = init.overlapAlerts ?? this.mechanisms.overlapMessages
    this.expiryPossible = (init.crashes ?? []).length > 0
    this.topology = new Topology(n)
    this.latency = new LinkLatency({ seed: init.seed, ...init.latency })
    // Every daemon sees the other n - 1 as live, so all beat at the interval
    // agentd would pick for that swarm, and wait the timeout it would scale to.
    const policy = heartbeatPolicy(
      init.heartbeatMs ?? AGENCY_DEFAULTS.heartbeatMs,
      init.leaseMs ?? AGENCY_DEFAULTS.leaseMs,
      init.heartbeatMaxRate
    )
    const periodMs = heartbeatIntervalMs(n - 1, policy)
    this.heartbeats = new HeartbeatModel({ seed: init.seed, periodMs, latency: this.latency, topology: this.topology, loss: init.loss })
    // As agentd's RoundTripProbe: one ping per heartbeat interval, for the settle window.
    this.pings = new PingModel({ seed: init.seed, periodMs, nodes: n, latency: this.latency, topology: this.topology, loss: init.loss })
    this.recorder = new RunRecorder({ strategy: 'agency', label: init.label ?? 'agency', agents: n, tasks: this.project.tasks.length })
    this.progress = new ProjectProgress(this.project, this.recorder)
    this.integrator = new SimIntegrator({
      scheduler: this.scheduler,
      recorder: this.recorder,
      verifyMs: this.project.hazards.options.verifyMs,
      batching: this.mechanisms.batching,
      batchEveryMs: settings.batchEveryMs,
      batchMax: settings.batchMax,
      pileUp: settings.pileUp
    })
    this.helpers = new AgencyHelpers({
      project: this.project,
      agents: n,
      progress: this.progress,
      recorder: this.recorder,
      scheduler: this.scheduler,
      mechanisms: this.mechanisms,
      settings
    })
    this.extraBeats = new Array<number>(n).fill(0)
    this.quietRounds = new Array<number>(n).fill(0)
    const shared = {
      seed: init.seed,
      pool: this.pool,
      project: this.project,
      topology: this.topology,
      latency: this.latency,
      heartbeats: this.heartbeats,
      pings: this.pings,
      loss: init.loss ?? AGENCY_DEFAULTS.loss,
      heartbeatPolicy: policy,
      settle: init.settle ?? {},
      indexOf: (name: string) => {
        const i = agentIndex(name)
        return i !== undefined && i < n ? i : undefined
      },
      findings: new SharedFindings(),
      scheduler: this.scheduler,
      onWrite: (e: PoolEntry) => {
        this.wrote(e)
      }
    }
    for (let i = 0; i < n; i++) {
      const replica = new Replica(i, agentName(i), n, shared, 0)
      this.replicas.push(replica)
      this.agents.push(new AgencyAgent(i, this, replica, this.rng.fork()))
    }
    this.plan()
    const spread = init.startSpreadMs ?? RUN_DEFAULTS.startSpreadMs
    for (const a of this.agents) a.start(1_000 + this.rng.between(0, spread))
    if (n > 1) for (const r of this.replicas) this.scheduleSync(r, this.rng.between(0, this.syncMs))
    for (const p of init.partitions ?? []) this.schedulePartition(p)
    for (const c of init.crashes ?? []) this.scheduleCrash(c)
  }

  /** The first agent writes the goal and every task at t = 0. */
  private plan(): void {
    const planner = this.replicas[0]
    planner.write(
      'goal',
      Goal.fromPartial({ text: 'build the synthetic project: make every hidden test pass', testCommand: 'npm test' }),
      0
    )
    for (const t of this.project.tasks) {
      planner.write(
        'task',
        TaskSpec.fromPartial({
          id: t.id,
          title: `task ${t.index} in ${this.project.areas[t.area].name}`,
          deps: t.deps,
          scope: t.files,
          priority: t.priority
        }),
        0,
        t.index
      )
    }
  }

  /** Counts the gossip of an entry just written. */
  private wrote(e: PoolEntry): void {
    this.recorder.bump(`entries: ${e.kind}`)
    const tx = gossipTransmissions(this.replicas.length)
    this.recorder.count('gossip: entries', tx, tx * gossipFrameBytes(e.bytes))
  }

  /**
   * A claim was won: an extra heartbeat (held claims changed) and, as
   * BoardService does, a direct message to each holder of an overlapping
   * claim. The sim's scopes are plain file paths, so overlap is a shared file;
   * the candidates are the held tasks this replica's ReadyIndex knows, instead
   * of core overlapsFor's scan of every task (O(M) per claim).
   */
  claimHeld(replica: Replica, task: ProjectTask, now: number): void {
    this.extraBeats[replica.index]++
    if (!this.overlapAlerts) return
    const peers = new Set<string>()
    for (const other of replica.ready.held.values()) {
      if (other === task.index) continue
      const o = this.project.tasks[other]
      if (!o.files.some(f => task.files.includes(f))) continue
      const h = replica.board.holder(o.id)
      if (h !== undefined && h.holder !== replica.name && replica.board.task(o.id, now)?.holderLive === true) {
        peers.add(h.holder)
        this.agreedPairs.add(pairKey(task.index, other))
      }
    }
    if (peers.size === 0) return
    this.recorder.bump('overlapAlerts', peers.size)
    const { message, ack } = directMessageBytes(
      `[agency] scope overlap: my task ${task.id} (${task.files.join(', ')}) overlaps your task on ${task.files[0]}. Let's agree who changes what.`
    )
    this.recorder.count('direct messages', 2 * peers.size, peers.size * (message + ack))
  }

  /** Whether the holders of tasks a and b were told of their overlap and agreed their interface. */
  agreed(a: number, b: number): boolean {
    return this.agreedPairs.has(pairKey(a, b))
  }

  get agentCount(): number {
    return this.agents.length
  }

  /** A change asks for a review (its author goes on); an idle peer takes it at once, else the next peer to look for work. */
  requestReview(r: ReviewRequest): void {
    this.reviewQueue.push(r)
    this.recorder.bump('reviewRequests')
    const { message, ack } = directMessageBytes(`[agency] review requested: ${r.task.id}`)
    this.recorder.count('direct messages', 2, message + ack)
    for (const a of this.agents) {
      if (a.idle && a.index !== r.author) {
        a.wake()
        return
      }
    }
  }

  /**
   * By the author's board: fewer ready tasks than agents not at work on a task, so some peer has nothing to claim (it would assist or
   * wait): agentd's status field reviewers_free.
   */
  peerIdle(author: number): boolean {
    const ready = this.replicas[author].ready
    return reviewersFree(ready.open.size, this.agents.length - ready.held.size)
  }

  /** The oldest review request by another agent, for `reviewer` to do. */
  takeReview(reviewer: number): ReviewRequest | undefined {
    const i = this.reviewQueue.findIndex(r => r.author !== reviewer)
    if (i < 0) return undefined
    return this.reviewQueue.splice(i, 1)[0]
  }

  deliverVerdict(r: ReviewRequest, caught: boolean): void {
    const { message, ack } = directMessageBytes(`[agency] review of ${r.task.id}: ${caught ? 'defect found' : 'approved'}`)
    this.recorder.count('direct messages', 2, message + ack)
    r.then(caught)
  }

  freezeAgents(): void {
    for (const a of this.agents) a.freeze()
  }

  /** Runs until every hidden test passes (or the time limit). */
  run(): RunResult {
    const limit = this.init.maxVirtualMs ?? RUN_DEFAULTS.maxVirtualMs
    this.scheduler.run({ until: limit, stop: () => this.progress.complete })
    return this.result()
  }

  /** Advances virtual time to `until` (tests). */
  runUntil(until: number): void {
    this.scheduler.run({ until })
  }

  result(): RunResult {
    const end = this.scheduler.now
    this.countHeartbeats(end)
    return this.recorder.result(end, (performance.now() - this.wallStart) / 1000, this.scheduler.eventsRun)
  }

  private countHeartbeats(end: number): void {
    const n = this.replicas.length
    let beats = 0
    let pings = 0
    for (let p = 0; p < n; p++) {
      beats += this.heartbeats.sentBetween(p, 0, end) + this.extraBeats[p]
      pings += this.pings.sentBetween(p, 0, end)
    }
    const tx = gossipTransmissions(n) * beats
    this.recorder.count('gossip: heartbeats', tx, tx * gossipFrameBytes(presenceBytes(1)))
    if (pings > 0) this.recorder.count('pings', 2 * pings, 2 * pings * PING_BYTES)
  }

  // ---- anti-entropy: the initiator sends its vector and digest; the responder
  // answers with what the initiator lacks and its own vector; the initiator
  // pushes back what the responder lacks. Equal digests end after one answer.

  // As agentd's LogService: rounds that find nothing to move double the
  // period, up to 8 ×; a round that moves entries brings it back.
  private scheduleSync(q: Replica, delay: number): void {
    this.scheduler.after(delay, () => {
      this.syncOnce(q)
      this.scheduleSync(q, syncPeriodMs(this.syncMs, this.quietRounds[q.index]))
    })
  }

  private syncOnce(q: Replica): void {
    const now = this.scheduler.now
    const n = this.replicas.length
    if (!this.topology.isUp(q.index, now)) return
    let other = this.rng.int(n - 1)
    if (other >= q.index) other++
    const r = this.replicas[other]
    if (!this.topology.canReach(q.index, r.index, now)) return // the dial fails
    q.drain(now)
    const [count, xor] = q.digestParts
    const key = this.syncKey++
    this.recorder.count('sync', 1, syncRequestBytes(q.authors))
    this.scheduler.after(this.latency.delay(q.index, r.index, key, SYNC_SALT), () => {
      const t1 = this.scheduler.now
      if (!this.topology.canReach(q.index, r.index, t1)) return
      r.drain(t1)
      if (r.digestIs(count, xor)) {
        this.recorder.count('sync', 2, syncBatchBytes(0, 0, r.authors) + syncBatchBytes(0, 0, 0))
        this.quietRounds[q.index]++
        return
      }
      this.quietRounds[q.index] = 0
      const forQ = q.lacksFrom(r)
      this.recorder.count('sync', 1, syncBatchBytes(this.bytesOf(forQ), forQ.length, r.authors))
      this.scheduler.after(this.latency.delay(r.index, q.index, key, SYNC_SALT + 1), () => {
        const t2 = this.scheduler.now
        if (!this.topology.canReach(q.index, r.index, t2)) return
        q.drain(t2)
        q.receive(forQ, t2)
        const forR = r.lacksFrom(q)
        this.recorder.count('sync', 1, syncBatchBytes(this.bytesOf(forR), forR.length, 0))
        if (forR.length === 0) return
        this.scheduler.after(this.latency.delay(q.index, r.index, key, SYNC_SALT + 2), () => {
          if (!this.topology.canReach(q.index, r.index, this.scheduler.now)) return
          r.drain(this.scheduler.now)
          r.receive(forR, this.scheduler.now)
        })
      })
    })
  }

  private bytesOf(indices: readonly number[]): number {
    let b = 0
    for (const i of indices) b += this.pool.entries[i].bytes
    return b
  }

  // ---- faults ----

  private schedulePartition(p: PartitionPlan): void {
    const n = this.replicas.length
    const groups = p.groups ?? [Array.from({ length: Math.floor(n / 2) }, (_, i) => i)]
    this.scheduler.at(p.at, () => {
      this.topology.partition(groups, this.scheduler.now)
    })
    this.scheduler.at(p.until, () => {
      this.topology.heal(this.scheduler.now)
      this.recorder.bump('partitionsHealed')
    })
  }

  private scheduleCrash(c: CrashPlan): void {
    const node = c.node
    if (!Number.isSafeInteger(node) || node < 0 || node >= this.replicas.length) throw new RangeError(`no node ${node} to crash`)
    this.scheduler.at(c.at, () => {
      const now = this.scheduler.now
      this.replicas[node].drain(now)
      this.topology.setDown(node, true, now)
      this.replicas[node].crash()
      this.agents[node].crash(now)
      this.recorder.bump('crashes')
    })
    if (c.restartAt === undefined) return
    this.scheduler.at(c.restartAt, () => {
      const now = this.scheduler.now
      this.topology.setDown(node, false, now)
      const replica = this.replicas[node]
      replica.restart(now)
      // a restarted daemon syncs with a few peers before its agent acts
      for (let i = 0; i < 3 && this.replicas.length > 1; i++) this.syncOnce(replica)
      this.scheduler.after(2_000, () => {
        this.agents[node].restart()
      })
    })
  }
}

function pairKey(a: number, b: number): number {
  return a < b ? a * 1_048_576 + b : b * 1_048_576 + a
}

export function runAgency(init: AgencyInit): RunResult {
  return new AgencySwarm(init).run()
}
