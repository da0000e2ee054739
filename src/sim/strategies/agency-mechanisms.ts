// agency's mechanisms against the hazards, each one a switch so that the
// benchmark can turn exactly one off at a time (`--ablate`).
//
//   findings       an agent searches the failures peers recorded before it picks an approach
//   overlapMessages the daemon messages the holders of overlapping claims: they agree interfaces
//   verifiedIntegration the whole suite runs on the merged tree before the shared branch moves
//   reviews        a second agent reviews a passing change before it is integrated
//   batching       when integrations pile up an agent becomes the integrator and verifies queued
//                  requests in batches (off: every agent verifies on its own and races the others
//                  to the branch all run long)
//   helpers        an idle agent attempts an overdue held task on the critical path with an approach
//                  nobody has recorded as failed or announced as in progress; the first pass wins
//   handoff        a holder far slower than the task's usual time hands the task to a faster agent

export const MECHANISMS = ['findings', 'overlapMessages', 'verifiedIntegration', 'reviews', 'batching', 'helpers', 'handoff'] as const
export type Mechanism = typeof MECHANISMS[number]
export type Mechanisms = Record<Mechanism, boolean>

export const ALL_MECHANISMS: Readonly<Mechanisms> = Object.freeze(Object.fromEntries(MECHANISMS.map(m => [m, true])) as Mechanisms)

export const MECHANISM_LABELS: Record<Mechanism, string> = {
  findings: 'shared findings',
  overlapMessages: 'overlap messages',
  verifiedIntegration: 'verified integration',
  reviews: 'reviews',
  batching: 'integrator batching',
  helpers: 'helpers on the critical path',
  handoff: 'hand-off by speed'
}

export function isMechanism (s: string): s is Mechanism {
  return (MECHANISMS as readonly string[]).includes(s)
}

/** Every mechanism on but `off`. */
export function without (off: Mechanism): Mechanisms {
  return { ...ALL_MECHANISMS, [off]: false }
}

/** The ablation runs: all on, then each mechanism off in turn (exactly one off per run). */
export function ablations (): Array<{ off: Mechanism | null, mechanisms: Mechanisms }> {
  return [{ off: null, mechanisms: { ...ALL_MECHANISMS } }, ...MECHANISMS.map(m => ({ off: m, mechanisms: without(m) }))]
}

/** How agency's mechanisms are tuned: the same for every swarm size and seed. */
export type MechanismSettings = { [K in keyof typeof MECHANISM_DEFAULTS]: number }

export const MECHANISM_DEFAULTS = {
  /** an idle integrator looks for requests this often (`agency integrator`'s --interval-ms default) */
  batchEveryMs: 2_000,
  /** at most this many requests in one batch (`agency integrator --batch 32`) */
  batchMax: 32,
  /** direct integrations waiting for the branch at once before an agent becomes the integrator ("integrations piling up", judgement) */
  pileUp: 3,
  /** helpers per held task at once (besides its holder) */
  maxHelpersPerTask: 2,
  /**
   * a held task is helped once its holder has had it this many times its
   * usual time; 0: at once, as `agency assist` offers any held task on the
   * critical path. Waiting for an overdue holder was measured and lost (500
   * tasks, 128 agents, 5 seeds, time to 90 %: 0 → 2.34 h, 1.0 → 2.60 h,
   * 1.3 → 2.73 h): an idle agent's attempt costs no throughput, and the
   * first attempt at a task is where a trap costs a whole attempt
   */
  helpAfter: 0,
  /** a holder whose attempt has run this many times the task's usual time is slow */
  handoffFactor: 2
} as const
