// Verify in the background (settings.backgroundVerify, as agentd's `agency
// integrate --background`): a holder whose attempt passed hands its change to
// its own daemon and goes on with `claim --next` at once. The daemon runs the
// whole suite on the merge and, with no integrator announced, pushes it
// (fenced, racing the others to the branch as `agency integrate` does); with
// one announced it requests integration once the suite is green, and the
// integrator's batch lands it. Both are machine time, as the integrator's
// runs are. Only a red verify costs the agent: the daemon's notice (which the
// harness delivers into the agent's session) sends it back to the task first:
// its attempt under way pauses while it fixes the change (reviewFixFraction of
// the task's effort), and it hands the change over again.
// The request goes on the log when the daemon hands the change to the branch
// (at once alone; after its green verify with an integrator, so the
// integrator never takes an unverified change); until then the task is on
// its way for this daemon only. The daemon writes the done when it lands.
// agentd does both settings: 1 with no integrator serving, and 2 while one
// serves (BackgroundIntegration.verifyThenRequest; an integrator serves while a live
// agent answered another agent's request lately, core/board/
// integrator-serving, which stands for this model's `integrator.queued`).
// 2 is the simulator's default, as agentd's prompt asks for
// `agency integrate --background` (step 5).

import type { ProjectTask } from '../workload.js'
import type { SwarmContext } from './agency-types.js'

/** What the background path needs of the agent it runs for. */
export interface BackgroundHost {
  readonly swarm: SwarmContext
  /** the daemon carries `t` on its way (core/board/carry-on): the agent picks its next task */
  carry: (t: ProjectTask) => void
  /** the daemon's integration_request for `t` on the log */
  writeRequest: (t: ProjectTask) => void
  /** the daemon's answer to the carried request did not land: a failed integration on the log (the task is current again) */
  refused: (t: ProjectTask) => void
  /**
   * the agent spends `ms` on this before anything else (its attempt under way pauses; else it is its next step, woken if idle), then `fn`
   */
  first: (ms: number, fn: () => void) => void
  /** `fn` after `ms` of this life of the agent's process (daemon and agent go down together) */
  later: (ms: number, fn: () => void) => void
  /** `fn` now, or when the daemon is up again (an answer that came while it was down) */
  whenUp: (fn: () => void) => void
}

/**
 * Hands `t`'s passing change to the daemon. `land()` when it is green on the
 * shared branch (the caller's fenced landing writes the done); `fixed`: the
 * change was fixed after a red verify, so it breaks nothing.
 */
export function integrateInBackground(host: BackgroundHost, t: ProjectTask, land: () => void, fixed = false): void {
  const { swarm } = host
  const { verifyMs, reviewFixFraction } = swarm.project.hazards.options
  const breaks = !fixed && swarm.project.hazards.breaks(t.index)
  swarm.recorder.bump('backgroundVerifies')
  host.carry(t)
  const red = (): void => {
    swarm.recorder.bump('backgroundRed')
    host.refused(t)
    const fix = reviewFixFraction * t.effortMs
    swarm.recorder.spend('breakFix', fix)
    host.first(fix, () => {
      integrateInBackground(host, t, land, true)
    })
  }
  const answer = (green: boolean): void => {
    host.whenUp(() => {
      if (green) land()
      else red()
    })
  }
  if (!swarm.integrator.queued) {
    // `agency integrate` run by the daemon: its verify and the race to the branch are machine time
    host.writeRequest(t)
    swarm.integrator.request({ task: t.index, breaks, machine: true, then: answer })
    return
  }
  // with an integrator: the daemon verifies the merge first, then requests
  swarm.recorder.bump('verifyRuns')
  host.later(verifyMs, () => {
    if (breaks) {
      swarm.recorder.bump('verifyCaught')
      red()
      return
    }
    host.writeRequest(t)
    swarm.integrator.request({ task: t.index, breaks: false, machine: true, then: answer })
  })
}
