// The shared repository: agent workspaces, verified integration, the
// integrator queue and test-result parsing.
export { openWorkspace, handedCommit, type Workspace, type WorkspaceOptions, type GitIdentity } from './workspace.js'
export { integrate, DEFAULT_MAX_ATTEMPTS, type IntegrateOptions, type IntegrateResult } from './integrate.js'
export {
  integrateBatch,
  pushRequestRef,
  validateRequest,
  MAX_BATCH,
  type BatchOptions,
  type BatchResult,
  type IntegrationRequest
} from './integrator.js'
export { verifyMerge, type VerifyMergeOptions, type VerifyMergeResult } from './verify-merge.js'
export { parseTestResults, parseJUnit, type TestCounts, type TestFormat } from './test-results.js'
export {
  checkVerifyCommand,
  runVerify,
  confineTestRuns,
  DEFAULT_VERIFY_TIMEOUT_MS,
  type VerifyOptions,
  type VerifyRun,
  type TestConfinement
} from './verify.js'
export { defaultJitter, type Jitter } from './backoff.js'
export { taskBranchName, requestRefName } from './ref-names.js'
export * from './errors.js'
