// Who landed a task's work at an epoch: what lets a done by someone other than
// the epoch's winner count (an assistant's, see claim-ledger.ts). A function of
// the SET of `integration` and `integration_request` entries folded in,
// whatever order they came in:
//
// - a merged integration with no `request` was landed by its own author (a
//   direct `agency integrate`): (task, epoch, integration's author);
// - a merged integration whose `request` names an integration_request entry
//   was landed by the REQUEST's author, at the integration's (task, epoch),
//   only when the request names the same task and epoch. The integrator that
//   wrote the integration merged someone else's work: it lands nothing of its
//   own by it (unless it authored the request too). An integration answering a
//   request not folded (yet), or one of another task or epoch, lands nothing.
//
// Integrations whose result is not "merged", and anything at epoch 0, land
// nothing; any integration naming a request answers it (carry-on.ts: a
// request no integration answers is still on its way). Of several integrations landing one (task, epoch, author), the
// first in (lamport, author) order gives the landing's commit and paths.

import type { Integration, IntegrationRequest } from '../../gen/agency/v1/log.js'
import { compareOrder, compareText, type Ordered } from './order.js'
import type { BoardEntryHeader } from './types.js'

interface At {
  task: string
  epoch: number
}

/** One agent's work landed on the shared branch: what its done names. */
export interface Landing {
  task: string
  epoch: number
  /** whose work landed: the integration's author, or the request's */
  author: string
  commit: string
  paths: string[]
}

/** A merged integration: where it landed, and its place in the fold order. */
interface Merge extends At {
  order: Ordered
  commit: string
  paths: string[]
}

export class LandedWork {
  /** by author, then "task\0epoch": everyone who landed work, with the first integration that landed it */
  private readonly landed = new Map<string, Map<string, { landing: Landing; order: Ordered }>>()
  /** integration_request entries by id: their task, epoch and author */
  private readonly requests = new Map<string, At & { author: string }>()
  /** merged integrations by the request id they answer */
  private readonly answers = new Map<string, Merge[]>()
  /** request ids some integration answers, whatever its result */
  private readonly answered = new Set<string>()
  /** "task\0epoch" -> the integration_request entries at it: their ids and authors */
  private readonly requestsAt = new Map<string, Array<{ id: string; author: string }>>()
  /** "author\0task\0epoch" landed by a merged integration answering the author's request */
  private readonly byRequest = new Set<string>()

  /** Folds an integration in; returns the task whose landed work may have changed, if any. */
  addIntegration(h: BoardEntryHeader, i: Integration): string | undefined {
    // Answered, whatever the result: its task is no longer on its way (carry-on.ts).
    if (i.request !== '') this.answered.add(i.request)
    if (i.result !== 'merged' || !(i.epoch >= 1)) return undefined
    // the integration is the board's own copy (Board.apply): its list is shared, and `by` copies what it hands out
    const merge: Merge = { task: i.task, epoch: i.epoch, order: h, commit: i.commit, paths: i.paths }
    if (i.request === '') {
      this.land(h.author, merge)
      return i.task
    }
    const list = this.answers.get(i.request) ?? []
    list.push(merge)
    this.answers.set(i.request, list)
    const r = this.requests.get(i.request)
    return r !== undefined && this.answerLands(r, merge) ? i.task : undefined
  }

  /** Folds an integration request in; returns the task whose landed work may have changed, if any. */
  addRequest(h: BoardEntryHeader, r: IntegrationRequest): string | undefined {
    if (!(r.epoch >= 1)) return undefined
    const request = { task: r.task, epoch: r.epoch, author: h.author }
    this.requests.set(h.id, request)
    const at = this.requestsAt.get(key(r.task, r.epoch)) ?? []
    at.push({ id: h.id, author: h.author })
    this.requestsAt.set(key(r.task, r.epoch), at)
    let changed = false
    for (const a of this.answers.get(h.id) ?? []) changed = this.answerLands(request, a) || changed
    return changed ? r.task : undefined
  }

  /** Whether `author` landed `task`'s work at `epoch`. */
  has(task: string, epoch: number, author: string): boolean {
    return this.landed.get(author)?.has(key(task, epoch)) ?? false
  }

  /** Whether a request of `author` for `task` at `epoch` is folded in that no integration answers yet. */
  pending(task: string, epoch: number, author: string): boolean {
    return (this.requestsAt.get(key(task, epoch)) ?? []).some(r => r.author === author && !this.answered.has(r.id))
  }

  /** Whether a merged integration answering a request of `author` landed `task`'s work at `epoch`. */
  hasByRequest(task: string, epoch: number, author: string): boolean {
    return this.byRequest.has(`${author}\u0000${key(task, epoch)}`)
  }

  /** Every landing of `author`'s work, by task then epoch. */
  by(author: string): Landing[] {
    const out: Landing[] = []
    for (const { landing } of this.landed.get(author)?.values() ?? []) out.push({ ...landing, paths: [...landing.paths] })
    return out.sort((a, b) => compareText(a.task, b.task) || a.epoch - b.epoch)
  }

  private answerLands(r: At & { author: string }, m: Merge): boolean {
    if (r.task !== m.task || r.epoch !== m.epoch) return false
    this.byRequest.add(`${r.author}\u0000${key(m.task, m.epoch)}`)
    this.land(r.author, m)
    return true
  }

  private land(author: string, m: Merge): void {
    let mine = this.landed.get(author)
    if (mine === undefined) this.landed.set(author, (mine = new Map<string, { landing: Landing; order: Ordered }>()))
    const k = key(m.task, m.epoch)
    const known = mine.get(k)
    if (known !== undefined && compareOrder(known.order, m.order) <= 0) return
    mine.set(k, { landing: { task: m.task, epoch: m.epoch, author, commit: m.commit, paths: m.paths }, order: m.order })
  }
}

function key(task: string, epoch: number): string {
  return `${task}\u0000${epoch}`
}
