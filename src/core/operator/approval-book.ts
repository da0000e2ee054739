// Agents' permission requests waiting for an operator (--acp-permissions ask).
// A request is an entry of the asking daemon; the answer is an operator's
// signed `approval` action, so no member can answer for the operator; the
// asking daemon closes a request it stopped waiting for (timed out, or the
// turn went away). One request id belongs to the first author that used it.
import type { ApprovalRequest } from '../../gen/agency/v1/log.js'
import { compareOrder, compareText, type Ordered } from '../board/order.js'
import type { BoardEntryHeader } from '../board/types.js'
import type { OperatorAuthority } from './operator-authority.js'

export type ApprovalState = 'pending' | 'approved' | 'denied' | 'timed_out' | 'withdrawn'

export interface ApprovalView {
  id: string
  /** the asking agent's daemon */
  agent: string
  title: string
  grant: string
  detail: string
  task: string
  /** the asker's clock */
  time: number
  expiresAt: number
  state: ApprovalState
  answeredBy?: string
  always: boolean
}

interface RequestRecord extends Ordered {
  time: number
  request: ApprovalRequest
}

/** Longest request id kept: ids are random tokens. */
const MAX_REQUEST_ID = 64

export class ApprovalBook {
  /** request id -> the first request entry with it in (lamport, author) order */
  private readonly asked = new Map<string, RequestRecord>()
  /** request id -> "author reason" of each close */
  private readonly closes = new Map<string, string[]>()

  add(h: BoardEntryHeader, r: ApprovalRequest): boolean {
    if (r.id === '' || r.id.length > MAX_REQUEST_ID) return false
    if (r.closed !== '') {
      const list = this.closes.get(r.id) ?? []
      list.push(`${h.author} ${r.closed}`)
      this.closes.set(r.id, list)
      return true
    }
    const record: RequestRecord = { id: h.id, author: h.author, seq: h.seq, lamport: h.lamport, time: h.time, request: r }
    const had = this.asked.get(r.id)
    if (had === undefined || compareOrder(record, had) < 0) this.asked.set(r.id, record)
    return true
  }

  /** The asker's close of a request: the smallest reason it gave, if it gave one. */
  private closed(id: string, asker: string): string | undefined {
    const reasons = (this.closes.get(id) ?? [])
      .filter(c => c.startsWith(`${asker} `))
      .map(c => c.slice(asker.length + 1))
      .sort(compareText)
    return reasons[0]
  }

  /** Every request, by the asker's time, then id. */
  all(authority: OperatorAuthority): ApprovalView[] {
    const answers = new Map<string, { by: string; allow: boolean; always: boolean }>()
    for (const { action } of authority.ofKind('approval')) {
      if (!answers.has(action.request)) answers.set(action.request, { by: action.operator, allow: action.allow, always: action.always })
    }
    const out: ApprovalView[] = []
    for (const [id, r] of this.asked) {
      const closed = this.closed(id, r.author)
      const answer = answers.get(id)
      const state: ApprovalState =
        closed === 'timed_out' || closed === 'withdrawn' ? closed : answer === undefined ? 'pending' : answer.allow ? 'approved' : 'denied'
      const view: ApprovalView = {
        id,
        agent: r.author,
        title: r.request.title,
        grant: r.request.grant,
        detail: r.request.detail,
        task: r.request.task,
        time: r.time,
        expiresAt: r.request.expiresAt,
        state,
        always: answer?.always === true && answer.allow
      }
      if (answer !== undefined && closed === undefined) view.answeredBy = answer.by
      out.push(view)
    }
    return out.sort((a, b) => a.time - b.time || compareText(a.id, b.id))
  }
}
