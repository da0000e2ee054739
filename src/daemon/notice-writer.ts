// Turns what the daemon learns for its agent into inbox notices: a claim lost
// or superseded and an overlap (from the board's events), a review asked of
// this agent, the result of an integration it asked for, and a changed goal
// (from new log entries). Notices carry a short text an agent can act on,
// from core/agent-words.ts. One more is written by background-integration.ts
// when it happens: a background integrate whose verify failed before any
// request was written (no entry answers a request then, so nothing here would
// tell it).
// What became of this agent's integration requests is also derived from the
// board when the daemon starts, each written once (keyed by the integration
// entry): a daemon killed after an integration arrived but before its notice
// was stored tells its agent at the next start.
import { decodeBody, isKnownKind } from '../core/log/kinds.js'
import type { StoredEntry } from '../core/log/ingest-result.js'
import type { Event } from '../gen/agency/v1/api.js'
import type { Board } from '../core/board/index.js'
import type { AgentInbox, NoticeKind } from './agent-inbox.js'
import type { EventBus } from './event-bus.js'
import type { LogService } from './log-service.js'
import type { Logger } from '../logger.js'
import { afterTaskEvent, goalChanged, requestResult, reviewRequested } from '../core/agent-words.js'

export interface NoticeWriterInit {
  me: string
  name: () => string
  inbox: AgentInbox
  events: EventBus
  log: LogService
  logger: Logger
  /** the current goal's entry id, if any */
  currentGoalId: () => string | undefined
  /** whether this agent's work on a task at an epoch is an assistant's (its integration notices say so) */
  assisted?: (task: string, epoch: number) => boolean
  /** the board, for the request results to tell at start */
  board?: () => Board
}

const FROM_EVENTS: Partial<Record<string, NoticeKind>> = {
  claim_lost: 'claim_lost',
  claim_superseded: 'claim_superseded',
  overlap: 'overlap'
}

export class NoticeWriter {
  private readonly init: NoticeWriterInit
  private goalId: string | undefined
  private readonly unsubscribe: Array<() => void> = []
  private catchingUp: Promise<void> = Promise.resolve()

  constructor(init: NoticeWriterInit) {
    this.init = init
  }

  beforeStart(): void {
    this.goalId = this.init.currentGoalId()
    this.unsubscribe.push(
      this.init.events.subscribe(e => {
        this.fromEvent(e)
      })
    )
    this.unsubscribe.push(
      this.init.log.onAccepted(e => {
        this.fromEntry(e)
      })
    )
    this.catchingUp = this.requestResultsOnBoard()
  }

  /** Resolves once the notices derived at start are stored. */
  async caughtUp(): Promise<void> {
    await this.catchingUp
  }

  /**
   * The result of every integration request of this agent that the board
   * holds an answer to and that still matters (its task is not done, or the
   * request landed and finished it), written once per answer: those
   * told before (by the live path or an earlier start) are not told again.
   */
  private async requestResultsOnBoard(): Promise<void> {
    const board = this.init.board?.()
    if (board === undefined) return
    const writes: Array<Promise<unknown>> = []
    for (const i of board.integrationResults()) {
      if (i.request === '' || this.init.log.state.get(i.request)?.entry.author !== this.init.me) continue
      const assisted = this.init.assisted?.(i.task, i.epoch) ?? false
      const done = board.doneRecord(i.task)
      // a landed request finished the task by this agent (an assistant's, or the holder's: carry-on): told all the same
      if (done !== undefined && !(i.result === 'merged' && done.by === this.init.me)) continue
      writes.push(this.stored('integration', requestResult(i, assisted), i.task, requestNoticeKey(i.entryId)))
    }
    await Promise.all(writes)
  }

  stop(): void {
    for (const u of this.unsubscribe.splice(0)) u()
  }

  private fromEvent(e: Event): void {
    const kind = FROM_EVENTS[e.type]
    if (kind === undefined) return
    const advice = afterTaskEvent(kind === 'overlap' ? 'overlap' : detailOf(e).reason === 'done' ? 'lost-done' : 'lost')
    this.write(kind, e.text + advice, e.task)
  }

  private fromEntry(e: StoredEntry): void {
    const { entry } = e
    if (!isKnownKind(entry.kind)) return
    try {
      switch (entry.kind) {
        case 'review_request': {
          const r = decodeBody('review_request', entry.body)
          if (entry.author !== this.init.me && (r.reviewers.includes(this.init.me) || r.reviewers.includes(this.init.name()))) {
            this.write('review_requested', reviewRequested(entry.author, r.target, r.note))
          }
          break
        }
        case 'integration': {
          const i = decodeBody('integration', entry.body)
          if (i.request === '') break
          const request = this.init.log.state.get(i.request)
          // this agent's own answers too: its daemon's background integrate (background-integration.ts) answers its request
          if (request?.entry.author !== this.init.me) break
          this.write('integration', requestResult(i, this.init.assisted?.(i.task, i.epoch) ?? false), i.task, requestNoticeKey(e.id))
          break
        }
        case 'goal': {
          const current = this.init.currentGoalId()
          if (current === undefined || current === this.goalId) break
          const had = this.goalId !== undefined
          this.goalId = current
          if (!had || entry.author === this.init.me) break
          const g = decodeBody('goal', entry.body)
          this.write('goal_changed', goalChanged(g.text, g.testCommand))
          break
        }
      }
    } catch (err) {
      this.init.logger.debug({ err: (err as Error).message, kind: entry.kind }, 'no notice for a malformed entry')
    }
  }

  private write(kind: NoticeKind, text: string, task = '', once?: string): void {
    void this.stored(kind, text, task, once)
  }

  private async stored(kind: NoticeKind, text: string, task: string, once?: string): Promise<void> {
    await this.init.inbox.notice(kind, text, task, once).catch(err => {
      this.init.logger.warn({ err }, 'cannot store a notice')
    })
  }
}

/** The key a request's result is told under, once: the integration entry that answered it. */
function requestNoticeKey(integrationId: string): string {
  return `integration:${integrationId}`
}

function detailOf(e: Event): { reason?: unknown } {
  try {
    const d: unknown = e.detailJson === '' ? {} : JSON.parse(e.detailJson)
    return typeof d === 'object' && d !== null ? d : {}
  } catch {
    return {}
  }
}
