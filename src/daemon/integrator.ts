// The integrator: lands other agents' integration requests in batches on the
// shared branch (repo/integrate-batch), answering each with an integration
// entry; a request that does not land is answered too (reportBad), with a
// failure finding and a message to its author. An assistant's request is
// refused by this board once its task is done or moved on (docs/assist.md).
import { integrateBatch, type Workspace, type IntegrationRequest as RepoRequest } from '../repo/index.js'
import { landedPaths } from '../repo/fence-landing.js'
import type { Board } from '../core/board/index.js'
import { decodeBody } from '../core/log/kinds.js'
import type { RunIntegratorReply } from '../gen/agency/v1/api.js'
import type { Metrics } from '../metrics/metrics.js'
import type { Logger } from '../logger.js'
import type { BoardService } from './board-service.js'
import type { LogService } from './log-service.js'
import { recordRecoveredRun, recordTestRun } from './test-run-record.js'

/** The entries pendingRequests reads: only these are read from the log. */
const INTEGRATION_KINDS: ReadonlySet<string> = new Set(['integration', 'integration_request'])

export interface IntegratorComponents {
  me: string
  board: Pick<BoardService, 'board'>
  log: Pick<LogService, 'state' | 'append'>
  metrics: Metrics
  logger: Logger
  notify: (peer: string, text: string) => Promise<void>
  /** this agent's workspace, once opened */
  workspace: () => Workspace
  /** the swarm's test command the batch is verified with */
  verifyCommand: () => string
}

/** How an assisted task moved on from the holder's epoch `epoch` the assist works at, by this board; undefined while it has not. */
export function epochMoved(board: Board, task: string, epoch: number): string | undefined {
  const h = board.holder(task)
  return h?.epoch === epoch ? undefined : `task ${task} moved from epoch ${epoch} to ${h === undefined ? 'no holder' : `epoch ${h.epoch}`}`
}

export class Integrator {
  constructor(private readonly c: IntegratorComponents) {}

  /** Integration requests in log order that no integration entry answers yet. */
  pendingRequests(): Array<RepoRequest & { id: string }> {
    const answered = new Set<string>()
    const requests: Array<RepoRequest & { id: string }> = []
    for (const e of this.c.log.state.ordered(INTEGRATION_KINDS)) {
      if (e.entry.kind === 'integration') {
        const i = decodeBody('integration', e.entry.body)
        if (i.request !== '') answered.add(i.request)
      } else if (e.entry.kind === 'integration_request') {
        const r = decodeBody('integration_request', e.entry.body)
        requests.push({ id: e.id, ref: r.ref, commit: r.commit, task: r.task, epoch: r.epoch, author: e.entry.author })
      }
    }
    return requests.filter(r => !answered.has(r.id))
  }

  /** Whether a request is an assistant's, by this board: another agent won the claim at its epoch. */
  private byAssistant(r: RepoRequest): boolean {
    const winner = this.c.board.board.winnerAt(r.task, r.epoch)
    return winner !== undefined && winner !== r.author
  }

  /**
   * Why an assistant's request can no longer land, by this board: the task is
   * done, or moved on from the request's epoch. Undefined when it may land
   * (the remote's fence still decides), and for any other request.
   */
  private staleAssist(r: RepoRequest): string | undefined {
    if (!this.byAssistant(r)) return undefined
    const board = this.c.board.board
    const done = board.doneRecord(r.task)
    if (done !== undefined) return `task ${r.task} was done by ${done.by} first`
    return epochMoved(board, r.task, r.epoch)
  }

  async runIntegrator(maxBatch: number): Promise<RunIntegratorReply> {
    const reply: RunIntegratorReply = { landed: [], conflicts: [], failed: [], pending: 0, commit: '' }
    const m = this.c.metrics
    const pending: Array<RepoRequest & { id: string }> = []
    for (const r of this.pendingRequests()) {
      const stale = this.staleAssist(r)
      if (stale === undefined) {
        pending.push(r)
        continue
      }
      m.integrations.inc({ result: 'failed' })
      reply.failed.push(r.task)
      await this.reportBad(r, r.id, 'refused', `is refused: ${stale}`, [])
    }
    const batch = pending.slice(0, maxBatch > 0 ? maxBatch : 16)
    reply.pending = pending.length - batch.length
    if (batch.length === 0) return reply
    const verify = this.c.verifyCommand()
    const byKey = new Map(batch.map(r => [`${r.ref}@${r.commit}`, r]))
    const idOf = (r: RepoRequest): string => byKey.get(`${r.ref}@${r.commit}`)?.id ?? ''
    const result = await integrateBatch({
      workspace: this.c.workspace(),
      requests: batch.map(({ id: _id, ...r }) => r),
      verify,
      deleteLandedRefs: true
    })
    for (const l of result.landed) {
      m.integrations.inc({ result: 'merged' })
      reply.landed.push(l.request.task)
      await this.c.log.append('integration', {
        task: l.request.task,
        epoch: l.request.epoch,
        commit: l.commit,
        result: 'merged',
        paths: [],
        request: idOf(l.request)
      })
    }
    for (const r of result.recovered) {
      // Landed by an earlier batch whose entries were never written (fence-landing): answered now, nothing pushed.
      m.integrations.inc({ result: 'merged' })
      reply.landed.push(r.request.task)
      this.c.logger.warn(
        { task: r.request.task, epoch: r.request.epoch, commit: r.commit },
        'recovered a landed request whose integration entry was missing'
      )
      await this.c.log.append('integration', {
        task: r.request.task,
        epoch: r.request.epoch,
        commit: r.commit,
        result: 'merged',
        paths: await landedPaths(this.c.workspace().dir, r.commit),
        request: idOf(r.request)
      })
    }
    for (const r of result.alreadyMerged) {
      // An assistant's branch with nothing of its own lands nothing: its done must not count (claim-ledger).
      if (this.byAssistant(r)) {
        m.integrations.inc({ result: 'failed' })
        reply.failed.push(r.task)
        await this.reportBad(
          r,
          idOf(r),
          'refused',
          `is refused: ${r.commit.slice(0, 12)} is already on ${this.c.workspace().branch}, so it lands nothing of its own`,
          []
        )
        continue
      }
      reply.landed.push(r.task)
      await this.c.log.append('integration', {
        task: r.task,
        epoch: r.epoch,
        commit: r.commit,
        result: 'merged',
        paths: [],
        request: idOf(r)
      })
    }
    for (const c of result.conflicts) {
      m.integrations.inc({ result: 'conflict' })
      reply.conflicts.push(c.request.task)
      await this.reportBad(
        c.request,
        idOf(c.request),
        'conflict',
        `conflicts with ${this.c.workspace().branch} in ${c.files.join(', ')}`,
        c.files
      )
    }
    for (const f of result.failed) {
      m.integrations.inc({ result: 'failed' })
      reply.failed.push(f.request.task)
      await this.reportBad(f.request, idOf(f.request), 'failed', `breaks the tests: ${f.summary}`, [])
    }
    for (const x of result.refused) {
      m.integrations.inc({ result: 'failed' })
      reply.failed.push(x.request.task)
      // Fenced: another agent's work landed first at the remote (result "fenced", so its author knows to stop).
      if (x.fenced !== undefined)
        await this.reportBad(
          x.request,
          idOf(x.request),
          'fenced',
          `is fenced: ${x.fenced.agent}'s work for ${x.request.task}@${x.fenced.epoch} landed first on the shared remote`,
          []
        )
      else await this.reportBad(x.request, idOf(x.request), 'refused', `is refused: ${x.reason}`, [])
    }
    if (result.pushed != null) {
      reply.commit = result.pushed
      await recordTestRun(this.c.log, this.c.workspace(), result.pushed, result.tests, 0)
    } else {
      const last = result.recovered.at(-1)
      if (last !== undefined) await recordRecoveredRun(this.c.log, this.c.workspace(), last.commit)
    }
    reply.pending += result.deferred.length
    return reply
  }

  /** Answers a request that does not land: an integration entry, a failure finding, and a message to its author. */
  async reportBad(r: RepoRequest, requestId: string, result: string, what: string, paths: string[]): Promise<void> {
    await this.c.log.append('integration', { task: r.task, epoch: r.epoch, commit: '', result, paths, request: requestId })
    const text = `integration request for ${r.task}@${r.epoch} (${r.commit.slice(0, 12)}) ${what}`.slice(0, 8000)
    await this.c.log.append('finding', {
      kind: 'failure',
      text,
      paths,
      tags: [`task:${r.task}`, result],
      refs: requestId !== '' ? [requestId] : [],
      supersedes: ''
    })
    if (r.author !== this.c.me) await this.c.notify(r.author, `[agency integrator] ${text}`).catch(() => {})
  }
}
