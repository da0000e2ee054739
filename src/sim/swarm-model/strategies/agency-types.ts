// The types the agency simulation's parts share, in a file of their own so
// that imports point one way: agency.ts (the swarm) imports the agent, the
// helpers and the integrator; those import only these types, never the swarm.

import type { ProjectProgress } from '../project-progress.js'
import type { Random } from '../../engine/random.js'
import type { Replica } from '../replica.js'
import type { RunRecorder } from '../../../experiment/run-recorder.js'
import type { Scheduler } from '../../engine/scheduler.js'
import type { Attempt, Project, ProjectTask } from '../workload.js'
import type { SimIntegrator } from './agency-integrator.js'
import type { MechanismSettings, Mechanisms } from './agency-mechanisms.js'

/** A passing change a peer is asked to review; the author does not wait for it. */
export interface ReviewRequest {
  task: ProjectTask
  author: number
  /** reviews of this change so far */
  round: number
  then: (caught: boolean) => void
}

/** A passing attempt at a task, waiting to be integrated. */
export interface Result {
  task: ProjectTask
  attempt: Attempt
  start: number
}

/** What the helpers' registry needs of an agent. */
export interface HelperAgent {
  readonly index: number
  readonly name: string
  readonly rng: Random
  readonly slow: boolean
  later: (ms: number, fn: () => void) => void
  pick: () => void
  /** claim `t` once its holder's release has arrived, and attempt it */
  takeOver: (t: ProjectTask) => void
  /** stop the attempt at `t` and release it; the time spent is `kind` */
  yieldTask: (t: ProjectTask, kind: 'helping' | 'lost', to?: string) => boolean
  /**
   * as an assistant whose attempt at `t` passed: integrate its own branch (`agency integrate`); `then(landed)` when it landed first or was
   * fenced
   */
  integrateAssist: (t: ProjectTask, attempt: Attempt, start: number, then: (landed: boolean) => void) => void
  /** an assistant's integration finished `t`, which this agent held: its claim ended; it stops */
  taskDoneByAssistant: (t: ProjectTask) => void
  knownTraps: (t: ProjectTask) => ReadonlySet<string>
  recordTrap: (t: ProjectTask, attempt: Attempt, now: number) => void
}

/** What agents learn from the helpers' registry (assist announcements in the log). */
export interface HelperBoard {
  helpersOf: (task: number) => Array<{ agent: number; approach: string; integrating: boolean }>
  holding: (task: number, agent: HelperAgent, claimedAt: number, attemptStart: number, approach: string) => void
  holderGone: (task: number, agent: HelperAgent) => void
  holderPassed: (task: number) => void
  taskDone: (task: number, by: HelperAgent) => void
  help: (agent: HelperAgent, replica: Replica, now: number) => boolean
}

/** What an agent needs of the swarm it runs in. */
export interface SwarmContext {
  readonly project: Project
  readonly scheduler: Scheduler
  readonly recorder: RunRecorder
  readonly progress: ProjectProgress
  readonly mechanisms: Mechanisms
  readonly settings: MechanismSettings
  readonly integrator: SimIntegrator
  readonly helpers: HelperBoard
  readonly pollMs: number
  readonly expiryPossible: boolean
  readonly agentCount: number
  claimHeld: (replica: Replica, task: ProjectTask, now: number) => void
  agreed: (a: number, b: number) => boolean
  requestReview: (r: ReviewRequest) => void
  /** whether an agent other than `author` has nothing to do now (would take a review at once) */
  peerIdle: (author: number) => boolean
  takeReview: (reviewer: number) => ReviewRequest | undefined
  deliverVerdict: (r: ReviewRequest, caught: boolean) => void
}
