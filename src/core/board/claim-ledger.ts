// Claims, releases and dones per task, and the rules that turn them into a
// holder. Everything here is a function of the SET of entries (maxima and
// membership), so it does not depend on arrival order:
//
// - holder: let E be the highest epoch of any claim on the task; the holder is
//   the smallest (lamport, author) among the unreleased claims at E. When every
//   claim at E is released, nobody holds the task (earlier epochs never come
//   back).
// - a release by X at epoch e releases X's claims at e, whichever arrives first.
// - a done by X at epoch e counts only when X is the winner at e (the smallest
//   unreleased claim at e), even if a higher epoch exists by now: X did the
//   work; or when X landed the task's work at e itself (X assisted the holder
//   and its work passed first, see assist-choice.ts; the shared remote's fence
//   lets only one agent land work per task and epoch). X landed work at e when
//   a merged integration of (task, e) is X's own (`agency integrate`), or
//   answers X's integration request for (task, e) (an integrator merged it:
//   the request's author landed, not the integrator). The board answers that
//   from the set of integrations and requests (landed-work.ts) and calls
//   touch() when it changes, so a request folded before or after its
//   integration gives the same answer. Of several valid dones, the one at the
//   highest epoch (then the smallest (lamport, author)) gives the commit.
//   Done is terminal.
// - a claim's scope keeps what scope-limits lets count (capScope).
// - claims, releases and dones at epoch 0 are malformed and ignored.

import type { Claim, Done, Release } from '../../gen/agency/v1/log.js'
import { compareOrder, type Ordered } from './order.js'
import { capScope } from './scope-limits.js'
import type { BoardEntryHeader } from './types.js'

export interface ClaimRecord extends Ordered {
  time: number
  task: string
  epoch: number
  scope: string[]
  takeoverOf: string
  branch: string
  handoff: string
}

export interface ReleaseRecord extends Ordered {
  time: number
  task: string
  epoch: number
  note: string
  branch: string
  /** hand-off by speed: the agent the releaser handed the task to ('' for none) */
  to: string
}

export interface DoneRecord extends Ordered {
  time: number
  task: string
  epoch: number
  commit: string
  paths: string[]
}

/** The latest hand-off notes known for a task. */
export interface HandoffInfo {
  /** the holder that left the notes */
  from: string
  /** the epoch the notes were left at */
  epoch: number
  note: string
  branch: string
  /** hand-off by speed: the agent the notes' author handed the task to ('' for none; docs/handoff.md) */
  to: string
  /** entry that carried them: a release, or a takeover claim passing them on */
  entryId: string
}

/** What the claim entries of one task add up to. */
export interface TaskClaims {
  /** highest epoch of any claim; 0 when never claimed */
  highestEpoch: number
  /** the epoch a new claim must use: 1 + highest epoch seen in any claim, release or done */
  nextEpoch: number
  holder?: ClaimRecord
  done?: DoneRecord
  handoff?: HandoffInfo
}

// A board holds one of these per task for every replica of the log, so the
// containers a task may never need (releases, dones, notes, winners) are made
// on first use: absent reads as empty.
interface TaskEntries {
  claimsByEpoch: Map<number, ClaimRecord[]>
  highestEpoch: number
  /** highest epoch in any claim, release or done */
  seenEpoch: number
  /** releaseKey of every claim, to match releases to claims */
  claimed: Set<string>
  released?: Set<string>
  dones?: DoneRecord[]
  /** entries that may carry hand-off notes: releases with notes, takeover claims */
  notes?: Array<ReleaseRecord | ClaimRecord>
  /** winner per epoch, kept up to date as claims and releases arrive */
  winners?: Map<number, ClaimRecord | undefined>
  derived?: TaskClaims
}

/** Whether `author` landed `task`'s work at `epoch` (a merged integration of its own, or one answering its request). */
export type LandedBy = (task: string, epoch: number, author: string) => boolean

const NOBODY: TaskClaims = { highestEpoch: 0, nextEpoch: 1 }

// Costs stay flat when a thousand agents claim one task: a new claim updates
// its epoch's winner in O(1); only a release of the current winner rescans
// that epoch's claims.
export class ClaimLedger {
  private readonly tasks = new Map<string, TaskEntries>()
  private readonly landed: LandedBy

  /** `landed`: whether an author landed a task's work at an epoch (what lets an assistant's done count). */
  constructor(landed: LandedBy = () => false) {
    this.landed = landed
  }

  /** What `landed` answers changed for `task`: its derived state is computed again. */
  touch(task: string): void {
    const t = this.tasks.get(task)
    if (t !== undefined) t.derived = undefined
  }

  addClaim(h: BoardEntryHeader, c: Claim): boolean {
    if (!(c.epoch >= 1)) return false
    const t = this.entries(c.task)
    const record: ClaimRecord = {
      id: h.id,
      author: h.author,
      seq: h.seq,
      lamport: h.lamport,
      time: h.time,
      task: c.task,
      epoch: c.epoch,
      scope: capScope(c.scope),
      takeoverOf: c.takeoverOf,
      branch: c.branch,
      handoff: c.handoff
    }
    const atEpoch = t.claimsByEpoch.get(c.epoch)
    if (atEpoch === undefined) t.claimsByEpoch.set(c.epoch, [record])
    else atEpoch.push(record)
    t.claimed.add(releaseKey(h.author, c.epoch))
    t.highestEpoch = Math.max(t.highestEpoch, c.epoch)
    t.seenEpoch = Math.max(t.seenEpoch, c.epoch)
    if (c.takeoverOf !== '') (t.notes ??= []).push(record)
    if (t.winners?.has(c.epoch) === true && t.released?.has(releaseKey(h.author, c.epoch)) !== true) {
      const current = t.winners.get(c.epoch)
      if (current === undefined || compareOrder(record, current) < 0) t.winners.set(c.epoch, record)
    }
    return true
  }

  addRelease(h: BoardEntryHeader, r: Release): boolean {
    if (!(r.epoch >= 1)) return false
    const t = this.entries(r.task)
    const record: ReleaseRecord = {
      id: h.id,
      author: h.author,
      seq: h.seq,
      lamport: h.lamport,
      time: h.time,
      task: r.task,
      epoch: r.epoch,
      note: r.note,
      branch: r.branch,
      to: r.to
    }
    ;(t.released ??= new Set()).add(releaseKey(h.author, r.epoch))
    t.seenEpoch = Math.max(t.seenEpoch, r.epoch)
    if (r.note !== '' || r.branch !== '' || r.to !== '') (t.notes ??= []).push(record)
    if (t.winners?.get(r.epoch)?.author === h.author) t.winners.delete(r.epoch)
    return true
  }

  addDone(h: BoardEntryHeader, d: Done): boolean {
    if (!(d.epoch >= 1)) return false
    const t = this.entries(d.task)
    ;(t.dones ??= []).push({
      id: h.id,
      author: h.author,
      seq: h.seq,
      lamport: h.lamport,
      time: h.time,
      task: d.task,
      epoch: d.epoch,
      commit: d.commit,
      paths: d.paths
    })
    t.seenEpoch = Math.max(t.seenEpoch, d.epoch)
    return true
  }

  state(task: string): TaskClaims {
    const t = this.tasks.get(task)
    if (t === undefined) return NOBODY
    t.derived ??= derive(t, this.landed)
    return t.derived
  }

  /** The smallest unreleased claim at `epoch`. */
  winnerAt(task: string, epoch: number): ClaimRecord | undefined {
    const t = this.tasks.get(task)
    return t === undefined ? undefined : winnerAt(t, epoch)
  }

  hasClaim(task: string, author: string, epoch: number): boolean {
    return this.tasks.get(task)?.claimed.has(releaseKey(author, epoch)) ?? false
  }

  isReleased(task: string, author: string, epoch: number): boolean {
    return this.tasks.get(task)?.released?.has(releaseKey(author, epoch)) ?? false
  }

  /** Task ids that have any claim, release or done. */
  taskIds(): IterableIterator<string> {
    return this.tasks.keys()
  }

  private entries(task: string): TaskEntries {
    let t = this.tasks.get(task)
    if (t === undefined) {
      t = { claimsByEpoch: new Map(), highestEpoch: 0, seenEpoch: 0, claimed: new Set() }
      this.tasks.set(task, t)
    }
    t.derived = undefined
    return t
  }
}

/** Identifies "author's claim(s) at epoch": what a release names. */
function releaseKey(author: string, epoch: number): string {
  return `${epoch}\u0000${author}`
}

function winnerAt(t: TaskEntries, epoch: number): ClaimRecord | undefined {
  t.winners ??= new Map()
  if (t.winners.has(epoch)) return t.winners.get(epoch)
  let best: ClaimRecord | undefined
  for (const c of t.claimsByEpoch.get(epoch) ?? []) {
    if (t.released?.has(releaseKey(c.author, c.epoch)) === true) continue
    if (best === undefined || compareOrder(c, best) < 0) best = c
  }
  t.winners.set(epoch, best)
  return best
}

function derive(t: TaskEntries, landed: LandedBy): TaskClaims {
  // the containers made on first use read as empty when absent, so a state taken in from a checkpoint must have the one always made
  if (!(t.claimsByEpoch instanceof Map) || !(t.claimed instanceof Set)) throw new TypeError("a task's claims are not a claim ledger's")
  const holder = t.highestEpoch > 0 ? winnerAt(t, t.highestEpoch) : undefined
  let done: DoneRecord | undefined
  for (const d of t.dones ?? []) {
    if (winnerAt(t, d.epoch)?.author !== d.author && !landed(d.task, d.epoch, d.author)) continue
    if (done === undefined || d.epoch > done.epoch || (d.epoch === done.epoch && compareOrder(d, done) < 0)) done = d
  }
  return { highestEpoch: t.highestEpoch, nextEpoch: t.seenEpoch + 1, holder, done, handoff: latestHandoff(t) }
}

// The notes to pass on: from a release by someone who had a claim at that
// epoch, or from a takeover claim that carried them forward. The latest wins,
// by epoch then (lamport, author).
function latestHandoff(t: TaskEntries): HandoffInfo | undefined {
  let best: { order: Ordered; info: HandoffInfo } | undefined
  for (const n of t.notes ?? []) {
    let info: HandoffInfo
    if ('note' in n) {
      if (!t.claimed.has(releaseKey(n.author, n.epoch))) continue
      info = { from: n.author, epoch: n.epoch, note: n.note, branch: n.branch, to: n.to, entryId: n.id }
    } else {
      // The notes describe the previous holder's work, one epoch below the takeover.
      info = { from: n.takeoverOf, epoch: n.epoch - 1, note: n.handoff, branch: n.branch, to: '', entryId: n.id }
    }
    if (info.note === '' && info.branch === '' && info.to === '') continue
    if (best === undefined || info.epoch > best.info.epoch || (info.epoch === best.info.epoch && compareOrder(n, best.order) > 0)) {
      best = { order: n, info }
    }
  }
  return best === undefined ? undefined : { ...best.info }
}
