// Which of an agent's assists landed without its done: a pure function of the
// board and the book of approaches, so a daemon can write the missing done at
// start (its log loaded) and whenever it folds an integration or a request,
// whatever came in before a crash or a stop.
//
// An agent's work on a task at an epoch is an assistant's when it announced an
// approach on the task and is not the epoch's winner (its holder). An
// assistant's landing (a merged integration of its own, or one answering its
// integration request: landed-work.ts) finishes the task: the first passing
// integration wins, and its done counts by the core rule (claim-ledger.ts:
// the done's author landed the task's work at the done's epoch). A holder's
// landing does not finish its task: its agent says when the task is done
// (`agency done`), so a holder's landings are never listed here.

import type { AssistBook } from './assist-book.js'
import type { Board } from './board.js'
import type { Landing } from './landed-work.js'

/** Whether `me`'s work on `task` at `epoch` is an assistant's: it announced an approach on it and is not the epoch's winner. */
export function assistsAt(board: Board, book: AssistBook, me: string, task: string, epoch: number): boolean {
  return book.countBy(me, task) > 0 && board.winnerAt(task, epoch) !== me
}

/**
 * The landings of `me`'s assists whose task is not done: each wants `me`'s
 * done at the landing's epoch, naming its commit and paths. By task, then
 * epoch; at most one per task (the lowest epoch: once it is written the task
 * is done). `book` is asked for only when a landing of `me` is on a task not
 * done (a daemon builds it from its findings index on first use).
 */
export function landedWithoutDone(board: Board, book: () => AssistBook, me: string): Landing[] {
  const out: Landing[] = []
  for (const l of board.landingsBy(me)) {
    if (out.at(-1)?.task === l.task) continue
    if (board.doneRecord(l.task) !== undefined || !assistsAt(board, book(), me, l.task, l.epoch)) continue
    out.push(l)
  }
  return out
}
