// gRPC handlers for the board: goal, tasks, claims, reviews and expertise.
import type {
  AddTaskRequest,
  AgencyServer,
  GoalView as GoalMsg,
  PendingTask as PendingMsg,
  ReviewView as ReviewMsg,
  TaskView as TaskMsg
} from '../gen/agency/v1/api.js'
import type { NewTask, PendingTask } from '../core/board/index.js'
import { DEFAULT_WAIT_MS, MAX_WAIT_MS } from '../daemon/work-wait.js'
import { ClaimOutcome } from '../gen/agency/v1/api.js'
import type { BoardService } from '../daemon/board-service.js'
import type { AgentWork } from '../daemon/agent-work.js'
import type { OperatorService } from '../daemon/operator-service.js'
import type { PeerContact } from '../daemon/peer-contact.js'
import type { GoalView, ReviewView, TaskView, TaskState } from '../core/board/index.js'
import { TASK_STATES } from '../core/board/index.js'
import { InvalidArgumentError, NotFoundError } from '../core/errors.js'
import { unary } from './grpc-errors.js'
import { checkStrings } from './validate.js'
import { CLAIM_NEEDS_TASK } from '../core/agent-words.js'

export function taskMessage(t: TaskView): TaskMsg {
  return {
    id: t.id,
    title: t.title,
    description: t.description,
    deps: t.deps,
    scope: t.scope,
    priority: t.priority,
    state: t.state,
    holder: t.holder ?? '',
    epoch: t.epoch,
    claimScope: t.claimScope,
    commit: t.commit ?? '',
    handoff: t.handoff?.note ?? '',
    branch: t.handoff?.branch ?? '',
    addedBy: t.addedBy,
    holderLive: t.holderLive
  }
}

/** A task a peer's claim is settling on, with the time left of its window at `now`. */
export function pendingMessage(p: PendingTask, now: number): PendingMsg {
  return { task: p.task, peer: p.peer, epoch: p.epoch, settlesInMs: Math.max(0, p.settlesAt - now) }
}

export function goalMessage(g: GoalView): GoalMsg {
  return { text: g.text, files: g.files, testCommand: g.testCommand, setBy: g.setBy, time: g.time, entryId: g.entryId }
}

function reviewMessage(r: ReviewView): ReviewMsg {
  return {
    target: r.target,
    requestedBy: r.requestedBy,
    reviewers: r.reviewers,
    note: r.note,
    approvals: r.approvals,
    rejections: r.rejections,
    verdicts: r.verdicts.map(v => ({ reviewer: v.reviewer, verdict: v.verdict, evidence: v.evidence, time: v.time }))
  }
}

/** What the board's handlers use of the daemon. */
export interface BoardApiParts {
  boardService: Pick<BoardService, 'board' | 'now' | 'readyChoice' | 'setGoal' | 'addTask' | 'requestReview' | 'verdict'>
  work: Pick<AgentWork, 'addTasks' | 'waitForWork' | 'claim' | 'claimNext' | 'release' | 'done' | 'assist'>
  contact: Pick<PeerContact, 'peers' | 'selfView'>
  operator: Pick<OperatorService, 'refuseUnsigned'>
}

function reviewOf(b: BoardApiParts['boardService'], target: string): ReviewMsg {
  const r = b.board.review(target)
  return r != null ? reviewMessage(r) : { target, requestedBy: '', reviewers: [], note: '', approvals: 0, rejections: 0, verdicts: [] }
}

function state(s: string): TaskState | undefined {
  if (s === '') return undefined
  if (!(TASK_STATES as readonly string[]).includes(s))
    throw new InvalidArgumentError(`unknown task state "${s}": use ${TASK_STATES.join(', ')}`)
  return s as TaskState
}

const OUTCOMES = {
  HELD: ClaimOutcome.CLAIM_HELD,
  LOST: ClaimOutcome.CLAIM_LOST,
  PENDING: ClaimOutcome.CLAIM_PENDING,
  NONE_READY: ClaimOutcome.CLAIM_NONE_READY
} as const

function newTask(req: AddTaskRequest): NewTask {
  checkStrings('dependency', req.deps, 64, 128)
  checkStrings('scope glob', req.scope, 64, 1024)
  return {
    id: req.id,
    title: req.title !== '' ? req.title : req.id,
    description: req.description,
    deps: req.deps,
    scope: req.scope,
    priority: req.priority
  }
}

const MAX_PLAN_TASKS = 1000

export function boardHandlers(
  d: BoardApiParts
): Pick<
  AgencyServer,
  | 'setGoal'
  | 'getGoal'
  | 'addTask'
  | 'addTasks'
  | 'listTasks'
  | 'getTask'
  | 'ready'
  | 'wait'
  | 'claim'
  | 'release'
  | 'done'
  | 'requestReview'
  | 'submitVerdict'
  | 'listReviews'
  | 'experts'
  | 'assist'
> {
  const b = d.boardService
  const goalReply = (): { goal: GoalMsg | undefined; history: GoalMsg[] } => {
    const g = b.board.goal()
    return { goal: g != null ? goalMessage(g) : undefined, history: b.board.goalHistory().map(goalMessage) }
  }
  return {
    setGoal: unary(async req => {
      checkStrings('file', req.files, 256, 1024)
      d.operator.refuseUnsigned('changing the goal or its test command')
      await b.setGoal({ text: req.text, files: req.files, testCommand: req.testCommand })
      return goalReply()
    }),
    getGoal: unary(async () => goalReply()),
    addTask: unary(async req => ({ task: taskMessage(await b.addTask(newTask(req))) })),
    addTasks: unary(async req => {
      if (req.tasks.length > MAX_PLAN_TASKS) throw new InvalidArgumentError(`a plan has at most ${MAX_PLAN_TASKS} tasks`)
      return { tasks: (await d.work.addTasks(req.tasks.map(newTask))).map(taskMessage) }
    }),
    listTasks: unary(async req => ({ tasks: b.board.tasks(b.now(), state(req.state)).map(taskMessage) })),
    getTask: unary(async req => {
      const t = b.board.task(req.id, b.now())
      if (t == null) throw new NotFoundError(`no task ${JSON.stringify(req.id)}`)
      return { task: taskMessage(t) }
    }),
    ready: unary(async () => {
      const now = b.now()
      const choice = b.readyChoice()
      return { tasks: choice.ready.map(taskMessage), pending: choice.pending.map(p => pendingMessage(p, now)) }
    }),
    wait: unary(async (req, call) => {
      const timeoutMs = req.timeoutMs === 0 ? DEFAULT_WAIT_MS : req.timeoutMs
      if (timeoutMs > MAX_WAIT_MS) throw new InvalidArgumentError(`timeout_ms is at most ${MAX_WAIT_MS} (an hour)`)
      const a = await d.work.waitForWork(timeoutMs, call.signal)
      return { reason: a.reason, ready: a.ready.map(taskMessage), unread: a.unread, text: a.text }
    }),
    claim: unary(async req => {
      checkStrings('scope glob', req.scope, 64, 1024)
      if (req.next === true) {
        if (req.task !== '') throw new InvalidArgumentError('claim names a task or asks for the next one, not both: drop the task, or next')
        if (req.noWait)
          throw new InvalidArgumentError('claim with next waits for the answer (it may try another task on LOST): drop no_wait')
        const a = await d.work.claimNext(req.scope)
        const now = b.now()
        return {
          outcome: OUTCOMES[a.outcome],
          task: a.task,
          epoch: a.epoch,
          winner: a.winner,
          handoff: a.handoff,
          branch: a.branch,
          overlaps: a.overlaps,
          settleMs: a.settleMs,
          taskBranch: a.taskBranch,
          workspace: a.workspace,
          attempts: a.attempts,
          pending: a.pending.map(p => pendingMessage(p, now)),
          assist: a.assist
        }
      }
      if (req.task === '') throw new InvalidArgumentError(CLAIM_NEEDS_TASK)
      const a = await d.work.claim(req.task, req.scope, req.noWait)
      return {
        outcome: OUTCOMES[a.outcome],
        task: a.task,
        epoch: a.epoch,
        winner: a.winner,
        handoff: a.handoff,
        branch: a.branch,
        overlaps: a.overlaps,
        settleMs: a.settleMs,
        taskBranch: a.taskBranch,
        workspace: a.workspace,
        attempts: 1,
        pending: []
      }
    }),
    release: unary(async req => ({ task: taskMessage(await d.work.release(req.task, req.note, req.branch)) })),
    done: unary(async req => {
      checkStrings('path', req.paths, 1024, 1024)
      return { task: taskMessage(await d.work.done(req.task, req.commit, req.paths, req.noChange)) }
    }),
    requestReview: unary(async req => {
      await b.requestReview(req.target, req.reviewers, req.note)
      return { review: reviewOf(b, req.target) }
    }),
    submitVerdict: unary(async req => {
      await b.verdict(req.target, req.verdict, req.evidence)
      return { review: reviewOf(b, req.target) }
    }),
    listReviews: unary(async req => ({ reviews: req.target !== '' ? [reviewOf(b, req.target)] : b.board.reviews().map(reviewMessage) })),
    assist: unary(async req => {
      if (req.approach.length > 10_000 || req.stop.length > 10_000)
        throw new InvalidArgumentError('approach and stop are at most 10000 characters')
      return await d.work.assist({ task: req.task, approach: req.approach, stop: req.stop })
    }),
    experts: unary(async req => {
      if (req.path === '') throw new InvalidArgumentError('experts needs a path')
      const self = d.contact.selfView()
      const names = new Map(d.contact.peers().map(p => [p.peerId, p.name]))
      names.set(self.peerId, self.name)
      const experts = b.board.experts(req.path, req.limit === 0 ? 10 : req.limit)
      return {
        experts: experts.map(e => ({
          peerId: e.peer,
          name: names.get(e.peer) ?? '',
          score: e.score,
          tasks: e.tasks,
          integrations: e.integrations
        }))
      }
    })
  }
}
