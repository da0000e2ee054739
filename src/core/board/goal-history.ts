// The swarm's goal: every goal entry is a change; the current goal is the last
// one in (lamport, author) order, so concurrent changes settle the same way
// on every peer.

import type { Goal } from '../../gen/agency/v1/log.js'
import { insertOrdered, type Ordered } from './order.js'
import type { BoardEntryHeader } from './types.js'

export interface GoalView {
  text: string
  files: string[]
  testCommand: string
  setBy: string
  /** setter's wall clock, informational */
  time: number
  lamport: number
  entryId: string
}

interface GoalRecord extends Ordered {
  view: GoalView
}

export class GoalHistory {
  private readonly records: GoalRecord[] = []

  add(header: BoardEntryHeader, goal: Goal): void {
    insertOrdered(this.records, {
      id: header.id,
      author: header.author,
      seq: header.seq,
      lamport: header.lamport,
      view: {
        text: goal.text,
        files: [...goal.files],
        testCommand: goal.testCommand,
        setBy: header.author,
        time: header.time,
        lamport: header.lamport,
        entryId: header.id
      }
    })
  }

  current(): GoalView | undefined {
    const last = this.records.at(-1)
    return last === undefined ? undefined : copyGoal(last.view)
  }

  /** Oldest first. */
  history(): GoalView[] {
    return this.records.map(r => copyGoal(r.view))
  }
}

function copyGoal(g: GoalView): GoalView {
  return { ...g, files: [...g.files] }
}
