import { TaskSpec } from '../../../src/gen/agency/v1/log.js'
import { SimBoardNode, type SimBoardNodeInit, type SimMessage } from '../../../src/sim/faults/board-node.js'
import { SimNetwork, type NetworkInit } from '../../../src/sim/engine/network.js'
import { createRandom, type Random } from '../../../src/sim/engine/random.js'

export interface Swarm {
  rng: Random
  network: SimNetwork<SimMessage>
  nodes: SimBoardNode[]
  byName: Map<string, SimBoardNode>
}

export function createSwarm(
  seed: number,
  count: number,
  net: Omit<NetworkInit<SimMessage>, 'rng'> = {},
  node: Omit<SimBoardNodeInit, 'name' | 'network'> = {}
): Swarm {
  const rng = createRandom(seed)
  const network = new SimNetwork<SimMessage>({ rng: rng.fork(), ...net })
  const nodes: SimBoardNode[] = []
  for (let i = 0; i < count; i++) {
    nodes.push(new SimBoardNode({ name: `agent-${String(i).padStart(4, '0')}`, network, rng: rng.fork(), ...node }))
  }
  return { rng, network, nodes, byName: new Map(nodes.map(n => [n.name, n])) }
}

export function addTasks(writer: SimBoardNode, count: number, scope: (i: number) => string[] = () => []): string[] {
  const ids: string[] = []
  for (let i = 0; i < count; i++) {
    const id = `task-${String(i).padStart(3, '0')}`
    writer.append('task', TaskSpec.fromPartial({ id, title: `Task ${i}`, priority: i % 4, scope: scope(i) }))
    ids.push(id)
  }
  return ids
}

/** task -> "holder@epoch" on one node's board. */
export function holderTable(node: SimBoardNode): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [task, h] of node.board.holders()) out[task] = `${h.holder}@${h.epoch}`
  return out
}

/** Advances virtual time in steps until `done()` holds (then `settleMs` more for in-flight messages). */
export function runUntil(
  network: SimNetwork<SimMessage>,
  done: () => boolean,
  { stepMs = 250, maxMs = 120_000, settleMs = 1_000 } = {}
): void {
  const deadline = network.now + maxMs
  while (!done()) {
    if (network.now >= deadline) throw new Error(`not done after ${maxMs} ms of virtual time`)
    network.run(network.now + stepMs)
  }
  network.run(network.now + settleMs)
}
