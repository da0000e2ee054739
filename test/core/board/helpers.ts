// Builders for board tests: entries from named authors with their own seq and
// a lamport that is 1 + the highest the author has "seen" (set explicitly
// when a test needs concurrency).

import {
  Claim,
  Done,
  Goal,
  Integration,
  IntegrationRequest,
  Release,
  ReviewRequest,
  TaskSpec,
  Verdict,
  VerdictKind
} from '../../../src/gen/agency/v1/log.js'
import type { Board } from '../../../src/core/board/board.js'
import { overlaps } from '../../../src/core/board/claim-overlaps.js'
import type { BoardBodies, BoardEntry, BoardKind } from '../../../src/core/board/types.js'

export class EntryWriter {
  private readonly seqs = new Map<string, number>()
  private lamport = 0

  /** An entry by `author`; lamport defaults to one more than anything written so far. */
  entry<K extends BoardKind>(author: string, kind: K, body: BoardBodies[K], lamport?: number): BoardEntry {
    const seq = (this.seqs.get(author) ?? 0) + 1
    this.seqs.set(author, seq)
    const l = lamport ?? this.lamport + 1
    this.lamport = Math.max(this.lamport, l)
    return { id: `${author}/${seq}`, author, seq, lamport: l, time: 1_700_000_000_000 + l, kind, body } as BoardEntry
  }

  goal(author: string, text: string, lamport?: number): BoardEntry {
    return this.entry(author, 'goal', Goal.fromPartial({ text, testCommand: 'npm test' }), lamport)
  }

  task(author: string, spec: Partial<TaskSpec> & { id: string }, lamport?: number): BoardEntry {
    return this.entry(author, 'task', TaskSpec.fromPartial({ title: spec.id, ...spec }), lamport)
  }

  claim(author: string, task: string, epoch: number, extra: Partial<Claim> = {}, lamport?: number): BoardEntry {
    return this.entry(author, 'claim', Claim.fromPartial({ task, epoch, ...extra }), lamport)
  }

  release(author: string, task: string, epoch: number, extra: Partial<Release> = {}, lamport?: number): BoardEntry {
    return this.entry(author, 'release', Release.fromPartial({ task, epoch, ...extra }), lamport)
  }

  done(author: string, task: string, epoch: number, extra: Partial<Done> = {}, lamport?: number): BoardEntry {
    return this.entry(author, 'done', Done.fromPartial({ task, epoch, commit: `c-${task}-${author}`, ...extra }), lamport)
  }

  request(author: string, target: string, reviewers: string[], lamport?: number): BoardEntry {
    return this.entry(author, 'review_request', ReviewRequest.fromPartial({ target, reviewers }), lamport)
  }

  verdict(author: string, target: string, verdict: VerdictKind, lamport?: number): BoardEntry {
    return this.entry(author, 'verdict', Verdict.fromPartial({ target, verdict, evidence: `${author} looked` }), lamport)
  }

  integration(author: string, task: string, paths: string[], result = 'merged', lamport?: number): BoardEntry {
    return this.entry(author, 'integration', Integration.fromPartial({ task, epoch: 1, commit: `m-${task}`, result, paths }), lamport)
  }

  /** An integration request: `author` asks an integrator to land its work on `task` at `epoch`. */
  integrationRequest(author: string, task: string, epoch: number, lamport?: number): BoardEntry {
    return this.entry(
      author,
      'integration_request',
      IntegrationRequest.fromPartial({ task, epoch, ref: `refs/agency/${author}/${task}`, commit: 'c'.repeat(40) }),
      lamport
    )
  }

  /** An integrator's integration answering the request entry `request`, at (`task`, `epoch`). */
  answer(integrator: string, request: string, task: string, epoch: number, result = 'merged', lamport?: number): BoardEntry {
    return this.entry(
      integrator,
      'integration',
      Integration.fromPartial({ task, epoch, commit: result === 'merged' ? `m-${task}-${epoch}` : '', result, request }),
      lamport
    )
  }
}

/** Everything a board answers, as plain data, for equality checks. */
export function snapshot(board: Board, now: number, expertPaths: string[] = ['src', 'src/core/**', 'docs/readme.md']): unknown {
  return {
    size: board.size,
    goal: board.goal(),
    goalHistory: board.goalHistory(),
    tasks: board.tasks(now),
    ready: board.ready(now).map(t => t.id),
    holders: [...board.holders().entries()],
    progress: board.progress(now),
    reviews: board.reviews(),
    experts: expertPaths.map(p => board.experts(p)),
    overlaps: overlaps(board, now),
    testRuns: board.testRuns()
  }
}
