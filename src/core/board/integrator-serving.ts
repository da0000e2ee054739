// Whether an integrator serves the swarm now, as one daemon sees it. Nothing
// announces an integrator formally (`agency announce` is free text), so it is
// read from what an integrator does: it answers integration requests other
// agents wrote. An agent serves while it is live and it was seen answering
// another agent's request (an `integration` entry whose `request` names an
// `integration_request` of someone else, whatever its result) within the
// last `windowMs`. A daemon answering its own request (a background integrate
// with no integrator, daemon/background-integration) integrates for nobody else, so it does
// not count. This daemon itself counts like any peer: an agent serving as
// integrator lands its own requests in its batches too.
//
// Sans-IO: `at` and `now` are the caller's clock. agentd passes its monotonic
// clock at the moment it received the entry (never the author's wall clock,
// which the board never decides by); entries folded at a start were not seen
// then, so a restarted daemon sees no integrator until one answers again,
// which is the safe side: without one a background integrate does what it
// always did.

/**
 * How long after its last answer to another agent's request a live agent still counts as serving (agentd --integrator-window). Longer than
 * an integrator's batch with a bisect of a slow suite, so one long batch does not end it.
 */
export const DEFAULT_INTEGRATOR_WINDOW_MS = 15 * 60_000

export class IntegratorSightings {
  /** integrator -> when it was last seen answering another agent's request */
  private readonly last = new Map<string, number>()

  /** An integration by `integrator` answering a request written by `requester`, seen at `at`. */
  saw(integrator: string, requester: string, at: number): void {
    if (integrator === requester || integrator === '' || requester === '') return
    const known = this.last.get(integrator)
    if (known === undefined || known < at) this.last.set(integrator, at)
  }

  /** The agents serving as integrator at `now`: live, and seen within `windowMs`; the most recently seen first. */
  serving(now: number, windowMs: number, isLive: (peer: string) => boolean): string[] {
    return [...this.last]
      .filter(([peer, at]) => now - at <= windowMs && isLive(peer))
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .map(([peer]) => peer)
  }
}
