// The ablation runs of the benchmark: agency with all its mechanisms, then
// with each one off in turn, for each swarm size and seed, on the same
// project and hazards as the strategy comparison.

import { ablations, MECHANISM_LABELS, type Mechanism } from './strategies/agency-mechanisms.js'
import type { SwarmJob } from './swarm-job.js'
import type { WorkloadInit } from './workload.js'

export function ablationLabel(off: Mechanism | null): string {
  return off === null ? 'agency, all mechanisms' : `agency without ${MECHANISM_LABELS[off]}`
}

/** One job per (swarm size, seed, configuration); `seedsFor(n)` lists the seeds to run at n agents. */
export function ablationJobs(
  agents: readonly number[],
  seedsFor: (n: number) => number[],
  workload: WorkloadInit,
  maxVirtualMs?: (n: number) => number
): SwarmJob[] {
  const jobs: SwarmJob[] = []
  for (const n of agents) {
    for (const seed of seedsFor(n)) {
      for (const a of ablations()) {
        jobs.push({
          strategy: 'agency',
          agents: n,
          seed,
          workload,
          mechanisms: a.mechanisms,
          label: ablationLabel(a.off),
          maxVirtualMs: maxVirtualMs?.(n)
        })
      }
    }
  }
  return jobs
}
