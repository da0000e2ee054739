// Runs the core claim protocol (core/board/claim-protocol) in virtual time,
// as daemon/board-service runs it on real timers: the entries it asks for are
// written, the claims it holds are kept (they survive a crash, as agentd's
// state store does), its answers and notices go to the agent, and a wake-up
// is scheduled for the end of every settle window. One runner per process
// life: a crash ends it, a restart builds a new protocol and a new runner.

import type { ClaimProtocol, ClaimNotice, ClaimTicket, ClaimVerdict, MyClaim, ProtocolOutput } from '../../core/board/claim-protocol.js'
import type { AppendRequest } from '../../core/board/claim-protocol.js'

export interface ClaimRunnerInit {
  protocol: ClaimProtocol
  /** virtual time on this node's clock */
  now: () => number
  /** runs `fn` at virtual time `at` (this node's clock) */
  at: (at: number, fn: () => void) => void
  /** writes an entry the protocol asked for; the node folds it back into the protocol */
  write: (req: AppendRequest) => void
  /** before a wake-up looks at the board: take in what has arrived by now */
  beforeTick?: () => void
  /** the claims to persist changed */
  persist?: (mine: MyClaim[]) => void
  onVerdict?: (v: ClaimVerdict) => void
  onNotice?: (n: ClaimNotice) => void
}

export class SimClaimRunner {
  readonly protocol: ClaimProtocol
  private readonly init: ClaimRunnerInit
  private readonly armed = new Set<number>()
  private live = true

  constructor(init: ClaimRunnerInit) {
    this.init = init
    this.protocol = init.protocol
  }

  /** The process died: scheduled wake-ups do nothing. */
  end(): void {
    this.live = false
  }

  /** The agent claims `task`: the claim entry is written and its answer comes later (or now). */
  claim(task: string, scope: readonly string[] = [], opts: { wait?: boolean } = {}): ClaimTicket {
    const ticket = this.protocol.claim(task, scope, this.init.now(), opts)
    this.execute(ticket.output)
    return ticket
  }

  /** The agent released or finished `task`. */
  forget(task: string): void {
    this.execute(this.protocol.forget(task))
  }

  execute(out: ProtocolOutput): void {
    if (!this.live) return
    for (const n of out.notices) this.init.onNotice?.(n)
    for (const req of out.append) this.init.write(req)
    if (out.mineChanged) this.init.persist?.(this.protocol.mine())
    for (const v of out.answers) this.init.onVerdict?.(v)
    this.arm()
  }

  private arm(): void {
    const next = this.protocol.nextWake()
    if (next === undefined || this.armed.has(next)) return
    this.armed.add(next)
    this.init.at(next, () => {
      this.armed.delete(next)
      if (!this.live) return
      this.init.beforeTick?.()
      this.execute(this.protocol.tick(this.init.now()))
    })
  }
}
