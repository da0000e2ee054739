// What the operator's actions mean for this daemon's agent, as they arrive in
// the log: the operator's messages to it (and to everyone) as urgent inbox
// items, each once; a pause as a notice, with the held tasks' work pushed to
// their wip refs at once; a resume as a notice that lets the harness start
// again. The held tasks are kept through the pause for the time the
// operator stated; a pause that outlasts it gives them back (their work is on
// the wip refs), so that a long pause does not strand them. Each notice is
// keyed by its action, so a restart repeats none.
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
  /** gives the held tasks back with a hand-off note (a pause outlasted the time its leases were kept) */
  releaseHeld: (note: string) => Promise<void>
  logger: Logger
}

/** The operator's messages at most delivered to an agent that joins late. */
const LATE_MESSAGES = 20

export class OperatorNotices {
  private readonly init: OperatorNoticesInit
  private off?: () => void
  private delivered = new Set<string>()
  private lastPause: string | undefined
  private keepTimer?: NodeJS.Timeout

  constructor(init: OperatorNoticesInit) {
    this.init = init
  }

  beforeStart(): void {
    this.off = this.init.onEntry(() => {
      this.look()
    })
    this.look()
  }

  stop(): void {
    this.off?.()
    clearTimeout(this.keepTimer)
  }

  private look(): void {
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
    clearTimeout(this.keepTimer)
    if (p.paused) {
      this.tell(
        'paused',
        `the operator paused the swarm${p.reason !== '' ? `: ${p.reason}` : ''}. Finish your current step, commit your work on your task branch, and end your turn; no new turn starts until the operator resumes. You keep your tasks.`,
        key
      )
      this.init.saveWork().catch(err => {
        this.init.logger.warn({ err }, 'cannot push the work in progress at a pause')
      })
      // beyond what a timer holds (about 24 days) the tasks are kept for the whole pause
      if (p.leaseKeepMs > 0 && p.leaseKeepMs <= 2 ** 31 - 1) {
        // on this daemon's own clock, from when it learned of the pause
        this.keepTimer = setTimeout(() => {
          if (this.lastPause !== key) return
          this.init
            .releaseHeld(
              `the operator's pause outlasted the ${Math.round(p.leaseKeepMs / 60_000)} min its tasks were kept for; the work so far is on the task's wip ref`
            )
            .catch(err => {
              this.init.logger.warn({ err }, 'cannot give back the held tasks after a long pause')
            })
        }, p.leaseKeepMs)
        this.keepTimer.unref()
      }
    } else if (!first) {
      this.tell('resumed', 'the operator resumed the swarm: carry on with your tasks', key)
      this.init.resumed()
    } else {
      this.init.resumed()
    }
  }

  private tell(kind: NoticeKind, text: string, once: string): void {
    this.init.notice(kind, text, once).catch(err => {
      this.init.logger.warn({ err }, 'cannot store an operator notice')
    })
  }
}
