// The operator's part of `agency status`: whether the swarm is paused, who
// steers it, and how many permission requests wait for an answer.
import type { StatusReply } from '../gen/agency/v1/api.js'
import type { Board } from '../core/board/index.js'

export type OperatorStatus = Pick<StatusReply, 'paused' | 'pauseReason' | 'operators' | 'operatorSource' | 'approvalsPending'>

export function operatorStatus(board: Board): OperatorStatus {
  const pause = board.paused()
  const who = board.operators()
  return {
    paused: pause.paused,
    pauseReason: pause.reason,
    operators: who.keys,
    operatorSource: who.source,
    approvalsPending: board.approvalRequests().filter(a => a.state === 'pending').length
  }
}
