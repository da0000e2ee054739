// How agentd supervises a harness: how long a run may take, how many failed
// runs make it "failing", and how long it then waits between starts.

export interface HarnessPolicy {
  /** a run still going after this long is killed and restarted; 0: no limit */
  runTimeoutMs: number
  /** this many failed runs within failureWindowMs make the harness "failing" */
  maxFailures: number
  failureWindowMs: number
  /** the wait between starts while failing */
  failingBackoffMs: number
}

export const HARNESS_POLICY_DEFAULTS: HarnessPolicy = {
  runTimeoutMs: 30 * 60_000,
  maxFailures: 3,
  failureWindowMs: 10 * 60_000,
  failingBackoffMs: 10 * 60_000
}
