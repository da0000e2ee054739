// The board's input: a decoded log entry. The log core verifies and decodes
// entries; the daemon adapts them to this shape before folding them in, so the
// board never touches bytes, signatures or storage.

import type {
  ApprovalRequest,
  Budget,
  Claim,
  Done,
  Goal,
  Integration,
  IntegrationRequest,
  OperatorEnvelope,
  Release,
  ReviewRequest,
  TaskSpec,
  TestRun,
  Verdict
} from '../../gen/agency/v1/log.js'

/** The fields every entry has, whatever its kind. */
export interface BoardEntryHeader {
  /** entry id (hex sha256 of the signed entry); the board deduplicates on it */
  id: string
  /** author's peer id */
  author: string
  /** author's sequence number, from 1 */
  seq: number
  lamport: number
  /** author's wall clock, ms since the epoch: informational, never used for decisions */
  time: number
}

/** The body message of each kind the board folds. */
export interface BoardBodies {
  goal: Goal
  task: TaskSpec
  claim: Claim
  release: Release
  done: Done
  review_request: ReviewRequest
  verdict: Verdict
  integration: Integration
  integration_request: IntegrationRequest
  test_run: TestRun
  operator: OperatorEnvelope
  approval_request: ApprovalRequest
  /** only who wrote it: the budget is core/spend's (core/operator refuses a member's own while an operator governs) */
  budget: Budget
}

export type BoardKind = keyof BoardBodies

/** A decoded entry of one of the kinds the board folds. */
export type BoardEntry = {
  [K in BoardKind]: BoardEntryHeader & { kind: K; body: BoardBodies[K] }
}[BoardKind]

/** Any decoded entry; kinds the board does not know are ignored. */
export type AnyBoardEntry = BoardEntryHeader & { kind: string; body: unknown }

/**
 * Who is alive, as seen by this node. Liveness is local (it comes from
 * heartbeats received on this node's monotonic clock), so it is an input to
 * the board's queries, never part of the fold.
 */
export interface Liveness {
  isLive: (peer: string, now: number) => boolean
}

/** Everyone is live: for tests and for nodes that have no presence yet. */
export const EVERYONE_LIVE: Liveness = { isLive: () => true }

export type TaskState = 'open' | 'claimed' | 'expired' | 'done'

export const TASK_STATES: readonly TaskState[] = ['open', 'claimed', 'expired', 'done']
