import { describe, expect, it } from 'vitest'
import { TaskSpec } from '../../../src/gen/agency/v1/log.js'
import { EntryPool } from '../../../src/sim/swarm-model/entry-pool.js'
import { HeartbeatModel } from '../../../src/sim/swarm-model/heartbeat-model.js'
import { PingModel } from '../../../src/sim/swarm-model/ping-model.js'
import { LinkLatency } from '../../../src/sim/engine/link-latency.js'
import { Replica, type ReplicaShared } from '../../../src/sim/swarm-model/replica.js'
import { Scheduler } from '../../../src/sim/engine/scheduler.js'
import { heartbeatPolicy } from '../../../src/core/presence/heartbeat-interval.js'
import { SharedFindings } from '../../../src/sim/swarm-model/shared-findings.js'
import { agentIndex, agentName } from '../../../src/sim/swarm-model/strategies/common.js'
import { Topology } from '../../../src/sim/engine/topology.js'
import { createProject } from '../../../src/sim/swarm-model/workload.js'

function setup(n: number, { loss = 0 } = {}) {
  const project = createProject(1, { tasks: 10, layers: 2 })
  const topology = new Topology(n)
  const latency = new LinkLatency({ seed: 3, minMs: 10, maxMs: 20, jitterMs: 0, tailChance: 0 })
  const shared: ReplicaShared = {
    seed: 3,
    pool: new EntryPool(),
    project,
    topology,
    latency,
    heartbeats: new HeartbeatModel({ seed: 3, periodMs: 1_000, latency, topology }),
    pings: new PingModel({ seed: 3, periodMs: 1_000, nodes: n, latency, topology }),
    loss,
    heartbeatPolicy: heartbeatPolicy(1_000, 3_000),
    settle: { minMs: 0, defaultMs: 100 },
    indexOf: agentIndex,
    findings: new SharedFindings(),
    scheduler: new Scheduler()
  }
  const replicas = Array.from({ length: n }, (_, i) => new Replica(i, agentName(i), n, shared, 0))
  return { project, topology, latency, replicas, shared }
}

const spec = (id: string) => TaskSpec.fromPartial({ id, title: id })

describe('replica: lazy gossip over the modelled links', () => {
  it('an entry reaches a peer after its link latency, not before, and only once', () => {
    const {
      replicas: [a, b]
    } = setup(2)
    a.write('task', spec('task-00000'), 1_000, 0)
    b.drain(1_009)
    expect(b.size).toBe(0)
    b.drain(1_020)
    expect(b.size).toBe(1)
    expect(b.board.task('task-00000', 1_020)?.state).toBe('open')
    b.drain(1_500)
    expect(b.size).toBe(1)
    // one-way gossip delays are no settle samples: they would need the sender's clock
    expect(b.settle.sampleCount).toBe(0)
  })

  it('a claim takes in the round trips of the pings answered before it: both legs, as the pinger timed them', () => {
    const {
      replicas: [a, b],
      latency,
      shared
    } = setup(2)
    a.write('task', spec('task-00000'), 0, 0)
    b.drain(100)
    b.claim('task-00000', 10_500)
    // ten pings a second apart, every one to a, every one answered
    expect(b.settle.sampleCount).toBeGreaterThanOrEqual(9)
    expect(b.settle.p99()).toBeCloseTo(2 * latency.base(0, 1))
    expect(a.settle.sampleCount).toBe(0) // a has not claimed: it has taken nothing in
    expect(shared.pings.roundTrips(0, 0, 10_500, 512).length).toBeGreaterThanOrEqual(9)
  })

  it('a partition cuts gossip; after healing, anti-entropy (lacksFrom/receive) repairs it', () => {
    const {
      replicas: [a, b, c],
      topology
    } = setup(3)
    topology.partition([[0, 1]], 0)
    a.write('task', spec('task-00000'), 100, 0)
    for (const r of [b, c]) r.drain(1_000)
    expect(b.size).toBe(1)
    expect(c.size).toBe(0)
    topology.heal(2_000)
    c.drain(3_000)
    expect(c.size).toBe(0) // gossip is not retried
    c.receive(c.lacksFrom(a), 3_000)
    expect(c.size).toBe(1)
    expect(c.digest).toBe(a.digest)
    expect(c.lacksFrom(a)).toEqual([])
  })

  it('lost messages are judged lost for good; a crashed node misses what was sent while it was down', () => {
    const { replicas } = setup(40, { loss: 0.5 })
    replicas[0].write('task', spec('task-00000'), 0, 0)
    for (const r of replicas) r.drain(1_000)
    const got = replicas.filter(r => r.size === 1).length
    expect(got).toBeGreaterThan(5)
    expect(got).toBeLessThan(39)

    const {
      replicas: [a, b],
      topology: t2
    } = setup(2)
    t2.setDown(1, true, 50)
    a.write('task', spec('task-00000'), 60, 0)
    t2.setDown(1, false, 500)
    b.drain(1_000)
    expect(b.size).toBe(0)
  })

  it('leases follow modelled heartbeats: live while beating, expired a lease after a crash, live again after restart', () => {
    const {
      replicas: [a, b],
      topology
    } = setup(2)
    expect(b.board.task('task-00000', 0)).toBeUndefined()
    const live = (now: number) =>
      (b.board as unknown as { liveness: { isLive: (p: string, n: number) => boolean } }).liveness.isLive(a.name, now)
    expect(live(5_000)).toBe(true)
    topology.setDown(0, true, 6_000)
    expect(live(8_000)).toBe(true)
    expect(live(6_000 + 3_000 + 1_100)).toBe(false)
    topology.setDown(0, false, 20_000)
    expect(live(21_100)).toBe(true)
  })

  it('a restart rebuilds the board from stored entries', () => {
    const {
      replicas: [a]
    } = setup(1)
    a.write('task', spec('task-00000'), 0, 0)
    a.write('task', spec('task-00001'), 0, 1)
    a.restart(5_000)
    expect(a.size).toBe(2)
    expect(a.board.tasks(5_000).map(t => t.id)).toEqual(['task-00000', 'task-00001'])
  })
})
