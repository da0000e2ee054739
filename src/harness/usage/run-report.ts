// What agentd reads back from one run of a harness: what it spent and whether
// it ended on a provider's limit.
import type { RateLimitSignal } from './rate-limit.js'
import type { RunUsage } from './run-usage.js'

export interface RunReport {
  usage: RunUsage
  limit: RateLimitSignal | null
}

/** What a reader is given: the run's output (stdout and stderr as the harness log holds them), and report files the CLI wrote. */
export interface RunOutput {
  text: string
  /** the contents of the report files the harness names (see usageFiles), by path */
  files?: ReadonlyMap<string, string>
  /** the reader's clock, ms since the epoch, for "retry in 7 s" */
  now: number
}

export type RunReader = (out: RunOutput) => RunReport
