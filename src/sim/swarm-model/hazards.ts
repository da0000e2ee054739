// The things that go wrong in a real multi-agent project, as parameters of
// the simulated project, the same for every strategy. Each roll is a hash of
// the project's seed and the ids involved (not a draw from a strategy's
// random stream), so a task whose change breaks its neighbours does so under
// every strategy, and a pair of overlapping tasks that would mismatch does so
// under every strategy that builds them apart. A strategy escapes a hazard
// only with a mechanism it has; the defaults and where they come from are in
// docs/benchmarks/bench-swarm.md ("Hazards").

import { hashUnit } from '../engine/hash.js'

export interface HazardInit {
  /** chance that a task's sound change breaks other passing tests when it is merged without running the whole suite */
  breakChance?: number
  /** passing tests of the same area such a merge breaks (at most) */
  breakVictims?: number
  /** fixing a broken area costs this share of the median attempt (finding the culprit in someone else's change) */
  repairFraction?: number
  /** chance that two tasks sharing a file, built at the same time without agreeing, disagree on an interface */
  mismatchChance?: number
  /** repairing a mismatch costs this share of the later task's effort */
  mismatchRepairFraction?: number
  /** chance that a task's passing change still hides a defect its own test misses */
  defectChance?: number
  /** chance that a second agent's review catches such a defect */
  reviewCatchChance?: number
  /** a review takes this long of the reviewer's time */
  reviewMs?: number
  /** fixing a defect a review caught costs this share of the task's effort */
  reviewFixFraction?: number
  /** a defect that got through costs the first dependent that builds on it this share of the defective task's effort */
  defectRepairFraction?: number
  /** chance that one attempt stalls (a harness stuck, a quota hit) */
  stallChance?: number
  /** a stalled attempt takes this many times as long */
  stallFactor?: number
  /** share of agents that are slow for the whole run (a throttled quota, a slower model) */
  slowAgentShare?: number
  /** a slow agent's attempts take this many times as long */
  slowFactor?: number
  /** running the whole test suite on a merged tree */
  verifyMs?: number
}

export const HAZARD_DEFAULTS: Required<HazardInit> = {
  breakChance: 0.2,
  breakVictims: 2,
  repairFraction: 0.5,
  mismatchChance: 0.3,
  mismatchRepairFraction: 0.3,
  defectChance: 0.15,
  reviewCatchChance: 0.5,
  reviewMs: 2 * 60_000,
  reviewFixFraction: 0.2,
  defectRepairFraction: 1,
  stallChance: 0.05,
  stallFactor: 6,
  slowAgentShare: 0.1,
  slowFactor: 2.5,
  verifyMs: 60_000
}

/** No hazard at all: the project of the earlier benchmark. */
export const NO_HAZARDS: HazardInit = { breakChance: 0, mismatchChance: 0, defectChance: 0, stallChance: 0, slowAgentShare: 0 }

const SALT = { break: 0x4252, mismatch: 0x4d4d, defect: 0x4446, review: 0x5256, stall: 0x5354, slow: 0x534c, victim: 0x5643 } as const

export class Hazards {
  readonly options: Required<HazardInit>
  private readonly seed: number

  constructor(seed: number, init: HazardInit = {}) {
    const o = { ...HAZARD_DEFAULTS, ...init }
    for (const [k, v] of Object.entries(o)) {
      if (!Number.isFinite(v) || v < 0) throw new RangeError(`hazard ${k} must be a non-negative number`)
    }
    for (const k of ['breakChance', 'mismatchChance', 'defectChance', 'reviewCatchChance', 'stallChance', 'slowAgentShare'] as const) {
      if (o[k] > 1) throw new RangeError(`hazard ${k} is a probability: 0 to 1`)
    }
    this.options = o
    this.seed = seed
  }

  /** Whether the task's first sound change breaks other tests (until it is fixed once). */
  breaks(task: number): boolean {
    return hashUnit(this.seed, task, SALT.break) < this.options.breakChance
  }

  /** A deterministic order in which a breaking change picks its victims. */
  victimRank(task: number, victim: number): number {
    return hashUnit(this.seed, task, victim, SALT.victim)
  }

  /** Whether tasks a and b, built apart at the same time, disagree on an interface. */
  mismatch(a: number, b: number): boolean {
    const [x, y] = a < b ? [a, b] : [b, a]
    return hashUnit(this.seed, x, y, SALT.mismatch) < this.options.mismatchChance
  }

  /** Whether the task's change hides a defect its own test misses. */
  defect(task: number): boolean {
    return hashUnit(this.seed, task, SALT.defect) < this.options.defectChance
  }

  /** Whether review number `round` of the task's change catches its defect. */
  reviewCatches(task: number, round: number): boolean {
    return hashUnit(this.seed, task, round, SALT.review) < this.options.reviewCatchChance
  }

  /** How many times as long attempt number `n` of agent `agent` at `task` takes: 1, or more when it stalls or the agent is slow. */
  slowdown(agent: number, task: number, n: number): number {
    let f = hashUnit(this.seed, agent, task, n, SALT.stall) < this.options.stallChance ? this.options.stallFactor : 1
    if (this.slowAgent(agent)) f *= this.options.slowFactor
    return f
  }

  slowAgent(agent: number): boolean {
    return hashUnit(this.seed, agent, SALT.slow) < this.options.slowAgentShare
  }
}

/** Where each default comes from, for the benchmark's report. Judgement calls say so. */
export const HAZARD_SOURCES: Record<keyof HazardInit, string> = {
  breakChance:
    'Anthropic\'s write-up of parallel Claude agents building a C compiler reports new features often breaking existing ones until the agents ran the whole suite before merging; "often" read as one change in five (judgement).',
  breakVictims:
    'a broken helper or shared type usually takes a few neighbouring tests with it; 2 keeps the effect local to one area (judgement).',
  repairFraction: "finding and fixing the culprit in someone else's merged change: half a typical attempt (judgement).",
  mismatchChance:
    'two agents editing one module without talking choose a signature independently; with 2 to 4 plausible shapes they differ about a third of the time (judgement).',
  mismatchRepairFraction: "adapting one side to the other: a third of the later task's effort (judgement).",
  defectChance:
    'a hidden test per task misses some behaviour; 15 % of passing changes carry a defect another task will trip over (judgement).',
  reviewCatchChance:
    'the modal defect-detection rates McConnell tabulates (Code Complete, 2nd ed., ch. 20) are about 35 % for informal code review and 60 % for formal inspection; 50 % for a second agent reading the diff and its test.',
  reviewMs: 'reading a 10-minute change and its test: about a fifth of writing it.',
  reviewFixFraction: "fixing one's own change while it is fresh: a fifth of the effort.",
  defectRepairFraction: "debugging a dependency's defect from a failing dependent costs about as much as the dependency took (judgement).",
  stallChance:
    'harness hangs, rate limits and quota stops: one attempt in twenty (judgement; the harness here restarts stuck agents, which caps but does not remove them).',
  stallFactor: 'a stalled attempt takes an hour where ten minutes were due.',
  slowAgentShare: 'one agent in ten on a throttled quota or a slower model for the whole run (judgement).',
  slowFactor: 'a throttled agent takes 2.5 x as long.',
  verifyMs: 'the whole suite of a ProgramBench-sized project on one machine: about a minute.'
}
