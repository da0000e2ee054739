// This agent's clone of the shared repository: opened at start, put on a
// task's branch when a claim or an assist is won, and a held task's work
// pushed to its wip ref now and then (and on release) for whoever takes the
// task next.
import { homedir } from 'node:os'
import { join } from 'node:path'
import { openWorkspace, type Workspace } from '../repo/index.js'
import { pushWip, wipRefName } from '../repo/wip-ref.js'
import { NotFoundError, isAgencyError } from '../core/errors.js'
import { validateTaskId } from '../core/board/task-id.js'
import type { WorkspaceReply } from '../gen/agency/v1/api.js'
import type { Logger } from '../logger.js'
import type { BoardService } from './board-service.js'
import type { Startable } from './startable.js'
import { workspaceNotSwitched, workspaceOnAssistBranch, workspaceOnBranch } from '../core/agent-words.js'

export interface RepoWorkspaceComponents {
  me: string
  name: string
  board: Pick<BoardService, 'held'>
  logger: Logger
}

export interface RepoWorkspaceOptions {
  /** the shared repository: path, file://, ssh or http */
  remote: string
  branch: string
  /** this agent's clone */
  workdir: string
  /** where clones on this host share objects */
  mirrorDir?: string
  /** how often a held task's branch is pushed to its wip ref; default 3 min, 0: only on release */
  wipPushMs?: number
}

/** Where a HELD claim left the workspace. */
export interface TaskStart {
  branch: string
  note: string
}

const DEFAULT_WIP_PUSH_MS = 3 * 60_000

export function defaultMirrorDir(): string {
  return join(homedir(), '.agency', 'mirrors')
}

export class RepoWorkspace implements Startable {
  /** the clone, once beforeStart opened it */
  workspace!: Workspace
  /** task -> the commit last pushed to its wip ref */
  private readonly wipPushed = new Map<string, string>()
  private wipTimer?: NodeJS.Timeout

  constructor(
    private readonly c: RepoWorkspaceComponents,
    private readonly o: RepoWorkspaceOptions
  ) {}

  async beforeStart(): Promise<void> {
    const { me, name } = this.c
    this.workspace = await openWorkspace({
      remote: this.o.remote,
      branch: this.o.branch,
      workdir: this.o.workdir,
      agentId: me,
      mirrorDir: this.o.mirrorDir ?? defaultMirrorDir(),
      identity: { name: `agency ${name}`, email: `${name}@agency.invalid` },
      unreachableRemote: 'open'
    })
  }

  start(): void {
    const every = this.o.wipPushMs ?? DEFAULT_WIP_PUSH_MS
    if (every <= 0) return
    let running = false
    this.wipTimer = setInterval(() => {
      if (running) return
      running = true
      const held = this.c.board.held().map(h => h.task)
      void (async () => {
        for (const task of held) await this.saveWork(task)
      })().finally(() => {
        running = false
      })
    }, every)
    this.wipTimer.unref()
  }

  stop(): void {
    clearInterval(this.wipTimer)
  }

  /**
   * Puts the workspace on the task branch of a task just won: the existing
   * local branch, else a new one from the task's wip ref on the remote (the
   * previous holder's pushed work), else from the shared branch.
   */
  async startTask(task: string, handoffBranch: string, o: { fromAssist?: string } = {}): Promise<TaskStart> {
    const ws = this.workspace
    // A hand-off to this agent's assist of the task: its own assist branch (it has its approach's work) goes on.
    const from =
      o.fromAssist !== undefined
        ? `refs/heads/${ws.taskBranch(o.fromAssist)}`
        : handoffBranch.startsWith('refs/agency/')
          ? handoffBranch
          : wipRefName(task)
    try {
      let r
      try {
        r = await ws.checkoutTask(task, { from })
      } catch (err) {
        if (!(err instanceof NotFoundError)) throw err
        r = await ws.checkoutTask(task) // nothing pushed for it yet
        return { branch: r.branch, note: workspaceOnBranch(ws.dir, r.branch, r.created ? `, new from ${ws.branch}` : '') }
      }
      const note = !r.created
        ? ''
        : o.fromAssist !== undefined
          ? `, starting from your assist branch (${ws.taskBranch(o.fromAssist)})`
          : `, starting from the previous holder's work (${from})`
      return { branch: r.branch, note: workspaceOnBranch(ws.dir, r.branch, note) }
    } catch (err) {
      if (!isAgencyError(err)) throw err
      return { branch: ws.taskBranch(task), note: workspaceNotSwitched(ws.taskBranch(task), err.message, task) }
    }
  }

  /** Puts the workspace on a new branch for an assist, from the shared branch: a new approach starts from what landed. */
  async startAssist(branchTask: string): Promise<TaskStart> {
    const ws = this.workspace
    try {
      const r = await ws.checkoutTask(branchTask)
      return { branch: r.branch, note: workspaceOnAssistBranch(ws.dir, r.branch, r.created ? `, new from ${ws.branch}` : '') }
    } catch (err) {
      if (!isAgencyError(err)) throw err
      return { branch: ws.taskBranch(branchTask), note: workspaceNotSwitched(ws.taskBranch(branchTask), err.message) }
    }
  }

  /** Pushes the task branch to the task's wip ref if it moved since the last push; the ref, or '' if nothing was pushed. */
  async saveWork(task: string): Promise<string> {
    try {
      const pushed = await pushWip(this.workspace, task, this.wipPushed.get(task))
      if (pushed == null) return this.wipPushed.has(task) ? wipRefName(task) : ''
      this.wipPushed.set(task, pushed)
      return wipRefName(task)
    } catch (err) {
      this.c.logger.warn({ err, task }, 'cannot push work in progress')
      return ''
    }
  }

  async workspaceInfo(task: string): Promise<WorkspaceReply> {
    const ws = this.workspace
    let taskBranch = ''
    if (task !== '') {
      validateTaskId(task)
      taskBranch = (await ws.checkoutTask(task)).branch
    }
    return { path: ws.dir, remote: ws.remote, branch: ws.branch, taskBranch }
  }
}
