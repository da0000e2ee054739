// Who assists which task, with which approach: a fold of the approach
// findings in the log, sans-IO. An assist is not a claim and writes no claim:
// it is announced as a finding (kind "decision", tags "approach" and
// "task:<task>"), so that daemons that predate assists keep and forward it
// like any finding; the assistant ends it with another finding (tags
// "approach", "task:<task>", "assist-end", refs: the announcement) that says
// what it learned. Like the board, every answer is a function of the set of
// findings folded in, whatever order they came in.
//
// - an agent assists at most one task: its latest announcement, in
//   (lamport, author) order, unless that one is ended (by an end finding of
//   the same author naming it) or its task is done;
// - a task's approaches are every announcement on it, in (lamport, author)
//   order: in progress (its assist is current) or tried (ended, or replaced).

import type { Finding } from '../../gen/agency/v1/log.js'
import { insertOrdered, type Ordered } from './order.js'
import type { BoardEntryHeader } from './types.js'

export const APPROACH_TAG = 'approach'
export const ASSIST_END_TAG = 'assist-end'
/** The finding kind an announcement is recorded as: a decision about how to do a task. */
export const APPROACH_FINDING_KIND = 'decision'

export function taskTag(task: string): string {
  return `task:${task}`
}

export interface ApproachRecord extends Ordered {
  time: number
  task: string
  text: string
}

export interface ApproachView {
  entryId: string
  author: string
  task: string
  text: string
  time: number
  /** the assistant ended it (`agency assist --stop`), or moved on to another announcement */
  ended: boolean
  /** what the assistant recorded on ending it, if it did */
  learned: string
}

/** The task a finding is about: its single "task:<id>" tag, or undefined. */
function taskOf(f: Finding): string | undefined {
  const tasks = f.tags.filter(t => t.startsWith('task:')).map(t => t.slice(5))
  return tasks.length === 1 && tasks[0] !== '' ? tasks[0] : undefined
}

/** Whether a finding is an approach announcement or an assist's end (else the book ignores it). */
export function isAssistFinding(f: Finding): boolean {
  return f.tags.includes(APPROACH_TAG) && taskOf(f) !== undefined
}

export class AssistBook {
  private readonly ids = new Set<string>()
  /** announcements in (lamport, author) order */
  private readonly announced: ApproachRecord[] = []
  /** announcement id -> the end finding's text, for ends by the announcement's own author */
  private readonly ends = new Map<string, { author: string; text: string }[]>()
  private changes = 0

  /** Folds one finding in; false when it is no approach finding or already folded. */
  add(h: BoardEntryHeader, f: Finding): boolean {
    if (this.ids.has(h.id) || !isAssistFinding(f)) return false
    const task = taskOf(f) as string
    this.ids.add(h.id)
    this.changes++
    if (f.tags.includes(ASSIST_END_TAG)) {
      for (const ref of f.refs) {
        const list = this.ends.get(ref) ?? []
        list.push({ author: h.author, text: f.text })
        this.ends.set(ref, list)
      }
      return true
    }
    insertOrdered(this.announced, { id: h.id, author: h.author, seq: h.seq, lamport: h.lamport, time: h.time, task, text: f.text })
    return true
  }

  /** Grows whenever the book changes. */
  get version(): number {
    return this.changes
  }

  /** The end an announcement's author recorded, if any. */
  private endOf(a: ApproachRecord): { author: string; text: string } | undefined {
    return this.ends.get(a.id)?.find(e => e.author === a.author)
  }

  /** The author's latest announcement on any task. */
  private latestOf(agent: string): ApproachRecord | undefined {
    for (let i = this.announced.length - 1; i >= 0; i--) if (this.announced[i].author === agent) return this.announced[i]
    return undefined
  }

  private isCurrent(a: ApproachRecord): boolean {
    return this.endOf(a) === undefined && this.latestOf(a.author)?.id === a.id
  }

  private view(a: ApproachRecord): ApproachView {
    const end = this.endOf(a)
    return {
      entryId: a.id,
      author: a.author,
      task: a.task,
      text: a.text,
      time: a.time,
      ended: !this.isCurrent(a),
      learned: end?.text ?? ''
    }
  }

  /** The assist `agent` is on: its latest announcement, not ended, on a task `isDone` does not call done. */
  current(agent: string, isDone: (task: string) => boolean): ApproachView | undefined {
    const a = this.latestOf(agent)
    if (a === undefined || this.endOf(a) !== undefined || isDone(a.task)) return undefined
    return this.view(a)
  }

  /** Every agent on an assist now (as `current` has it), in one pass over the announcements. */
  assistingAgents(isDone: (task: string) => boolean): Set<string> {
    const seen = new Set<string>()
    const out = new Set<string>()
    for (let i = this.announced.length - 1; i >= 0; i--) {
      const a = this.announced[i]
      if (seen.has(a.author)) continue
      seen.add(a.author)
      if (this.endOf(a) === undefined && !isDone(a.task)) out.add(a.author)
    }
    return out
  }

  /** Every approach announced on `task`, oldest first. */
  approaches(task: string): ApproachView[] {
    return this.announced.filter(a => a.task === task).map(a => this.view(a))
  }

  /** The assists in progress on `task` (not ended), oldest first, each agent once. */
  active(task: string): ApproachView[] {
    return this.announced.filter(a => a.task === task && this.isCurrent(a)).map(a => this.view(a))
  }

  /** How many announcements `agent` has made on `task` (its assist branches are numbered by it). */
  countBy(agent: string, task: string): number {
    return this.announced.filter(a => a.task === task && a.author === agent).length
  }

  /** The entry ids folded in (for tests of order independence). */
  get size(): number {
    return this.ids.size
  }
}
