// The scripted agent of a fault run: it does what an agent does through its
// daemon, at random moments, and every call goes into the history. It claims
// a ready task (and now and then calls claim again while the first call
// waits, as a CLI or MCP client retries), works on a HELD task for a while,
// then integrates it (re-checking the claim first, as `agency integrate`
// does, and the shared remote fences it) and marks it done, or releases it
// with notes; it stops working on a task its daemon says it lost; it sends
// direct messages. When idle it wakes, as `agency wait` returns, whenever a
// task may have become ready, so agents race for the same task. After a
// restart it claims again what its daemon says it holds.

import type { ClaimNotice, ClaimVerdict } from '../../core/board/claim-protocol.js'
import { claimOutcome } from '../../core/board/settle.js'
import type { SimBoardNode, SimMessage } from './board-node.js'
import type { SimNetwork } from '../engine/network.js'
import type { Random } from '../engine/random.js'
import type { History } from './history.js'
import type { SharedBranch } from './shared-branch.js'

export interface FaultAgentInit {
  node: SimBoardNode
  network: SimNetwork<SimMessage>
  history: History
  branch: SharedBranch
  rng: Random
  /** every node's name, for direct messages */
  names: readonly string[]
}

export class FaultAgent {
  private readonly init: FaultAgentInit
  private readonly node: SimBoardNode
  private life = 0
  private frozen = false
  /** claim calls waiting for their answer, by task */
  private readonly waiting = new Map<string, number[]>()
  private holding: { task: string; epoch: number; until: number } | undefined

  constructor(init: FaultAgentInit) {
    this.init = init
    this.node = init.node
    this.node.listen({
      verdict: v => {
        this.answered(v)
      },
      notice: n => {
        this.told(n)
      },
      message: (from, id) => {
        init.history.add({ kind: 'deliver', time: this.time, node: this.name, from, id })
      },
      // Like `agency wait`: an idle agent wakes when a task may have become ready, as its peers do.
      entry: e => {
        if (
          (e.kind === 'done' || e.kind === 'release' || e.kind === 'task') &&
          this.holding === undefined &&
          this.waiting.size === 0 &&
          !this.frozen
        ) {
          this.later(init.rng.between(0, 20), () => {
            if (this.holding === undefined && this.waiting.size === 0 && !this.frozen) this.act()
          })
        }
      }
    })
  }

  get name(): string {
    return this.node.name
  }

  private get time(): number {
    return this.init.network.now
  }

  start(delayMs: number): void {
    this.later(delayMs, () => {
      this.loop()
    })
  }

  /** No new calls from now on; answers and notices are still recorded. */
  freeze(): void {
    this.frozen = true
  }

  /** The machine died: calls in flight end with an unknown outcome. */
  crash(): void {
    this.life++
    this.init.history.crashed(this.name, this.time)
    this.waiting.clear()
    this.holding = undefined
  }

  /** The machine is back: the agent asks again for what its daemon says it holds, then goes on. */
  restart(): void {
    this.life++
    this.later(300, () => {
      const held = this.node.board.heldBy(this.name)[0]
      if (held !== undefined && !this.frozen) this.claim(held.task, false)
      this.loop()
    })
  }

  private later(ms: number, fn: () => void): void {
    const life = this.life
    this.init.network.schedule(ms, () => {
      if (life === this.life && this.node.isUp) fn()
    })
  }

  private loop(): void {
    if (this.frozen) return
    this.act()
    this.later(this.init.rng.between(200, 800), () => {
      this.loop()
    })
  }

  private act(): void {
    const rng = this.init.rng
    if (this.holding !== undefined) {
      if (this.time >= this.holding.until) this.finish()
      return
    }
    if (this.waiting.size > 0) {
      if (rng.chance(0.15)) this.claim([...this.waiting.keys()][0], true)
      return
    }
    if (rng.chance(0.1)) this.sendMessage()
    // Half the time the first ready task, as a herd of agents reading the same board would: claims race.
    const ready = this.node.board.ready(this.node.now)
    if (ready.length > 0) this.claim(rng.chance(0.5) ? ready[0].id : rng.pick(ready).id, false)
  }

  private claim(task: string, retry: boolean): void {
    const h = this.init.history
    const op = h.invoke({ time: this.time, node: this.name, f: 'claim', task, retry })
    this.waiting.set(task, [...(this.waiting.get(task) ?? []), op])
    try {
      this.node.claim(task)
    } catch (err) {
      this.waiting.set(
        task,
        (this.waiting.get(task) ?? []).filter(o => o !== op)
      )
      if (this.waiting.get(task)?.length === 0) this.waiting.delete(task)
      h.complete(op, this.time, { type: 'fail', reason: (err as Error).message })
    }
  }

  private answered(v: ClaimVerdict): void {
    const ops = this.waiting.get(v.task)
    if (ops === undefined) return
    this.waiting.delete(v.task)
    for (const op of ops)
      this.init.history.complete(op, this.time, { type: 'ok', outcome: v.outcome, epoch: v.epoch, winner: v.winner, reason: v.reason })
    if (v.outcome === 'HELD' && this.holding === undefined) {
      this.holding = { task: v.task, epoch: v.epoch, until: this.time + this.init.rng.between(1_000, 6_000) }
    }
  }

  private told(n: ClaimNotice): void {
    const notice = { kind: 'notice' as const, time: this.time, node: this.name, task: n.task, epoch: n.epoch, reason: n.reason }
    this.init.history.add(n.winner !== undefined ? { ...notice, winner: n.winner } : notice)
    // "Stop working on it."
    if (this.holding?.task === n.task && this.holding.epoch === n.epoch) this.holding = undefined
  }

  private finish(): void {
    const { task, epoch } = this.holding as { task: string; epoch: number }
    this.holding = undefined
    const h = this.init.history
    if (this.init.rng.chance(0.15)) {
      this.release(task, epoch, `notes on ${task}`)
      return
    }
    const merge = h.invoke({ time: this.time, node: this.name, f: 'merge', task, epoch })
    // agency integrate re-checks the claim before it pushes; the remote fences the push.
    if (claimOutcome(this.node.board, task, this.name, epoch).outcome !== 'HELD') {
      h.complete(merge, this.time, { type: 'fail', reason: 'no longer held' })
      return
    }
    const result = this.init.branch.push(task, epoch, this.name, this.time)
    h.complete(merge, this.time, { type: result === 'landed' ? 'ok' : 'fail', outcome: result === 'landed' ? 'landed' : 'fenced' })
    if (result !== 'landed') {
      // As agentd: later claims go above the fence; a claim it closed is released.
      if (this.node.fenced(task, epoch, result.fenced))
        this.release(
          task,
          epoch,
          `superseded at the shared remote: ${result.fenced.agent}'s work for ${task}@${result.fenced.epoch} landed`
        )
      return
    }
    const done = h.invoke({ time: this.time, node: this.name, f: 'done', task, epoch })
    try {
      this.node.done(task, `merge-${task}-${epoch}`)
      h.complete(done, this.time, { type: 'ok' })
    } catch (err) {
      h.complete(done, this.time, { type: 'fail', reason: (err as Error).message })
    }
  }

  private release(task: string, epoch: number, note: string): void {
    const h = this.init.history
    const op = h.invoke({ time: this.time, node: this.name, f: 'release', task, epoch })
    try {
      this.node.release(task, note)
      h.complete(op, this.time, { type: 'ok' })
    } catch (err) {
      h.complete(op, this.time, { type: 'fail', reason: (err as Error).message })
    }
  }

  private sendMessage(): void {
    const others = this.init.names.filter(n => n !== this.name)
    if (others.length === 0) return
    const to = this.init.rng.pick(others)
    const h = this.init.history
    const op = h.invoke({ time: this.time, node: this.name, f: 'send', to })
    const id = this.node.send(to, `hello from ${this.name}`)
    h.complete(op, this.time, { type: 'ok', id })
  }
}
