// Turns what the daemon learns for its agent into inbox notices: a claim lost
// or superseded and an overlap (from the board's events), a review asked of
// this agent, the result of an integration it asked for, and a changed goal
// (from new log entries). Notices carry a short text an agent can act on.
import { decodeBody, isKnownKind } from '../core/log/kinds.js'
import type { StoredEntry } from '../core/log/ingest-result.js'
import type { Event } from '../gen/agency/v1/api.js'
import type { AgentInbox, NoticeKind } from './agent-inbox.js'
import type { EventBus } from './event-bus.js'
import type { LogService } from './log-service.js'
import type { Logger } from '../logger.js'

export interface NoticeWriterInit {
  me: string
  name: () => string
  inbox: AgentInbox
  events: EventBus
  log: LogService
  logger: Logger
  /** the current goal's entry id, if any */
  currentGoalId: () => string | undefined
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

  constructor (init: NoticeWriterInit) {
    this.init = init
  }

  start (): void {
    this.goalId = this.init.currentGoalId()
    this.unsubscribe.push(this.init.events.subscribe(e => { this.fromEvent(e) }))
    this.unsubscribe.push(this.init.log.onAccepted(e => { this.fromEntry(e) }))
  }

  stop (): void {
    for (const u of this.unsubscribe.splice(0)) u()
  }

  private fromEvent (e: Event): void {
    const kind = FROM_EVENTS[e.type]
    if (kind === undefined) return
    const advice = kind === 'overlap'
      ? ' Message that peer (agency send <peer> ...) and agree who changes what before editing shared files.'
      : detailOf(e).reason === 'done'
        ? ' Stop working on it, and record what you learned (agency note --kind note|failure "<what you learned>"), then pick another task.'
        : ' Stop working on it; send the new holder anything useful you have (agency send <peer> ...), then pick another task.'
    this.write(kind, e.text + advice, e.task)
  }

  private fromEntry (e: StoredEntry): void {
    const { entry } = e
    if (!isKnownKind(entry.kind)) return
    try {
      switch (entry.kind) {
        case 'review_request': {
          const r = decodeBody('review_request', entry.body)
          if (entry.author !== this.init.me && (r.reviewers.includes(this.init.me) || r.reviewers.includes(this.init.name()))) {
            this.write('review_requested', `${entry.author} asks you to review ${r.target}${r.note !== '' ? `: ${r.note}` : ''}. Check it out, run the tests, then agency review approve|reject ${r.target} with your evidence.`)
          }
          break
        }
        case 'integration': {
          const i = decodeBody('integration', entry.body)
          if (i.request === '') break
          const request = this.init.log.state.get(i.request)
          if (request?.entry.author !== this.init.me || entry.author === this.init.me) break
          const text = i.result === 'merged'
            ? `your integration request for ${i.task}@${i.epoch} landed on the shared branch as ${i.commit.slice(0, 12)}. If the task is finished: agency done ${i.task}.`
            : `your integration request for ${i.task}@${i.epoch} did not land (${i.result}${i.paths.length > 0 ? ` in ${i.paths.join(', ')}` : ''}): see agency find "${i.task}" for the failure, fix it and integrate again.`
          this.write('integration', text, i.task)
          break
        }
        case 'goal': {
          const current = this.init.currentGoalId()
          if (current === undefined || current === this.goalId) break
          const had = this.goalId !== undefined
          this.goalId = current
          if (!had || entry.author === this.init.me) break
          const g = decodeBody('goal', entry.body)
          this.write('goal_changed', `the goal changed: ${g.text}${g.testCommand !== '' ? ` (tests: ${g.testCommand})` : ''}. Check that your task still serves it (agency status).`)
          break
        }
      }
    } catch (err) {
      this.init.logger.debug({ err: (err as Error).message, kind: entry.kind }, 'no notice for a malformed entry')
    }
  }

  private write (kind: NoticeKind, text: string, task = ''): void {
    this.init.inbox.notice(kind, text, task).catch(err => { this.init.logger.warn({ err }, 'cannot store a notice') })
  }
}

function detailOf (e: Event): { reason?: unknown } {
  try {
    const d: unknown = e.detailJson === '' ? {} : JSON.parse(e.detailJson)
    return typeof d === 'object' && d !== null ? d : {}
  } catch {
    return {}
  }
}
