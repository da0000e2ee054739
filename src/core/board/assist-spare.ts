// Spare assist places while many agents are free, sans-IO (issue #20, "idle
// agents help"; the rest of the rule: assist-choice.ts). The budget keeps the
// redundancy a task may cost to `budget` assistants while agents are scarce:
// a swarm whose agents all have work to claim or assist spends none on a
// third or fourth approach. But when more agents are free (holding no task but
// those on their way, assisting none, this one included) than there are assist
// places left on the held tasks (the budget less the live assistants, summed
// over the tasks held for the floor), the agents beyond the places would sit
// idle: then every held task has `spare` more places, so that each approach of
// a task on the critical path can be tried at once, each by its own assistant
// on an approach nobody announced (checkApproach still applies). What the
// spare assistants spend is budgeted redundancy, like every assist's.
//
// spare 0 (agentd --assist-spare 0) keeps to the budget.

/** The live agents that may assist now: those not at work (carry-on.ts) and assisting none, `me` among them when it is so. */
export function freeAgentCount(live: Iterable<string>, atWork: ReadonlySet<string>, assisting: ReadonlySet<string>): number {
  let n = 0
  for (const a of live) if (!atWork.has(a) && !assisting.has(a)) n++
  return n
}

/** The assist places left on held tasks: for each, the budget less its live assistants (never below 0). */
export function assistPlacesLeft(budget: number, assistantsPerTask: Iterable<number>): number {
  let n = 0
  for (const k of assistantsPerTask) n += Math.max(0, budget - k)
  return n
}

/**
 * Assistants per task at most now: `budget`, or `budget + spare` while more
 * agents are free than places are left (`freeAgents` undefined: not known,
 * the budget).
 */
export function assistBudgetNow(budget: number, spare: number, freeAgents: number | undefined, placesLeft: number): number {
  return spare > 0 && freeAgents !== undefined && freeAgents > placesLeft ? budget + spare : budget
}
