// What the operators' accepted actions mean for the board: the pause, the
// tasks they added, changed or cancelled, their messages, and the audit of
// every carried action. Each is a function of an OperatorAuthority.
import type { OperatorAction } from '../../gen/agency/v1/log.js'
import type { TaskDefinition } from '../board/task-catalog.js'
import { capScope } from '../board/scope-limits.js'
import type { ActionVerdict, OperatorAuthority } from './operator-authority.js'
import type { CarriedAction } from './operator-book.js'

export interface PauseView {
  paused: boolean
  /** the operator of the latest pause or resume */
  by?: string
  /** its time, the operator's clock */
  time?: number
  reason: string
  /** paused: how long holders' leases are kept */
  leaseKeepMs: number
}

export type Cancellation = NonNullable<TaskDefinition['cancelled']>

export interface OperatorMessageView {
  /** the action id */
  id: string
  operator: string
  time: number
  text: string
  /** the agent's peer id; empty: every agent */
  to: string
  entryId: string
}

export interface OperatorActionView {
  entryId: string
  /** the member whose entry carried it */
  carrier: string
  lamport: number
  verdict: ActionVerdict
  /** empty when the action does not decode */
  operator: string
  id: string
  kind: string
  time: number
  /** one line: what the action does */
  summary: string
}

/** The latest pause or resume decides. */
export function pauseView(a: OperatorAuthority): PauseView {
  const last = a.ofKind('pause', 'resume').at(-1)?.action
  if (last === undefined) return { paused: false, reason: '', leaseKeepMs: 0 }
  return {
    paused: last.kind === 'pause',
    by: last.operator,
    time: last.time,
    reason: last.kind === 'pause' ? last.text : '',
    leaseKeepMs: last.kind === 'pause' ? last.leaseKeepMs : 0
  }
}

/** The budget the operators set: their latest budget action, in operator order. */
export interface OperatorBudgetView {
  budget: NonNullable<OperatorAction['budget']>
  setBy: string
  time: number
  entryId: string
}

export function budgetView(a: OperatorAuthority): OperatorBudgetView | undefined {
  const last = a.ofKind('budget').at(-1)
  if (last === undefined) return undefined
  return {
    budget: { ...(last.action.budget as NonNullable<OperatorAction['budget']>) },
    setBy: last.action.operator,
    time: last.action.time,
    entryId: last.entryId
  }
}

/** A member the operators removed: its entries after `afterSeq` of its feed count for nothing. */
export interface RemovedMember {
  peer: string
  afterSeq: number
  /** the operator of the first removal, and its time */
  by: string
  time: number
}

export interface MembershipView {
  /** the operators' allow-list, sorted (removed members left out); empty: no allow-list of theirs */
  allowed: string[]
  /** sorted by peer id */
  removed: RemovedMember[]
}

/**
 * Who may be a member, by the operators' actions: the peers their
 * member_allow actions named, and those their member_remove actions removed.
 * A removal is for good: a removed member stays removed whatever the order
 * of the actions, and when two removals of one member name different seqs
 * the lower counts, so the view does not depend on the actions' order.
 */
export function membershipView(a: OperatorAuthority): MembershipView {
  const removed = new Map<string, RemovedMember>()
  const allowed = new Set<string>()
  for (const { action } of a.ofKind('member_allow', 'member_remove')) {
    if (action.kind === 'member_allow') {
      for (const p of action.peers) allowed.add(p)
      continue
    }
    const peer = action.peers[0]
    const had = removed.get(peer)
    if (had === undefined) removed.set(peer, { peer, afterSeq: action.afterSeq, by: action.operator, time: action.time })
    else if (action.afterSeq < had.afterSeq) had.afterSeq = action.afterSeq
  }
  return {
    allowed: [...allowed].filter(p => !removed.has(p)).sort(),
    removed: [...removed.values()].sort((x, y) => (x.peer < y.peer ? -1 : x.peer > y.peer ? 1 : 0))
  }
}

/** Per task id, the operators' task actions, in operator order. */
export function taskActions(a: OperatorAuthority): Map<string, OperatorAction[]> {
  const out = new Map<string, OperatorAction[]>()
  for (const { action } of a.ofKind('task', 'task_cancel', 'task_priority')) {
    const id = (action.task as NonNullable<OperatorAction['task']>).id
    const list = out.get(id) ?? []
    list.push(action)
    out.set(id, list)
  }
  return out
}

/**
 * A task's definition with the operators' actions on top: a `task` action
 * defines the task when no member did, else its non-empty fields replace
 * (and it takes a cancellation back); `task_priority` sets the priority,
 * 0 included; `task_cancel` cancels it. Undefined when nobody defined it.
 */
export function withOperatorActions(base: TaskDefinition | undefined, actions: readonly OperatorAction[]): TaskDefinition | undefined {
  let def = base === undefined ? undefined : { ...base, deps: [...base.deps], scope: [...base.scope] }
  for (const a of actions) {
    const t = a.task as NonNullable<OperatorAction['task']>
    if (a.kind === 'task') {
      if (def === undefined) {
        def = {
          id: t.id,
          title: t.title,
          description: t.description,
          deps: [...t.deps],
          scope: capScope(t.scope),
          priority: t.priority,
          addedBy: a.operator,
          addedAt: a.time
        }
        continue
      }
      if (t.title !== '') def.title = t.title
      if (t.description !== '') def.description = t.description
      if (t.deps.length > 0) def.deps = [...t.deps]
      if (t.scope.length > 0) def.scope = capScope(t.scope)
      if (t.priority !== 0) def.priority = t.priority
      delete def.cancelled
    } else if (def !== undefined && a.kind === 'task_priority') {
      def.priority = t.priority
    } else if (def !== undefined && a.kind === 'task_cancel') {
      def.cancelled = { by: a.operator, reason: a.text, time: a.time }
    }
  }
  return def
}

/** The operators' messages to `agent` (and to everyone), in operator order; all of them without an agent. */
export function operatorMessages(a: OperatorAuthority, agent?: string): OperatorMessageView[] {
  return a
    .ofKind('message')
    .filter(m => agent === undefined || m.action.to === '' || m.action.to === agent)
    .map(m => ({
      id: m.action.id,
      operator: m.action.operator,
      time: m.action.time,
      text: m.action.text,
      to: m.action.to,
      entryId: m.entryId
    }))
}

/** Every carried action with its verdict: accepted ones in operator order, then the rest in the carriers' order. */
export function operatorAudit(a: OperatorAuthority, carried: readonly CarriedAction[]): OperatorActionView[] {
  const view = (c: CarriedAction): OperatorActionView => {
    const x = c.action
    return {
      entryId: c.id,
      carrier: c.author,
      lamport: c.lamport,
      verdict: a.verdict(c.id) ?? 'malformed',
      operator: x?.operator ?? '',
      id: x?.id ?? '',
      kind: x?.kind ?? '',
      time: x?.time ?? 0,
      summary: x === undefined ? '(does not decode)' : summarise(x)
    }
  }
  const byEntry = new Map(carried.map(c => [c.id, c]))
  const accepted = a.accepted.map(x => view(byEntry.get(x.entryId) as CarriedAction))
  return [...accepted, ...carried.filter(c => a.verdict(c.id) !== 'accepted').map(view)]
}

/** One line saying what an action does. */
export function summarise(x: OperatorAction): string {
  const clip = (s: string): string => (s.length > 120 ? `${s.slice(0, 119)}…` : s)
  switch (x.kind) {
    case 'goal':
      return clip(
        `goal: ${x.goal?.text ?? ''}${x.goal?.testCommand !== undefined && x.goal.testCommand !== '' ? ` (tests: ${x.goal.testCommand})` : ''}`
      )
    case 'pause':
      return clip(
        `pause${x.text !== '' ? `: ${x.text}` : ''}${x.leaseKeepMs > 0 ? ` (leases kept ${Math.round(x.leaseKeepMs / 1000)} s)` : ''}`
      )
    case 'resume':
      return 'resume'
    case 'task':
      return clip(`task ${x.task?.id ?? ''}${x.task?.title !== undefined && x.task.title !== '' ? `: ${x.task.title}` : ''}`)
    case 'task_cancel':
      return clip(`cancel task ${x.task?.id ?? ''}${x.text !== '' ? `: ${x.text}` : ''}`)
    case 'task_priority':
      return `task ${x.task?.id ?? ''} priority ${x.task?.priority ?? 0}`
    case 'message':
      return clip(`message to ${x.to === '' ? 'everyone' : x.to}: ${x.text}`)
    case 'approval':
      return `${x.allow ? 'approve' : 'deny'} ${x.request}${x.allow && x.always ? ' (always)' : ''}`
    case 'budget':
      return `budget: ${budgetSummary(x.budget)}`
    case 'member_allow':
      return clip(`allow member${x.peers.length === 1 ? '' : 's'} ${x.peers.join(', ')}`)
    case 'member_remove':
      return clip(`remove member ${x.peers[0] ?? ''} (its entries after seq ${x.afterSeq} count for nothing)`)
    default:
      return clip(x.kind)
  }
}

function budgetSummary(b: OperatorAction['budget']): string {
  if (b === undefined) return 'none'
  const caps = [
    b.microUsd > 0 ? `$${b.microUsd / 1e6}` : '',
    b.tokens > 0 ? `${b.tokens} tokens` : '',
    b.agentSeconds > 0 ? `${b.agentSeconds / 3600} agent-h` : '',
    b.perAgentMicroUsd > 0 ? `$${b.perAgentMicroUsd / 1e6} per agent` : ''
  ].filter(c => c !== '')
  return caps.length > 0 ? caps.join(', ') : 'no caps'
}
