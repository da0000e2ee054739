// agency's mechanisms against the hazards, each one a switch so that the
// benchmark can turn exactly one off at a time (`--ablate`).
//
//   findings       an agent searches the failures peers recorded before it picks an approach
//   overlapMessages the daemon messages the holders of overlapping claims: they agree interfaces
//   verifiedIntegration the whole suite runs on the merged tree before the shared branch moves
//   reviews        a second agent reviews a change others build on (its author does not wait);
//                  a defect it finds is fixed before a dependent trips over it, if in time
//   batching       when integrations pile up an agent becomes the integrator and verifies queued
//                  requests in batches (off: every agent verifies on its own and races the others
//                  to the branch all run long)
//   helpers        agentd's assists: an idle agent works on a held task of the critical path
//                  (as soon as it is held), with an approach nobody recorded as failed or announced;
//                  the first passing integration wins
//   handoff        a holder far slower than the task's usual time hands the task to a faster agent
//                  (the mechanism; agentd has no such rule)

import { ASSIST_DEFAULTS } from '../../../core/board/assist-choice.js'

export const MECHANISMS = ['findings', 'overlapMessages', 'verifiedIntegration', 'reviews', 'batching', 'helpers', 'handoff'] as const
export type Mechanism = (typeof MECHANISMS)[number]
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

export function isMechanism(s: string): s is Mechanism {
  return (MECHANISMS as readonly string[]).includes(s)
}

/** Every mechanism on but `off`. */
export function without(off: Mechanism): Mechanisms {
  return { ...ALL_MECHANISMS, [off]: false }
}

/** The ablation runs: all on, then each mechanism off in turn (exactly one off per run). */
export function ablations(): Array<{ off: Mechanism | null; mechanisms: Mechanisms }> {
  return [{ off: null, mechanisms: { ...ALL_MECHANISMS } }, ...MECHANISMS.map(m => ({ off: m, mechanisms: without(m) }))]
}

/** How agency's mechanisms are tuned: the same for every swarm size and seed. */
export type MechanismSettings = { -readonly [K in keyof typeof MECHANISM_DEFAULTS]: number }

export const MECHANISM_DEFAULTS = {
  /** an idle integrator looks for requests this often (`agency integrator`'s --interval-ms default) */
  batchEveryMs: 2_000,
  /** at most this many requests in one batch (`agency integrator --batch 32`) */
  batchMax: 32,
  /** direct integrations waiting for the branch at once before an agent becomes the integrator ("integrations piling up", judgement) */
  pileUp: 3,
  /** assistants per held task at once, besides its holder (agentd --assist-budget) */
  maxHelpersPerTask: ASSIST_DEFAULTS.budget,
  /** places per task beyond that while more agents are free than places are left (agentd --assist-spare; 0: none) */
  assistSpare: ASSIST_DEFAULTS.spare,
  /** an assist needs the task held this long at least (agentd --assist-after; 0: at once) */
  assistFloorMs: ASSIST_DEFAULTS.floorMs,
  /** a holder whose attempt has run this many times the task's usual time is slow */
  handoffFactor: 2,
  /**
   * 1 (as agentd, core/board/carry-on): a holder whose integration request waits in the integrator's queue goes on with its next task, its
   * daemon writing the done when the request lands; 0: it waits for its batch (no carry-on)
   */
  carryOn: 1,
  /**
   * verify in the background (background-verify.ts), as agentd's `agency integrate --background`, which the prompt's step 5 asks for. 2
   * (default, as agentd): a holder whose attempt passed hands the change to its own daemon and goes on; with no integrator serving the
   * daemon verifies the merge and races to the branch; while one serves (core/board/integrator-serving) it verifies the merge first,
   * keeping the task on its way locally, and then requests integration. 1: in the background only while no integrator serves; with one the
   * agent requests integration itself (request-integration) and carries on. 0: the agent waits for its own `agency integrate`. Only a red
   * verify comes back to the agent
   */
  backgroundVerify: 2,
  /**
   * 1 (default), as agentd's prompt: a change asks for a review only while its author's status says `reviews: worth asking`
   * (core/board/review-timing: fewer tasks ready than agents not at work, so some peer has nothing to claim); 0: every change others build
   * on asks. By the hazard table a review costs its reviewer more than the defects it catches save (6 % of a task's effort against 2 min),
   * unless the reviewer had nothing else to do
   */
  reviewWhenIdle: 1
} as const
