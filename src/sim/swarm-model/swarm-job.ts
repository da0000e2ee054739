// One benchmark job, plain data in and out, so that the benchmark can hand
// jobs to worker processes: a strategy, a swarm size, the project's seed and
// shape, and the strategy's settings.

import type { RunResult } from '../../experiment/run-recorder.js'
import type { MechanismSettings, Mechanisms } from './strategies/agency-mechanisms.js'
import { runAgency, type PartitionPlan } from './strategies/agency.js'
import { runCentralManager } from './strategies/central-manager.js'
import { runGitLocks } from './strategies/git-locks.js'
import { runNoCoordination } from './strategies/no-coordination.js'
import { createProject, type WorkloadInit } from './workload.js'

export const STRATEGIES = ['agency', 'none', 'git', 'manager'] as const
export type StrategyName = (typeof STRATEGIES)[number]

export interface SwarmJob {
  strategy: StrategyName
  agents: number
  seed: number
  workload: WorkloadInit
  label?: string
  /** agency: gossip loss probability */
  loss?: number
  /** agency: a partition into two halves, in virtual minutes */
  partition?: { atMin: number; forMin: number }
  /** manager: ms per request */
  managerServiceMs?: number
  /** git: ms between pulls */
  gitPullMs?: number
  /** agency: the mechanisms that run (default all) */
  mechanisms?: Partial<Mechanisms>
  /** stop after this much virtual time */
  maxVirtualMs?: number
  /** agency: its mechanisms' settings (default MECHANISM_DEFAULTS; the benchmark's --set changes one for every size alike) */
  settings?: Partial<MechanismSettings>
}

export function isStrategy(s: string): s is StrategyName {
  return (STRATEGIES as readonly string[]).includes(s)
}

export function runSwarmJob(job: SwarmJob): RunResult {
  const cpu = process.cpuUsage()
  const r = runStrategy(job)
  const used = process.cpuUsage(cpu)
  return { ...r, seed: job.seed, cpuSeconds: (used.user + used.system) / 1e6 }
}

function runStrategy(job: SwarmJob): RunResult {
  const project = createProject(job.seed, job.workload)
  const base = { project, agents: job.agents, seed: job.seed + job.agents, label: job.label, maxVirtualMs: job.maxVirtualMs }
  switch (job.strategy) {
    case 'agency': {
      const partitions: PartitionPlan[] =
        job.partition === undefined
          ? []
          : [{ at: job.partition.atMin * 60_000, until: (job.partition.atMin + job.partition.forMin) * 60_000 }]
      return runAgency({ ...base, loss: job.loss, partitions, mechanisms: job.mechanisms, settings: job.settings })
    }
    case 'none':
      return runNoCoordination(base)
    case 'git':
      return runGitLocks(job.gitPullMs === undefined ? base : { ...base, pullEveryMs: job.gitPullMs })
    case 'manager':
      return runCentralManager(job.managerServiceMs === undefined ? base : { ...base, serviceMs: job.managerServiceMs })
  }
}
