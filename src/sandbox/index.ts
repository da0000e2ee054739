// Confinement of agents and test runs: see sandbox.ts.
export {
  createSandbox,
  type Sandbox,
  type SandboxOptions,
  type ConfinedHarness,
  type ConfinedTest,
  type HarnessBoxOptions
} from './sandbox.js'
export {
  SANDBOX_MODES,
  parseSandboxMode,
  parseAllowList,
  detectSupport,
  type SandboxMode,
  type SandboxKind,
  type SandboxSupport
} from './mode.js'
export { SandboxUnavailableError, UnconfinedHarnessError } from './errors.js'
export { DEFAULT_RUN_LIMITS, type RunLimits } from './limits.js'
export type { RefusalKind } from './refusals.js'
export { DEFAULT_SANDBOX_USER, runsAsRoot } from './user.js'
