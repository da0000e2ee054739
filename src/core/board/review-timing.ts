// When a review pays. By the simulator's hazard table (docs/benchmarks/bench-swarm.md)
// a review saves about 6 % of a task's effort (defects are rare, a review catches
// half, a fix still costs) and costs its reviewer minutes it would otherwise spend
// on a task of its own. So it pays only when its reviewer would have nothing to
// claim: while fewer tasks are ready than live agents have no task at work. With
// 8 agents and 80 ready tasks that is almost never; with 128 waiting on
// dependencies, nearly always. agentd's status says which (reviewers_free), the
// prompt asks for reviews by it, and the simulator's reviewWhenIdle runs this rule.

/** Whether some agent would have nothing to claim: fewer ready tasks than agents not at work on a task. */
export function reviewersFree(readyTasks: number, agentsNotAtWork: number): boolean {
  return readyTasks < agentsNotAtWork
}
