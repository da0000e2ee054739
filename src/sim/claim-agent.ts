// A scripted agent that only wants a task: it picks one from its node's ready
// list, claims it, waits out the settle window, and on LOST releases its
// losing claim and picks again, until it holds a task or nothing is ready.

import { claimFromPlan } from '../core/board/board.js'
import { isAgencyError } from '../core/errors.js'
import { claimOutcome } from '../core/board/settle.js'
import type { SimBoardNode, SimMessage } from './board-node.js'
import type { SimNetwork } from './network.js'
import type { Random } from './random.js'

export type ClaimAgentState = 'waiting' | 'claiming' | 'holding' | 'idle'

export interface ClaimAgentInit {
  node: SimBoardNode
  network: SimNetwork<SimMessage>
  rng: Random
  /** pick uniformly among the first `spread` ready tasks (1 = everyone goes for the top task) */
  spread?: number
  /** write a Release for a claim that lost, so it can never come back as holder */
  releaseLost?: boolean
}

export class ClaimAgent {
  state: ClaimAgentState = 'waiting'
  /** the task this agent believes it holds */
  holding: { task: string, epoch: number } | undefined
  claims = 0
  readonly lost = new Set<string>()
  private readonly node: SimBoardNode
  private readonly network: SimNetwork<SimMessage>
  private readonly rng: Random
  private readonly spread: number
  private readonly releaseLost: boolean

  constructor (init: ClaimAgentInit) {
    this.node = init.node
    this.network = init.network
    this.rng = init.rng
    this.spread = init.spread ?? Infinity
    this.releaseLost = init.releaseLost ?? true
  }

  get name (): string {
    return this.node.name
  }

  start (delayMs: number): void {
    this.network.schedule(delayMs, () => this.pick())
  }

  private pick (): void {
    if (!this.node.isUp) return
    const now = this.network.now
    const candidates = this.node.board.ready(now).filter(t => !this.lost.has(t.id))
    if (candidates.length === 0) {
      this.state = 'idle'
      return
    }
    const task = this.rng.pick(candidates.slice(0, this.spread)).id
    let plan
    try {
      plan = this.node.board.checkClaimable(task, this.name, now)
    } catch (err) {
      if (!isAgencyError(err)) throw err
      this.lost.add(task)
      this.pick()
      return
    }
    if (plan.alreadyHeld) {
      this.hold(task, plan.epoch)
      return
    }
    this.state = 'claiming'
    this.claims++
    this.node.append('claim', claimFromPlan(plan))
    this.network.schedule(this.node.settle.windowMs(), () => this.check(task, plan.epoch))
  }

  private check (task: string, epoch: number): void {
    if (!this.node.isUp) return
    const outcome = claimOutcome(this.node.board, task, this.name, epoch)
    if (outcome.outcome === 'HELD') {
      this.hold(task, epoch)
      return
    }
    this.lost.add(task)
    if (this.releaseLost && this.node.board.claimStatus(task, this.name, epoch) === 'active') {
      this.node.append('release', { task, epoch, note: '', branch: '' })
    }
    this.pick()
  }

  private hold (task: string, epoch: number): void {
    this.state = 'holding'
    this.holding = { task, epoch }
  }
}
