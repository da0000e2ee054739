// The board core: views folded from decoded log entries, plus the claim
// protocol a daemon runs around them (settle window, answers, leases, overlap).

export { Board, claimFromPlan, createBoard } from './board.js'
export type {
  AgentProgress,
  BoardFoldState,
  BoardInit,
  ClaimPlan,
  HeldEpoch,
  HolderInfo,
  IntegrationView,
  Takeover,
  TaskView,
  TestRunView
} from './board.js'
export type { HandoffInfo } from './claim-ledger.js'
export { overlaps, overlapsFor } from './claim-overlaps.js'
export type { ClaimOverlap } from './claim-overlaps.js'
export type { ExpertView } from './expertise.js'
export { globsIntersect, scopesOverlap } from './glob-overlap.js'
export { isValidGlob, validateGlob } from './glob-pattern.js'
export type { GoalView } from './goal-history.js'
export {
  RecentPeerClaims,
  matchSeekers,
  nextChoices,
  pendingTasks,
  preferenceOrder,
  readyChoice,
  rendezvousScore,
  rendezvousScorer
} from './claim-choice.js'
export type { PendingTask, ReadyChoice } from './claim-choice.js'
export { ClaimProtocol, createClaimProtocol } from './claim-protocol.js'
export type {
  AppendRequest,
  ClaimNotice,
  ClaimProtocolInit,
  ClaimTicket,
  ClaimVerdict,
  LostReason,
  MyClaim,
  ProtocolOutput
} from './claim-protocol.js'
export { DEFAULT_HEARTBEAT_MS, DEFAULT_LEASE_MS, LeaseTable, createLeaseTable } from './lease-table.js'
export type { LeaseTableInit } from './lease-table.js'
export { compareOrder } from './order.js'
export type { ReviewView, VerdictName, VerdictView } from './review-book.js'
export { SETTLE_DEFAULTS, SettleWindow, claimOutcome, createSettleWindow } from './settle.js'
export type { ClaimOutcome, SettleWindowInit } from './settle.js'
export type { TaskDefinition } from './task-catalog.js'
export { PLAN_TASK_ID, planDefinition } from './plan-task.js'
export { checkNewTasks, type NewTask } from './task-graph.js'
export { isValidTaskId, validateTaskId } from './task-id.js'
export { EVERYONE_LIVE, TASK_STATES } from './types.js'
export type { AnyBoardEntry, BoardBodies, BoardEntry, BoardEntryHeader, BoardKind, Liveness, TaskState } from './types.js'
export { APPROACH_FINDING_KIND, APPROACH_TAG, ASSIST_END_TAG, AssistBook, isAssistFinding, taskTag } from './assist-book.js'
export type { ApproachView } from './assist-book.js'
export {
  ASSIST_DEFAULTS,
  MAX_APPROACH_CHARS,
  SAME_APPROACH_OVERLAP,
  approachWords,
  assistCandidates,
  checkApproach,
  checkAssistTask,
  checkAssister,
  chooseAssist,
  dependentChains,
  sameApproach
} from './assist-choice.js'
export type { AssistCandidate, AssistInput, AssistPolicy } from './assist-choice.js'
export { assistBudgetNow, assistPlacesLeft, freeAgentCount } from './assist-spare.js'
export { assistsAt, landedWithoutDone } from './assist-landing.js'
export type { Landing } from './landed-work.js'
export {
  HANDOFF_DEFAULTS,
  RECORD_MIN_DONE,
  chooseHandoff,
  handoffDue,
  handoffLimitMs,
  mayReceive,
  slowAgent,
  slowByRecord,
  usualTaskMs
} from './handoff-choice.js'
export type { HandoffDecision, HandoffInput, HandoffPeer, HandoffPolicy } from './handoff-choice.js'
export { BOARD_STATE_VERSION, boardCheckpointFits, decodeBoardCheckpoint, encodeBoardCheckpoint } from './board-checkpoint.js'
export type { BoardCheckpoint, BoardLog } from './board-checkpoint.js'
export { agentsAtWork, carriedWithoutDone, onItsWay, onItsWayHere } from './carry-on.js'
export { DEFAULT_INTEGRATOR_WINDOW_MS, IntegratorSightings } from './integrator-serving.js'
export { reviewersFree } from './review-timing.js'
