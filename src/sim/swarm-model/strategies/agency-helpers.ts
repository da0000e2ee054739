// Idle agents that help the critical path (agentd's assists, docs/assist.md,
// src/core/board/assist-choice.ts), and hand-off by speed, in the agency
// simulation. The assist rule as agentd has it:
//
// - who: an agent that holds no task, assists none, and has nothing ready
//   (and no review waiting on it);
// - which tasks: held by a peer for at least the floor (agentd --assist-after,
//   default 0: at once), with fewer live assistants than the budget (2), or
//   the budget and its spare places (2 more) while more agents are free than
//   places are left (core/board/assist-spare.ts, agentd --assist-spare);
// - which first: the longest chain of not-done dependents, then the one held
//   longest, then the rendezvous score of (agent, task), as assist-choice.ts;
// - the approach: announced in the log, one nobody has recorded as failed and
//   that neither the holder nor another assistant has announced;
// - the first passing integration wins: the assistant lands its branch the
//   way holders do, through the announced integrator's queue (`agency
//   request-integration`; a batch takes one request per task) or, with no
//   integrator, `agency integrate` (its own verify and the race to the
//   branch); its merged integration counts as landed by it at the holder's
//   epoch and its daemon writes the task's done; the holder's claim ends and
//   it stops (its own request is fenced), the other assistants stop. A
//   holder whose integration lands first ends the assists.
//
// Where the simulation differs: who holds which task since when, and who
// assists with which approach, is read from this registry (the log would tell
// every daemon within a gossip delay); the holder and the other
// assistants stop the moment the task is done, where real agents read the
// notice at their next turn.
//
// Hand-off by speed, by agentd's rule (src/core/board/handoff-choice.ts,
// docs/handoff.md): a holder whose attempt has run past `handoffFactor` × the
// task's usual time (here the task's effort, which the simulation knows; agentd
// takes the median claim-to-done time, with a floor) and whose work is not on
// its way to the branch releases it to an idle agent that is not slow (its
// daemon knows its response speed), which claims it; assistants on the task go
// on (an assistant waiting for the branch must not keep a stalled holder on
// the task). A holder slow by its own record (its median claim-to-done, over
// at least 2 tasks it finished as their holder, above `handoffFactor` × the
// median of every such time: what board.doneTimesByAgent gives agentd) is
// slow past 1 × the task's usual time instead (handoff-choice.ts).
//
// Assistants' attempts that do not land, and holders' attempts an assistant's
// integration made moot, are budgeted redundancy (`helping`), apart from waste.

import type { Replica } from '../replica.js'
import type { Attempt, ProjectTask } from '../workload.js'
import { rendezvousScorer } from '../../../core/board/claim-choice.js'
import { handoffDue, usualTaskMs } from '../../../core/board/handoff-choice.js'
import { assistBudgetNow } from '../../../core/board/assist-spare.js'
import { Finding } from '../../../gen/agency/v1/log.js'
import type { HelperAgent, HelperBoard } from './agency-types.js'
import type { ProjectProgress } from '../project-progress.js'
import type { RunRecorder } from '../../../experiment/run-recorder.js'
import type { Scheduler } from '../../engine/scheduler.js'
import type { Project } from '../workload.js'
import type { MechanismSettings, Mechanisms } from './agency-mechanisms.js'

interface Holding {
  agent: HelperAgent
  claimedAt: number
  attemptStart: number
  approach: string
  merging: boolean
}
interface Helping {
  agent: HelperAgent
  approach: string
  start: number
  active: boolean
  integrating: boolean
}

export interface HelpersInit {
  project: Project
  /** agents in the swarm (all live here: the free ones are those neither at work nor assisting) */
  agents: number
  progress: ProjectProgress
  recorder: RunRecorder
  scheduler: Scheduler
  mechanisms: Mechanisms
  settings: MechanismSettings
}

export class AgencyHelpers implements HelperBoard {
  private readonly o: HelpersInit
  private readonly holders = new Map<number, Holding>()
  private readonly helping = new Map<number, Helping[]>()
  /** claim-to-done times of the tasks each agent finished as their holder (board.doneTimesByAgent), and all of them */
  private readonly record = new Map<HelperAgent, number[]>()
  private readonly allDone: number[] = []
  private usualCache: { n: number; ms: number | undefined } = { n: 0, ms: undefined }

  constructor(init: HelpersInit) {
    this.o = init
  }

  /** Helpers at work on `task` now, with their approaches. */
  helpersOf(task: number): Array<{ agent: number; approach: string; integrating: boolean }> {
    return (this.helping.get(task) ?? []).map(h => ({ agent: h.agent.index, approach: h.approach, integrating: h.integrating }))
  }

  /** The approach the holder of `task` is attempting now (tests). */
  holderApproach(task: number): string | undefined {
    return this.holders.get(task)?.approach
  }

  /** When the holder of `task` claimed it (tests). */
  holderSince(task: number): number | undefined {
    return this.holders.get(task)?.claimedAt
  }

  holding(task: number, agent: HelperAgent, claimedAt: number, attemptStart: number, approach: string): void {
    this.holders.set(task, { agent, claimedAt, attemptStart, approach, merging: false })
  }

  holderGone(task: number, agent: HelperAgent): void {
    if (this.holders.get(task)?.agent === agent) this.holders.delete(task)
  }

  /** The holder has a passing change on its way to the branch (its assistants go on: the first integration wins). */
  holderPassed(task: number): void {
    const h = this.holders.get(task)
    if (h !== undefined) h.merging = true
  }

  /** `task` is done (by its holder or an assistant): the assists end; an assistant's done ends the holder's claim. */
  taskDone(task: number, by: HelperAgent): void {
    const h = this.holders.get(task)
    if (h !== undefined && h.agent === by) {
      const ms = this.o.scheduler.now - h.claimedAt
      const list = this.record.get(by)
      if (list === undefined) this.record.set(by, [ms])
      else list.push(ms)
      this.allDone.push(ms)
    }
    this.holders.delete(task)
    this.stopHelpers(task)
    if (h !== undefined && h.agent !== by) h.agent.taskDoneByAssistant(this.o.project.tasks[task])
  }

  /**
   * The holder's record for the core rule, which compares its median with the
   * usual time it is given: here the task's effort, where agentd gives the
   * board's median claim-to-done; scaled by effort / that median, the record
   * is slow beside the task's effort exactly when it is beside the median.
   */
  private recordFor(agent: HelperAgent, t: ProjectTask): readonly number[] {
    const list = this.record.get(agent)
    if (list === undefined) return []
    if (this.usualCache.n !== this.allDone.length) this.usualCache = { n: this.allDone.length, ms: usualTaskMs(this.allDone) }
    const usual = this.usualCache.ms
    if (usual === undefined || !(usual > 0)) return []
    return list.map(ms => (ms * t.effortMs) / usual)
  }

  /** How long a task must be held before it may be assisted: the floor (assist-choice.ts, agentd --assist-after). */
  thresholdMs(): number {
    return this.o.settings.assistFloorMs
  }

  /** An idle agent asks for a held task on the critical path to assist (or take over, by speed); true if it got one. */
  help(agent: HelperAgent, replica: Replica, now: number): boolean {
    const { mechanisms, project, progress, settings } = this.o
    if (!mechanisms.helpers && !mechanisms.handoff) return false
    const threshold = this.thresholdMs()
    // the cheap tests first; the approaches left (a findings search) only for the best candidates, in order
    const eligible: Array<{ t: ProjectTask; h: Holding; handoff: boolean; helpable: boolean; score: number }> = []
    const score = rendezvousScorer(agent.name)
    const budget = this.budgetNow(now)
    // the task's effort is its usual time here: no floor against a noisy median is needed
    const handoffPolicy = { factor: settings.handoffFactor, floorMs: 0 }
    for (const [task, h] of this.holders) {
      if (h.agent === agent) continue
      const t = project.tasks[task]
      const handoff =
        mechanisms.handoff &&
        !agent.slow &&
        handoffDue(now - h.attemptStart, t.effortMs, h.merging, handoffPolicy, this.recordFor(h.agent, t))
      const list = this.helping.get(task)
      // (an approach left untaken by the holder and its assistants: checked here without a findings search)
      const helpable =
        mechanisms.helpers &&
        now - h.claimedAt > threshold &&
        (list?.length ?? 0) < budget &&
        untaken(project.areas[t.area].approaches, h.approach, list)
      if ((handoff || helpable) && !progress.passed(t.id)) eligible.push({ t, h, handoff, helpable, score: score(t.id) })
    }
    if (eligible.length === 0) return false
    if (eligible.length > 1)
      eligible.sort((a, b) => b.t.chain - a.t.chain || a.h.claimedAt - b.h.claimedAt || b.score - a.score || a.t.index - b.t.index)
    for (const { t, h, handoff, helpable } of eligible) {
      if (handoff && h.agent.yieldTask(t, 'lost', agent.name)) {
        this.o.recorder.bump('handoffsBySpeed')
        agent.takeOver(t)
        return true
      }
      if (helpable && this.startHelping(agent, replica, t, h, now, budget)) return true
    }
    return false
  }

  /**
   * Assistants per task now (assist-spare.ts): the budget, or more while more
   * agents are free than places are left. Free: neither attempting a task it
   * holds (a holder whose change is on its way is free, carry-on) nor
   * assisting; places: on each task held for the floor, the budget less its
   * assistants.
   */
  private budgetNow(now: number): number {
    const { settings } = this.o
    const budget = settings.maxHelpersPerTask
    if (!(settings.assistSpare > 0)) return budget
    const busy = new Set<HelperAgent>()
    let places = 0
    for (const [task, h] of this.holders) {
      if (!h.merging) busy.add(h.agent)
      const list = this.helping.get(task)
      for (const x of list ?? []) busy.add(x.agent)
      if (now - h.claimedAt > this.thresholdMs()) places += Math.max(0, budget - (list?.length ?? 0))
    }
    return assistBudgetNow(budget, settings.assistSpare, this.o.agents - busy.size, places)
  }

  private freeApproaches(agent: HelperAgent, t: ProjectTask, h: Holding, budget: number): string[] {
    const list = this.helping.get(t.index) ?? []
    if (list.length >= budget) return []
    const known = agent.knownTraps(t)
    const area = this.o.project.areas[t.area]
    const taken = new Set([h.approach, ...list.map(x => x.approach)])
    return area.approaches.filter(a => !known.has(`${area.name}/${a}`) && !taken.has(a))
  }

  private startHelping(agent: HelperAgent, replica: Replica, t: ProjectTask, h: Holding, now: number, budget: number): boolean {
    const { project, progress, recorder } = this.o
    const free = this.freeApproaches(agent, t, h, budget)
    if (free.length === 0) return false
    const approach = agent.rng.pick(free)
    const area = project.areas[t.area]
    replica.writeFinding(
      Finding.fromPartial({
        kind: 'note',
        text: `helping on ${t.id} (held by ${h.agent.name}) with ${approach}`,
        paths: t.files,
        tags: [area.name, t.id, `approach:${approach}`, 'helping']
      }),
      now,
      { indexed: false }
    )
    const slowdown = project.hazards.slowdown(agent.index, t.index, progress.nextAttempt(t))
    const attempt = project.attempt(agent.rng, t, agent.knownTraps(t), slowdown, approach)
    const entry: Helping = { agent, approach, start: now, active: true, integrating: false }
    const list = this.helping.get(t.index) ?? []
    list.push(entry)
    this.helping.set(t.index, list)
    recorder.bump('helperAttempts')
    agent.later(attempt.durationMs, () => {
      if (entry.active) this.finished(t, entry, attempt)
    })
    return true
  }

  private finished(t: ProjectTask, entry: Helping, attempt: Attempt): void {
    const { recorder, progress, scheduler } = this.o
    const now = scheduler.now
    const agent = entry.agent
    if (attempt.result === 'trap') {
      recorder.trapHit(attempt.trap, entry.start, attempt.durationMs)
      agent.recordTrap(t, attempt, now)
    }
    if (attempt.result === 'pass' && !progress.passed(t.id) && this.holders.has(t.index)) {
      // the assistant integrates its own branch; it stays an assistant (its approach announced) until it lands or is fenced
      recorder.bump('helperPasses')
      entry.integrating = true
      agent.integrateAssist(t, attempt, entry.start, landed => {
        entry.active = false
        this.drop(t.index, entry)
        if (landed) recorder.bump('helperWins')
        else recorder.spend('helping', attempt.durationMs)
      })
      return
    }
    entry.active = false
    this.drop(t.index, entry)
    recorder.spend('helping', now - entry.start)
    agent.pick()
  }

  private drop(task: number, entry: Helping): void {
    const list = this.helping.get(task)
    if (list === undefined) return
    const rest = list.filter(x => x !== entry)
    if (rest.length === 0) this.helping.delete(task)
    else this.helping.set(task, rest)
  }

  private stopHelpers(task: number): void {
    const list = this.helping.get(task)
    if (list === undefined) return
    this.helping.delete(task)
    const now = this.o.scheduler.now
    for (const x of list) {
      if (!x.active || x.integrating) continue // an integrating assistant finds out when its land is fenced
      x.active = false
      this.o.recorder.spend('helping', now - x.start)
      this.o.recorder.bump('helpersStopped')
      x.agent.later(0, () => {
        x.agent.pick()
      })
    }
  }
}

/** Whether some approach is neither the holder's nor an assistant's. */
function untaken(approaches: readonly string[], holder: string, helping: readonly Helping[] | undefined): boolean {
  for (const a of approaches) {
    if (a === holder) continue
    let taken = false
    for (const x of helping ?? [])
      if (x.approach === a) {
        taken = true
        break
      }
    if (!taken) return true
  }
  return false
}
