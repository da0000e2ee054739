// A scripted agent that only wants a task: it picks one from its node's ready
// list and claims it through the node's claim protocol; on LOST (the protocol
// has released the losing claim) it picks again, until it holds a task or
// nothing is ready.

import type { ClaimVerdict } from '../../core/board/claim-protocol.js'
import { isAgencyError } from '../../core/errors.js'
import type { SimBoardNode, SimMessage } from './board-node.js'
import type { SimNetwork } from '../engine/network.js'
import type { Random } from '../engine/random.js'

export type ClaimAgentState = 'waiting' | 'claiming' | 'holding' | 'idle'

export interface ClaimAgentInit {
  node: SimBoardNode
  network: SimNetwork<SimMessage>
  rng: Random
  /** pick uniformly among the first `spread` ready tasks (1 = everyone goes for the top task) */
  spread?: number
}

export class ClaimAgent {
  state: ClaimAgentState = 'waiting'
  /** the task this agent believes it holds */
  holding: { task: string; epoch: number } | undefined
  claims = 0
  readonly lost = new Set<string>()
  private readonly node: SimBoardNode
  private readonly network: SimNetwork<SimMessage>
  private readonly rng: Random
  private readonly spread: number
  private claiming: string | undefined

  constructor(init: ClaimAgentInit) {
    this.node = init.node
    this.network = init.network
    this.rng = init.rng
    this.spread = init.spread ?? Infinity
    this.node.listen({
      verdict: v => {
        this.answered(v)
      }
    })
  }

  get name(): string {
    return this.node.name
  }

  start(delayMs: number): void {
    this.network.schedule(delayMs, () => this.pick())
  }

  private pick(): void {
    if (!this.node.isUp) return
    const now = this.network.now
    const candidates = this.node.board.ready(now).filter(t => !this.lost.has(t.id))
    if (candidates.length === 0) {
      this.state = 'idle'
      return
    }
    const task = this.rng.pick(candidates.slice(0, this.spread)).id
    this.state = 'claiming'
    this.claiming = task
    try {
      const ticket = this.node.claim(task)
      if (ticket.output.append.length > 0) this.claims++
    } catch (err) {
      if (!isAgencyError(err)) throw err
      this.claiming = undefined
      this.lost.add(task)
      this.pick()
    }
  }

  private answered(v: ClaimVerdict): void {
    if (v.task !== this.claiming || !this.node.isUp) return
    this.claiming = undefined
    if (v.outcome === 'HELD') {
      this.state = 'holding'
      this.holding = { task: v.task, epoch: v.epoch }
      return
    }
    this.lost.add(v.task)
    this.pick()
  }
}
