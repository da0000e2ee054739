// The shared branch's test runs, as log entries: what the integrate paths
// and the integrator write after a landing.
import type { TestCounts, Workspace } from '../repo/index.js'
import { revParse } from '../repo/git.js'
import type { LogService } from './log-service.js'

const EXIT_CODE_PASS = { passed: 1, failed: 0, total: 1, format: 'exit-code' } as const
/** The summary of a recovered landing's test run: its counts died with the daemon that verified it (recordRecoveredRun). */
export const RECOVERED_RUN_FORMAT = 'recovered'

/** The shared branch's new test result; a green run whose output no parser read counts by its exit status. */
export async function recordTestRun(
  log: Pick<LogService, 'append'>,
  workspace: Workspace,
  commit: string,
  counts: TestCounts | null,
  durationMs: number
): Promise<void> {
  const t = counts ?? EXIT_CODE_PASS
  await log.append('test_run', {
    commit,
    branch: workspace.branch,
    passed: t.passed,
    failed: t.failed,
    total: t.total,
    durationMs: Math.round(durationMs),
    summary: t.format
  })
}

/**
 * The test run of a recovered landing (fence-landing): its verify passed,
 * since the push follows a green verify only, but its counts and duration
 * died with the daemon. What is known is recorded, as a green run by exit
 * status (format "recovered"), when `commit` is still the tip of the shared
 * branch as fetched; a later landing's run describes the branch otherwise.
 */
export async function recordRecoveredRun(log: Pick<LogService, 'append'>, workspace: Workspace, commit: string): Promise<void> {
  const tip = await revParse(workspace.dir, `refs/remotes/origin/${workspace.branch}`).catch(() => null)
  if (tip !== commit) return
  await log.append('test_run', {
    commit,
    branch: workspace.branch,
    passed: 1,
    failed: 0,
    total: 1,
    durationMs: 0,
    summary: RECOVERED_RUN_FORMAT
  })
}
