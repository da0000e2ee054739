// Operator authority: who may steer the swarm, their signed actions, and what
// the board makes of them (docs/operator.md).
export {
  OPERATOR_ACTION_KINDS,
  OPERATOR_ONLY_ENTRY_KINDS,
  MAX_ACTION_ID_LENGTH,
  MAX_ACTION_PEERS,
  actionFault,
  isOperatorActionKind
} from './action-kinds.js'
export type { OperatorActionKind } from './action-kinds.js'
export { DOMAIN_OPERATOR, openEnvelope, signOperatorAction } from './operator-signature.js'
export type { EnvelopeFault, OpenedEnvelope } from './operator-signature.js'
export { isOperatorKey, parseOperatorKeys } from './operator-keys.js'
export { ApprovalBook } from './approval-book.js'
export type { ApprovalState, ApprovalView } from './approval-book.js'
export { OperatorBook } from './operator-book.js'
export type { CarriedAction, PlainOperatorEntry } from './operator-book.js'
export { OperatorAuthority, REFUSED_VERDICTS } from './operator-authority.js'
export type { AcceptedAction, ActionVerdict, JudgeInput, OperatorSource, PlainGoal } from './operator-authority.js'
export {
  budgetView,
  membershipView,
  operatorAudit,
  operatorMessages,
  pauseView,
  summarise,
  taskActions,
  withOperatorActions
} from './operator-views.js'
export type {
  Cancellation,
  MembershipView,
  OperatorActionView,
  OperatorBudgetView,
  RemovedMember,
  OperatorMessageView,
  PauseView
} from './operator-views.js'
export { NoOperatorError, OperatorOnlyError } from './operator-errors.js'
