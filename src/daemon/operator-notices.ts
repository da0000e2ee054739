// What the operator's actions mean for this daemon's agent, as they arrive in
// the log: the operator's messages to it (and to everyone) as urgent inbox
// items, each once; a pause as a notice, with the held tasks' work pushed to
// their wip refs at once; a resume as a notice that lets the harness start
// again. Each notice is keyed by its action, so a restart repeats none.
import type { Board } from '../core/board/index.js'
import type { NoticeKind } from './agent-inbox.js'
import type { Logger } from '../logger.js'

export interface OperatorNoticesInit {
  me: string
  board: () => Board
  onEntry: (listener: () => void) => () => void
  notice: (kind: NoticeKind, text: string, once: string) => Promise<unknown>
  /** pushes the held tasks' work to their wip refs (a paused swarm loses nothing) */
  saveWork: () => Promise<void>
  /** the pause is over: the harness may start again */
  resumed: () => void
  logger: Logger
}

/** The operator's messages at most delivered to an agent that joins late. */
const LATE_MESSAGES = 20

export class OperatorNotices {
  private readonly init: OperatorNoticesInit
  private off?: () => void
  private delivered = new Set<string>()
  private lastPause: string | undefined

  constructor (init: OperatorNoticesInit) {
    this.init = init
  }

  beforeStart (): void {
    this.off = this.init.onEntry(() => { this.look() })
    this.look()
  }

  stop (): void {
    this.off?.()
  }

  private look (): void {
    const board = this.init.board()
    if (board.operators().keys.length === 0) return
    for (const m of board.operatorMessages(this.init.me).slice(-LATE_MESSAGES)) {
      if (this.delivered.has(m.id)) continue
      this.delivered.add(m.id)
      this.tell('operator', m.text, `operator:${m.id}`)
    }
    const p = board.paused()
    const key = `${p.paused ? 'pause' : 'resume'}:${p.by ?? ''}:${p.time ?? 0}`
    if (p.by === undefined || key === this.lastPause) return
    const first = this.lastPause === undefined
    this.lastPause = key
    if (p.paused) {
      this.tell('paused', `the operator paused the swarm${p.reason !== '' ? `: ${p.reason}` : ''}. Finish your current step, commit your work on your task branch, and end your turn; no new turn starts until the operator resumes. You keep your tasks.`, key)
      this.init.saveWork().catch(err => { this.init.logger.warn({ err }, 'cannot push the work in progress at a pause') })
    } else if (!first) {
      this.tell('resumed', 'the operator resumed the swarm: carry on with your tasks', key)
      this.init.resumed()
    } else {
      this.init.resumed()
    }
  }

  private tell (kind: NoticeKind, text: string, once: string): void {
    this.init.notice(kind, text, once).catch(err => { this.init.logger.warn({ err }, 'cannot store an operator notice') })
  }
}
