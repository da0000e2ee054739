// The operator's membership in agentd (docs/operator.md): the allow-list and
// the removed members the board folds from the operators' actions, fed to
// the peer guard (a removed member's connections are refused and dropped;
// with an allow-list, so are those of a peer on neither it nor
// --allow-peers) and to presence (a removed member leaves the directory,
// and so `agency status`; its heartbeats are ignored from then on).
import type { Board } from '../core/board/index.js'
import type { PeerGuard } from '../mesh/peer-guard.js'
import type { Logger } from '../logger.js'

export interface MembershipServiceInit {
  board: () => Pick<Board, 'membership'>
  /** calls back after each entry that may change the operators' actions (an operator or goal entry) */
  onEntry: (listener: () => void) => () => void
  guard: Pick<PeerGuard, 'setMembership' | 'admits'>
  /** the peers this daemon has connections with */
  connected: () => string[]
  hangUp: (peer: string) => void
  /** drops a removed member from presence */
  forget: (peer: string) => void
  logger: Logger
}

export class MembershipService {
  private readonly init: MembershipServiceInit
  private off?: () => void
  /** the membership last applied, as JSON: applied again only when it changes */
  private applied = ''

  constructor(init: MembershipServiceInit) {
    this.init = init
  }

  /** Before the mesh starts: the guard knows the membership before the first connection. */
  beforeStart(): void {
    this.update()
    this.off = this.init.onEntry(() => {
      this.update()
    })
  }

  stop(): void {
    this.off?.()
  }

  private update(): void {
    const m = this.init.board().membership()
    const key = JSON.stringify(m)
    if (key === this.applied) return
    this.applied = key
    const removed = m.removed.map(r => r.peer)
    this.init.guard.setMembership({ allowed: m.allowed, removed })
    for (const peer of removed) this.init.forget(peer)
    const refused = this.init.connected().filter(peer => !this.init.guard.admits(peer))
    for (const peer of refused) this.init.hangUp(peer)
    this.init.logger.info({ allowed: m.allowed.length, removed, hungUp: refused }, "the operator's membership changed")
  }
}
