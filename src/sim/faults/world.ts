// One fault run: simulated daemons (SimBoardNode: the core claim protocol,
// gossip, anti-entropy, presence, pings, direct messages, what survives a
// crash) and their scripted agents on a SimNetwork, the shared remote, and the
// nemesis playing the schedule. When the active part is over, partitions
// heal, crashed nodes restart, the network goes quiet and the agents stop;
// anti-entropy runs a while; then the replicas' final state is read.

import { TaskSpec } from '../../gen/agency/v1/log.js'
import type { ClaimProtocol, ClaimProtocolInit } from '../../core/board/claim-protocol.js'
import type { BoardBodies, BoardEntry, BoardKind } from '../../core/board/types.js'
import { SimBoardNode, type SimBoardNodeInit, type SimMessage } from './board-node.js'
import { SimNetwork } from '../engine/network.js'
import { createRandom } from '../engine/random.js'
import { FaultAgent } from './fault-agent.js'
import { History } from './history.js'
import type { ReplicaState } from './run-record.js'
import type { FaultSchedule } from './schedule.js'
import { SharedBranch } from './shared-branch.js'

export type { ReplicaState } from './run-record.js'

/** The daemons' timing in a fault run: agentd's rules, on a faster clock. */
export const FAULT_TIMING = { heartbeatMs: 1_000, leaseMs: 5_000, syncEveryMs: 1_000, diskSyncMs: 2_000, dmRetryMs: 1_000 } as const

export interface WorldOptions {
  /** builds each node's claim protocol; a test plants a bug here */
  createProtocol?: (init: ClaimProtocolInit) => ClaimProtocol
  /** how long the healed, quiet network runs before the replicas are compared */
  quietMs?: number
}

export interface RunOutcome {
  schedule: FaultSchedule
  history: History
  branch: SharedBranch
  replicas: ReplicaState[]
  /** "task@epoch" -> the claim the holder rule picks at that epoch on the converged board (of the first replica) */
  winners: Map<string, string>
}

/** A daemon whose every append (its own and its protocol's) goes into the history: an acknowledged entry. */
class RecordedNode extends SimBoardNode {
  private readonly history: History

  constructor(init: SimBoardNodeInit & { history: History }) {
    super(init)
    this.history = init.history
  }

  override append<K extends BoardKind>(kind: K, body: BoardBodies[K]): BoardEntry {
    const entry = super.append(kind, body)
    const b = body as { task?: string; epoch?: number }
    const e = { kind: 'append' as const, time: this.network.now, node: this.name, id: entry.id, entryKind: kind }
    this.history.add(kind === 'claim' || kind === 'release' || kind === 'done' ? { ...e, task: b.task, epoch: b.epoch } : e)
    return entry
  }
}

export function nodeName(i: number): string {
  return `n${i}`
}

export function runSchedule(s: FaultSchedule, opts: WorldOptions = {}): RunOutcome {
  const rng = createRandom(s.seed)
  const history = new History()
  const branch = new SharedBranch()
  const names = Array.from({ length: s.nodes }, (_, i) => nodeName(i))
  const network = new SimNetwork<SimMessage>({
    rng: rng.fork(),
    minLatencyMs: 5,
    maxLatencyMs: 50,
    jitterMs: 5,
    loss: s.loss,
    duplicate: s.duplicate,
    reorder: s.reorder,
    reorderMs: s.reorderMs,
    onDrop: (from, to, msg, why) => {
      if (msg.type === 'sync-batch' || (msg.type === 'entry' && msg.entry.kind === 'claim'))
        history.add({ kind: 'drop', time: network.now, from, to, why })
    }
  })
  const nodes = names.map(
    (name, i) =>
      new RecordedNode({
        name,
        network,
        history,
        rng: rng.fork(),
        ...FAULT_TIMING,
        clockOffsetMs: s.skew[i]?.clockMs ?? 0,
        wallOffsetMs: s.skew[i]?.wallMs ?? 0,
        createProtocol: opts.createProtocol
      })
  )
  const agents = nodes.map(node => new FaultAgent({ node, network, history, branch, rng: rng.fork(), names }))

  for (let t = 0; t < s.tasks; t++) {
    const id = `t${t}`
    nodes[0].append('task', TaskSpec.fromPartial({ id, title: `task ${t}`, scope: [`src/${id}/**`] }))
  }
  // They all start at about the same moment: a race for the first task.
  for (const a of agents) a.start(500 + rng.between(0, 30))

  const at = (time: number, fn: () => void): void => {
    network.schedule(time - network.now, fn)
  }
  const down = new Set<number>()
  for (const f of s.faults) {
    if (f.kind === 'crash') {
      at(f.at, () => {
        if (down.has(f.node) || f.node >= nodes.length) return
        down.add(f.node)
        history.add({ kind: 'nemesis', time: network.now, f: 'crash', node: names[f.node], loseUnsynced: f.loseUnsynced })
        agents[f.node].crash()
        nodes[f.node].crash({ loseUnsynced: f.loseUnsynced })
      })
      at(f.restartAt, () => {
        restart(f.node)
      })
    } else {
      const groups = f.groups.map(g => g.filter(n => n < nodes.length).map(n => names[n]))
      at(f.at, () => {
        history.add({ kind: 'nemesis', time: network.now, f: 'partition', groups })
        network.partition(groups)
      })
      at(f.until, () => {
        history.add({ kind: 'nemesis', time: network.now, f: 'heal' })
        network.heal()
      })
    }
  }
  function restart(i: number): void {
    if (!down.has(i)) return
    down.delete(i)
    history.add({ kind: 'nemesis', time: network.now, f: 'restart', node: names[i] })
    nodes[i].restart(names.filter((_, j) => j !== i))
    agents[i].restart()
  }

  // The end of the faults: everything heals and goes quiet, the agents stop.
  at(s.activeMs, () => {
    history.add({ kind: 'nemesis', time: network.now, f: 'quiet' })
    network.heal()
    network.setFaults({ loss: 0, duplicate: 0, reorder: 0 })
    for (const i of [...down]) restart(i)
    for (const a of agents) a.freeze()
  })
  network.run(s.activeMs + (opts.quietMs ?? 30_000))

  const winners = new Map<string, string>()
  for (const e of nodes[0].entries()) {
    if (e.kind !== 'claim') continue
    const w = nodes[0].board.winnerAt(e.body.task, e.body.epoch)
    if (w !== undefined) winners.set(`${e.body.task}@${e.body.epoch}`, w)
  }
  return {
    schedule: s,
    history,
    branch,
    winners,
    replicas: nodes.map(n => ({
      node: n.name,
      up: n.isUp,
      entryIds: n
        .entries()
        .map(e => e.id)
        .sort(),
      board: n.board
        .tasks(n.now)
        .map(t => `${t.id} ${t.state === 'expired' ? 'claimed' : t.state} ${t.holder ?? '-'}@${t.epoch} ${t.doneBy ?? '-'}`)
    }))
  }
}
