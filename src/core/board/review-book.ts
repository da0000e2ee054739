// Review requests and verdicts per target (a commit, branch or task). Each
// reviewer's latest verdict in (lamport, author) order is the one that counts,
// so a retract replaces that reviewer's earlier approval or rejection.
// Anyone may give a verdict, named as a reviewer or not. The first request in
// (lamport, author) order gives `requestedBy` and `note`; the reviewers of all
// requests are merged.

import { VerdictKind, type ReviewRequest, type Verdict } from '../../gen/agency/v1/log.js'
import { compareOrder, compareText, insertOrdered, type Ordered } from './order.js'
import type { BoardEntryHeader } from './types.js'

export type VerdictName = 'approve' | 'reject' | 'retract'

export interface VerdictView {
  reviewer: string
  verdict: VerdictName
  evidence: string
  /** reviewer's wall clock, informational */
  time: number
  entryId: string
}

export interface ReviewView {
  target: string
  /** empty when only verdicts are known */
  requestedBy: string
  reviewers: string[]
  note: string
  approvals: number
  rejections: number
  /** each reviewer's latest verdict, sorted by reviewer */
  verdicts: VerdictView[]
}

interface RequestRecord extends Ordered {
  request: ReviewRequest
}
interface VerdictRecord extends Ordered {
  view: VerdictView
}

interface Target {
  requests: RequestRecord[]
  latest: Map<string, VerdictRecord>
}

const VERDICT_NAMES = new Map<VerdictKind, VerdictName>([
  [VerdictKind.VERDICT_APPROVE, 'approve'],
  [VerdictKind.VERDICT_REJECT, 'reject'],
  [VerdictKind.VERDICT_RETRACT, 'retract']
])

export function verdictName(kind: VerdictKind): VerdictName | undefined {
  return VERDICT_NAMES.get(kind)
}

export class ReviewBook {
  private readonly targets = new Map<string, Target>()

  addRequest(h: BoardEntryHeader, request: ReviewRequest): boolean {
    if (request.target === '') return false
    insertOrdered(this.target(request.target).requests, { id: h.id, author: h.author, seq: h.seq, lamport: h.lamport, request })
    return true
  }

  /** Unspecified or unknown verdict kinds are ignored. */
  addVerdict(h: BoardEntryHeader, v: Verdict): boolean {
    const name = verdictName(v.verdict)
    if (name === undefined || v.target === '') return false
    const latest = this.target(v.target).latest
    const record: VerdictRecord = {
      id: h.id,
      author: h.author,
      seq: h.seq,
      lamport: h.lamport,
      view: { reviewer: h.author, verdict: name, evidence: v.evidence, time: h.time, entryId: h.id }
    }
    const known = latest.get(h.author)
    if (known === undefined || compareOrder(record, known) > 0) latest.set(h.author, record)
    return true
  }

  get(target: string): ReviewView | undefined {
    const t = this.targets.get(target)
    return t === undefined ? undefined : view(target, t)
  }

  /** All targets, sorted. */
  all(): ReviewView[] {
    return [...this.targets.keys()].sort(compareText).map(k => view(k, this.targets.get(k) as Target))
  }

  approvals(target: string): number {
    return this.get(target)?.approvals ?? 0
  }

  private target(target: string): Target {
    let t = this.targets.get(target)
    if (t === undefined) {
      t = { requests: [], latest: new Map() }
      this.targets.set(target, t)
    }
    return t
  }
}

function view(target: string, t: Target): ReviewView {
  const first = t.requests[0]
  const reviewers = new Set<string>()
  for (const r of t.requests) for (const name of r.request.reviewers) if (name !== '') reviewers.add(name)
  const verdicts = [...t.latest.values()].map(r => ({ ...r.view })).sort((a, b) => compareText(a.reviewer, b.reviewer))
  return {
    target,
    requestedBy: first?.author ?? '',
    reviewers: [...reviewers].sort(compareText),
    note: first?.request.note ?? '',
    approvals: verdicts.filter(v => v.verdict === 'approve').length,
    rejections: verdicts.filter(v => v.verdict === 'reject').length,
    verdicts
  }
}
