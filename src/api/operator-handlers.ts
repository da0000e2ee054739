// gRPC handlers for the operator (docs/operator.md): carry an action the
// operator signed, the audit of every carried action, and the approval
// requests. The daemon signs nothing here: the operator's key is not in it.
import type { AgencyServer, ApprovalInfo, OperatorActionInfo } from '../gen/agency/v1/api.js'
import type { BoardService } from '../daemon/board-service.js'
import type { OperatorService } from '../daemon/operator-service.js'
import type { PeerContact } from '../daemon/peer-contact.js'
import type { ApprovalView, OperatorActionView } from '../core/operator/index.js'
import { unary } from './grpc-errors.js'

/** What the operator's handlers use of the daemon. */
export interface OperatorApiParts {
  operator: Pick<OperatorService, 'submit'>
  boardService: Pick<BoardService, 'board'>
  contact: Pick<PeerContact, 'peers'>
}

function actionInfo (a: OperatorActionView): OperatorActionInfo {
  return { entryId: a.entryId, carrier: a.carrier, verdict: a.verdict, operator: a.operator, id: a.id, kind: a.kind, time: a.time, summary: a.summary }
}

function approvalInfo (a: ApprovalView, names: Map<string, string>): ApprovalInfo {
  return { id: a.id, agent: a.agent, agentName: names.get(a.agent) ?? '', title: a.title, grant: a.grant, detail: a.detail, time: a.time, expiresAt: a.expiresAt, state: a.state, answeredBy: a.answeredBy ?? '', always: a.always, task: a.task }
}

export function operatorHandlers (d: OperatorApiParts): Pick<AgencyServer, 'submitOperatorAction' | 'listOperatorActions' | 'listApprovals'> {
  return {
    submitOperatorAction: unary(async req => await d.operator.submit(req.envelope)),
    listOperatorActions: unary(async () => {
      const board = d.boardService.board
      const who = board.operators()
      return { actions: board.operatorActions().map(actionInfo), operators: who.keys, source: who.source, refusals: board.operatorRefusals() }
    }),
    listApprovals: unary(async req => {
      const names = new Map(d.contact.peers(true).map(p => [p.peerId, p.name]))
      const all = d.boardService.board.approvalRequests()
      return { approvals: (req.all ? all : all.filter(a => a.state === 'pending')).map(a => approvalInfo(a, names)) }
    })
  }
}
