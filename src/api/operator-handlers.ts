// gRPC handlers for the operator (docs/operator.md): carry an action the
// operator signed, the audit of every carried action, the approval
// requests, and the members. The daemon signs nothing here: the operator's key is not in it.
import type { AgencyServer, ApprovalInfo, ListMembersReply, MemberInfo, OperatorActionInfo } from '../gen/agency/v1/api.js'
import type { LogService } from '../daemon/log-service.js'
import type { BoardService } from '../daemon/board-service.js'
import type { OperatorService } from '../daemon/operator-service.js'
import type { PeerContact } from '../daemon/peer-contact.js'
import type { ApprovalView, OperatorActionView } from '../core/operator/index.js'
import { unary } from './grpc-errors.js'

/** What the operator's handlers use of the daemon. */
export interface OperatorApiParts {
  operator: Pick<OperatorService, 'submit'>
  boardService: Pick<BoardService, 'board'>
  contact: Pick<PeerContact, 'peers' | 'selfView'>
  logService: Pick<LogService, 'state'>
}

function actionInfo(a: OperatorActionView): OperatorActionInfo {
  return {
    entryId: a.entryId,
    carrier: a.carrier,
    verdict: a.verdict,
    operator: a.operator,
    id: a.id,
    kind: a.kind,
    time: a.time,
    summary: a.summary
  }
}

function approvalInfo(a: ApprovalView, names: Map<string, string>): ApprovalInfo {
  return {
    id: a.id,
    agent: a.agent,
    agentName: names.get(a.agent) ?? '',
    title: a.title,
    grant: a.grant,
    detail: a.detail,
    time: a.time,
    expiresAt: a.expiresAt,
    state: a.state,
    answeredBy: a.answeredBy ?? '',
    always: a.always,
    task: a.task
  }
}

/** The operator's membership, and every member this daemon knows: itself, the log's authors, the peers it heard from. */
export function membersReply(d: OperatorApiParts): ListMembersReply {
  const board = d.boardService.board
  const m = board.membership()
  const allowed = new Set(m.allowed)
  const removed = new Set(m.removed.map(r => r.peer))
  const heads = d.logService.state.vector()
  const me = d.contact.selfView()
  const byId = new Map<string, MemberInfo>()
  const info = (peerId: string, name: string, live: boolean): MemberInfo => ({
    peerId,
    name,
    live,
    headSeq: heads.get(peerId) ?? 0,
    allowed: allowed.has(peerId),
    removed: removed.has(peerId),
    self: peerId === me.peerId
  })
  for (const author of heads.keys()) byId.set(author, info(author, '', false))
  for (const p of d.contact.peers(true)) byId.set(p.peerId, info(p.peerId, p.name, p.live))
  byId.set(me.peerId, info(me.peerId, me.name, true))
  return {
    operators: board.operators().keys,
    allowed: m.allowed,
    removed: m.removed.map(r => ({ peerId: r.peer, afterSeq: r.afterSeq, by: r.by, time: r.time })),
    members: [...byId.values()].sort((a, b) => (a.peerId < b.peerId ? -1 : a.peerId > b.peerId ? 1 : 0))
  }
}

export function operatorHandlers(
  d: OperatorApiParts
): Pick<AgencyServer, 'submitOperatorAction' | 'listOperatorActions' | 'listApprovals' | 'listMembers'> {
  return {
    submitOperatorAction: unary(async req => await d.operator.submit(req.envelope)),
    listOperatorActions: unary(async () => {
      const board = d.boardService.board
      const who = board.operators()
      return {
        actions: board.operatorActions().map(actionInfo),
        operators: who.keys,
        source: who.source,
        refusals: board.operatorRefusals()
      }
    }),
    listApprovals: unary(async req => {
      const names = new Map(d.contact.peers(true).map(p => [p.peerId, p.name]))
      const all = d.boardService.board.approvalRequests()
      return { approvals: (req.all ? all : all.filter(a => a.state === 'pending')).map(a => approvalInfo(a, names)) }
    }),
    listMembers: unary(async () => membersReply(d))
  }
}
