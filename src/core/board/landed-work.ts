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
// nothing.

import type { Integration, IntegrationRequest } from '../../gen/agency/v1/log.js'
import type { BoardEntryHeader } from './types.js'

interface At { task: string, epoch: number }

export class LandedWork {
  /** "task\0epoch\0author" of everyone who landed work */
  private readonly landed = new Set<string>()
  /** integration_request entries by id: their task, epoch and author */
  private readonly requests = new Map<string, At & { author: string }>()
  /** merged integrations by the request id they answer */
  private readonly answers = new Map<string, At[]>()

  /** Folds an integration in; returns the task whose landed work may have changed, if any. */
  addIntegration (h: BoardEntryHeader, i: Integration): string | undefined {
    if (i.result !== 'merged' || !(i.epoch >= 1)) return undefined
    if (i.request === '') {
      this.landed.add(key(i.task, i.epoch, h.author))
      return i.task
    }
    const list = this.answers.get(i.request) ?? []
    list.push({ task: i.task, epoch: i.epoch })
    this.answers.set(i.request, list)
    const r = this.requests.get(i.request)
    return r !== undefined && this.answerLands(r, { task: i.task, epoch: i.epoch }) ? i.task : undefined
  }

  /** Folds an integration request in; returns the task whose landed work may have changed, if any. */
  addRequest (h: BoardEntryHeader, r: IntegrationRequest): string | undefined {
    if (!(r.epoch >= 1)) return undefined
    const request = { task: r.task, epoch: r.epoch, author: h.author }
    this.requests.set(h.id, request)
    let changed = false
    for (const a of this.answers.get(h.id) ?? []) changed = this.answerLands(request, a) || changed
    return changed ? r.task : undefined
  }

  /** Whether `author` landed `task`'s work at `epoch`. */
  has (task: string, epoch: number, author: string): boolean {
    return this.landed.has(key(task, epoch, author))
  }

  private answerLands (r: At & { author: string }, a: At): boolean {
    if (r.task !== a.task || r.epoch !== a.epoch) return false
    this.landed.add(key(r.task, r.epoch, r.author))
    return true
  }
}

function key (task: string, epoch: number, author: string): string {
  return `${task}\u0000${epoch}\u0000${author}`
}
