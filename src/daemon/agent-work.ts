// The agent's work: the use cases that join the board, the shared repository
// and the assists (claim, claim --next, assist, release, done, wait). The
// gRPC API, the harness and the hand-offs call these; each part keeps its own
// job and this module only says in which order they act.
import type { AssistReply, TestRunSummary } from '../gen/agency/v1/api.js'
import { PLAN_TASK_ID, type NewTask, type TaskView } from '../core/board/index.js'
import { FailedPreconditionError } from '../core/errors.js'
import type { BoardService, ClaimAnswer, NextClaimAnswer } from './board-service.js'
import type { RepoService } from './repo-service.js'
import { checkAssistRequest, type AssistService } from './assist-service.js'
import type { AgentInbox, InboxItem } from './agent-inbox.js'
import type { LogService } from './log-service.js'
import { waitForWork, type WaitAnswer } from './work-wait.js'
import { assisting } from '../core/agent-words.js'

export interface AgentWorkComponents {
  me: string
  board: BoardService
  /** absent when this daemon runs without --repo */
  repo?: RepoService
  assists: AssistService
  inbox: AgentInbox
  log: LogService
  /** calls back whenever a new item reaches the agent's inbox; returns the unsubscribe function */
  onInbox: (listener: () => void) => () => void
}

export type WorkspaceAnswer = { taskBranch: string; workspace: string }

export class AgentWork {
  constructor(private readonly c: AgentWorkComponents) {}

  /** The repository part, or a clear error when this daemon runs without --repo. */
  repo(): RepoService {
    if (this.c.repo == null)
      throw new FailedPreconditionError('this agentd has no shared repository: start it with --repo <git url or path>')
    return this.c.repo
  }

  workspacePath(): string {
    return this.c.repo?.workspace.dir ?? ''
  }

  /**
   * Claims a task; on HELD the workspace is put on the task branch (from the
   * previous holder's pushed work on a takeover), so the agent only commits.
   */
  async claim(task: string, scope: string[], noWait: boolean, o: { fromAssist?: string } = {}): Promise<ClaimAnswer & WorkspaceAnswer> {
    const a = await this.c.board.claim(task, scope, noWait)
    if (a.outcome !== 'HELD' || this.c.repo == null || task === PLAN_TASK_ID) return { ...a, taskBranch: '', workspace: '' }
    const start = await this.c.repo.startTask(task, a.branch, o)
    return { ...a, taskBranch: start.branch, workspace: start.note }
  }

  /** claim --next: the daemon picks the task (board-service claimNext); on HELD the workspace is put on its branch. */
  async claimNext(scope: string[]): Promise<NextClaimAnswer & WorkspaceAnswer & { assist?: AssistReply }> {
    const a = await this.c.board.claimNext(scope)
    if (a.outcome === 'NONE_READY') {
      // Nothing to claim: the held task on the critical path this agent may assist instead (none when it holds or assists one).
      const assist = this.c.assists.offer()
      return { ...a, taskBranch: '', workspace: '', ...(assist !== undefined ? { assist } : {}) }
    }
    if (a.outcome !== 'HELD' || this.c.repo == null || a.task === PLAN_TASK_ID) return { ...a, taskBranch: '', workspace: '' }
    const start = await this.c.repo.startTask(a.task, a.branch)
    return { ...a, taskBranch: start.branch, workspace: start.note }
  }

  /**
   * An assist (docs/assist.md): with `stop`, ends this agent's assist with
   * what it learned; without an approach, looks (the task it may assist, with
   * the approaches to avoid; nothing written); with one, announces it and
   * puts the workspace on a new branch of its own for the task.
   */
  async assist(req: { task: string; approach: string; stop: string }): Promise<AssistReply> {
    const assists = this.c.assists
    checkAssistRequest(req)
    if (req.stop.trim() !== '') return await assists.end(req.stop)
    if (req.approach.trim() === '') return assists.look(req.task)
    const r = await assists.announce(req.task, req.approach)
    if ('outcome' in r) return r
    const start =
      this.c.repo != null
        ? await this.c.repo.startAssist(r.branchTask)
        : { branch: '', note: 'this agentd has no shared repository (--repo): your work cannot be integrated from here' }
    const c = r.candidate
    return {
      ...assists.reply('ASSISTING', c, assisting(c.task, c.holder, start.branch)),
      assistants: c.assistants.length + 1,
      taskBranch: start.branch,
      workspace: start.note,
      entryId: r.entryId
    }
  }

  /** Releases a task; the work so far goes to the task's wip ref first, for whoever takes it next. */
  async release(task: string, note: string, branch: string): Promise<TaskView> {
    const { board, repo, me } = this.c
    board.board.checkReleasable(task, me)
    const saved = branch === '' && repo != null ? await repo.saveWork(task) : ''
    return await board.release(task, note, branch !== '' ? branch : saved)
  }

  async done(task: string, commit: string, paths: string[], noChange: string): Promise<TaskView> {
    // A landing the log lacks (a crash after the push) but the remote's fence proves counts.
    if (noChange.trim() === '') await this.c.repo?.recoverLanding(task)
    return await this.c.board.done(task, commit, paths, noChange)
  }

  async addTasks(tasks: NewTask[]): Promise<TaskView[]> {
    return await this.c.board.addTasks(tasks)
  }

  /** Whether the swarm's goal is met: every task done and the shared tests green. */
  goalMet(): boolean {
    return this.c.board.board.goalMet(this.c.board.now())
  }

  /** The tasks this agent works on, with their titles (a task on its way to the shared branch is not among them). */
  held(): Array<{ task: string; epoch: number; title?: string }> {
    const b = this.c.board
    return b.working().map(h => ({ task: h.task, epoch: h.epoch, title: b.board.task(h.task, b.now())?.title }))
  }

  /** Blocks until there is something for the agent to do (or the time is up), and says what. */
  async waitForWork(timeoutMs: number, signal?: AbortSignal): Promise<WaitAnswer> {
    const { board: b, inbox, log, onInbox } = this.c
    return await waitForWork(
      {
        goalMet: () => this.goalMet(),
        unread: () => inbox.unread(),
        // a task on its way to the shared branch (carry-on) is not work to carry on with
        held: () => b.working().map(h => h.task),
        ready: () => b.readyChoice().ready,
        onChange: listener => {
          const offLog = log.onAccepted(listener)
          const offInbox = onInbox(listener)
          return () => {
            offLog()
            offInbox()
          }
        }
      },
      timeoutMs,
      signal
    )
  }

  async readInbox(o: { after?: number; limit?: number; all?: boolean; peek?: boolean }): Promise<InboxItem[]> {
    return await this.c.inbox.read(o)
  }

  /** The shared branch's latest test run and pass rate, from the board. */
  testSummary(): TestRunSummary | undefined {
    return testSummaryOf(this.c.board)
  }
}

/** The shared branch's latest test run and pass rate, from the board. */
export function testSummaryOf(board: BoardService): TestRunSummary | undefined {
  const runs = board.board.testRuns()
  const last = runs.at(-1)
  if (last == null) return undefined
  return {
    commit: last.commit,
    passed: last.passed,
    failed: last.failed,
    total: last.total,
    passRate: last.total > 0 ? last.passed / last.total : 0,
    time: last.time,
    runs: runs.length
  }
}
