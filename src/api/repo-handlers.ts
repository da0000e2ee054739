// gRPC handlers for the shared repository: integrate, integration requests,
// the integrator, test runs and the workspace.
import type { AgencyServer, TestRunInfo } from '../gen/agency/v1/api.js'
import type { BoardService } from '../daemon/board-service.js'
import type { AgentWork } from '../daemon/agent-work.js'
import { InvalidArgumentError } from '../core/errors.js'
import { unary } from './grpc-errors.js'

/** What the repository's handlers use of the daemon. */
export interface RepoApiParts {
  boardService: Pick<BoardService, 'board'>
  work: Pick<AgentWork, 'repo' | 'testSummary'>
}

export function repoHandlers(
  d: RepoApiParts
): Pick<AgencyServer, 'integrate' | 'requestIntegration' | 'runIntegrator' | 'listTestRuns' | 'getWorkspace'> {
  return {
    integrate: unary(async req =>
      req.background
        ? await d.work.repo().integrateInBackground(req.task, req.message)
        : await d.work.repo().integrate(req.task, req.message)
    ),
    requestIntegration: unary(async req => await d.work.repo().requestIntegration(req.task)),
    runIntegrator: unary(async req => {
      if (req.maxBatch > 256) throw new InvalidArgumentError('max_batch is at most 256')
      return await d.work.repo().runIntegrator(req.maxBatch)
    }),
    listTestRuns: unary(async req => {
      const runs: TestRunInfo[] = d.boardService.board.testRuns().map(r => ({
        commit: r.commit,
        branch: r.branch,
        passed: r.passed,
        failed: r.failed,
        total: r.total,
        durationMs: r.durationMs,
        author: r.author,
        time: r.time,
        passRate: r.total > 0 ? r.passed / r.total : 0
      }))
      const limit = req.limit === 0 ? 100 : req.limit
      return { runs: runs.slice(-limit), latest: d.work.testSummary() }
    }),
    getWorkspace: unary(async req => await d.work.repo().workspaceInfo(req.task))
  }
}
