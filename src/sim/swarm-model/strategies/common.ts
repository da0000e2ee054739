// What every strategy's run takes, and the defaults they share, so the four
// strategies meet the same project under the same agent habits.

import type { Project } from '../workload.js'

export interface SwarmRunInit {
  project: Project
  agents: number
  seed: number
  /** stop after this much virtual time even if some tests still fail */
  maxVirtualMs?: number
  /** an agent with nothing to do looks again after pollMs × uniform [0.5, 1.5) */
  pollMs?: number
  /** agents start within this long of t = 1 s */
  startSpreadMs?: number
  /** overrides the strategy's label in tables and plots */
  label?: string
}

export const RUN_DEFAULTS = {
  maxVirtualMs: 5_000 * 3600_000,
  pollMs: 30_000,
  startSpreadMs: 5_000
} as const

export function agentName(i: number): string {
  return `agent-${String(i).padStart(4, '0')}`
}

/** Inverse of agentName; undefined for any other string. */
export function agentIndex(name: string): number | undefined {
  if (!name.startsWith('agent-') || name.length !== 10) return undefined
  const n = Number(name.slice(6))
  return Number.isSafeInteger(n) ? n : undefined
}

export function validateRun(init: SwarmRunInit): void {
  if (!Number.isSafeInteger(init.agents) || init.agents < 1 || init.agents > 9999)
    throw new RangeError('agents must be a whole number from 1 to 9999')
}
