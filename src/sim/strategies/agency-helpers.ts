// Idle agents that help the critical path, and hand-off by speed, in the
// agency simulation, by the rule `agency assist` follows in agentd: an agent
// with nothing ready (and no review waiting on it) asks its daemon for a held
// task to help; the daemon offers the one on the critical path, the longest
// chain of dependents (ties: the longer tail of work, then the lower id); the
// helper announces its approach in the log, one nobody has recorded as failed
// and that neither the holder nor another helper has announced. The first
// pass wins: a helper's pass goes to the holder, which stops at once and
// integrates that change under its claim (no release a third agent could
// take in between); a holder's pass stops its helpers at once.
//
// The budget: only agents with nothing ready help, so helping takes no task
// from anyone; at most `maxHelpersPerTask` helpers a task; a slow agent (its
// daemon knows its response speed) does not help; `helpAfter` can hold
// helpers back until the holder is overdue (0, the default: at once; see
// agency-mechanisms.ts for why). Helpers' lost attempts and holders' stopped
// ones are counted apart from waste (`helping`).
//
// Hand-off by speed: a holder whose attempt has run past `handoffFactor` ×
// the task's usual time, with no helper on it, releases it to an idle agent
// that is not slow, which claims it.
//
// Modelling shortcut: who holds which task with which approach is read from
// this registry, which the agents' claims and announcements would tell their
// peers within a gossip delay (under a second).

import type { Replica } from '../replica.js'
import type { Attempt, ProjectTask } from '../workload.js'
import { Finding } from '../../gen/agency/v1/log.js'
import type { HelperAgent, HelperBoard, Result } from './agency-types.js'
import type { ProjectProgress } from '../project-progress.js'
import type { RunRecorder } from '../run-recorder.js'
import type { Scheduler } from '../scheduler.js'
import type { Project } from '../workload.js'
import type { MechanismSettings, Mechanisms } from './agency-mechanisms.js'

interface Holding { agent: HelperAgent, claimedAt: number, attemptStart: number, approach: string, merging: boolean }
interface Helping { agent: HelperAgent, approach: string, start: number, active: boolean }

export interface HelpersInit {
  project: Project
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

  constructor (init: HelpersInit) {
    this.o = init
  }

  /** Helpers at work on `task` now, with their approaches. */
  helpersOf (task: number): Array<{ agent: number, approach: string }> {
    return (this.helping.get(task) ?? []).map(h => ({ agent: h.agent.index, approach: h.approach }))
  }

  /** The approach the holder of `task` is attempting now (tests). */
  holderApproach (task: number): string | undefined {
    return this.holders.get(task)?.approach
  }

  /** When the holder of `task` claimed it (tests). */
  holderSince (task: number): number | undefined {
    return this.holders.get(task)?.claimedAt
  }

  holding (task: number, agent: HelperAgent, claimedAt: number, attemptStart: number, approach: string): void {
    this.holders.set(task, { agent, claimedAt, attemptStart, approach, merging: false })
  }

  holderGone (task: number, agent: HelperAgent): void {
    if (this.holders.get(task)?.agent === agent) this.holders.delete(task)
  }

  /** The holder has a passing change (its own or a helper's): the helpers stop. */
  holderPassed (task: number): void {
    const h = this.holders.get(task)
    if (h !== undefined) h.merging = true
    this.stopHelpers(task)
  }

  /** `task` was integrated. */
  taskDone (task: number): void {
    this.holders.delete(task)
    this.stopHelpers(task)
  }

  /** An idle agent asks for a held task on the critical path to help or take over; true if it got one. */
  help (agent: HelperAgent, replica: Replica, now: number): boolean {
    const { mechanisms, project, progress } = this.o
    if (!mechanisms.helpers && !mechanisms.handoff) return false
    if (agent.slow) return false
    // the cheap tests first; the approaches left (a findings search) only for the best candidates, in order
    const eligible: Array<{ t: ProjectTask, h: Holding, handoff: boolean }> = []
    for (const [task, h] of this.holders) {
      if (h.agent === agent || h.merging) continue
      const t = project.tasks[task]
      if (progress.passed(t.id)) continue
      const handoff = mechanisms.handoff && !this.helping.has(task) && now - h.attemptStart > this.o.settings.handoffFactor * t.effortMs
      const helpable = mechanisms.helpers && now - h.claimedAt > this.o.settings.helpAfter * t.effortMs && (this.helping.get(task)?.length ?? 0) < this.o.settings.maxHelpersPerTask
      if (handoff || helpable) eligible.push({ t, h, handoff })
    }
    eligible.sort((a, b) => b.t.chain - a.t.chain || b.t.tailMs - a.t.tailMs || a.t.index - b.t.index)
    for (const { t, h, handoff } of eligible) {
      if (handoff && h.agent.yieldTask(t, 'lost')) {
        this.o.recorder.bump('handoffsBySpeed')
        agent.takeOver(t)
        return true
      }
      if (mechanisms.helpers && this.startHelping(agent, replica, t, h, now)) return true
    }
    return false
  }

  private freeApproaches (agent: HelperAgent, t: ProjectTask, h: Holding): string[] {
    const list = this.helping.get(t.index) ?? []
    if (list.length >= this.o.settings.maxHelpersPerTask) return []
    const known = agent.knownTraps(t)
    const area = this.o.project.areas[t.area]
    const taken = new Set([h.approach, ...list.map(x => x.approach)])
    return area.approaches.filter(a => !known.has(`${area.name}/${a}`) && !taken.has(a))
  }

  private startHelping (agent: HelperAgent, replica: Replica, t: ProjectTask, h: Holding, now: number): boolean {
    const { project, progress, recorder } = this.o
    const free = this.freeApproaches(agent, t, h)
    if (free.length === 0) return false
    const approach = agent.rng.pick(free)
    const area = project.areas[t.area]
    replica.writeFinding(Finding.fromPartial({
      kind: 'note',
      text: `helping on ${t.id} (held by ${h.agent.name}) with ${approach}`,
      paths: t.files,
      tags: [area.name, t.id, `approach:${approach}`, 'helping']
    }), now, { indexed: false })
    const slowdown = project.hazards.slowdown(agent.index, t.index, progress.nextAttempt(t))
    const attempt = project.attempt(agent.rng, t, agent.knownTraps(t), slowdown, approach)
    const entry: Helping = { agent, approach, start: now, active: true }
    const list = this.helping.get(t.index) ?? []
    list.push(entry)
    this.helping.set(t.index, list)
    recorder.bump('helperAttempts')
    agent.later(attempt.durationMs, () => { if (entry.active) this.finished(t, entry, attempt) })
    return true
  }

  private finished (t: ProjectTask, entry: Helping, attempt: Attempt): void {
    const { recorder, progress, scheduler } = this.o
    const now = scheduler.now
    entry.active = false
    this.drop(t.index, entry)
    const agent = entry.agent
    if (attempt.result === 'trap') {
      recorder.trapHit(attempt.trap, entry.start, attempt.durationMs)
      agent.recordTrap(t, attempt, now)
    }
    const h = this.holders.get(t.index)
    if (attempt.result === 'pass' && !progress.passed(t.id) && h !== undefined && !h.merging) {
      recorder.bump('helperPasses')
      const result: Result = { task: t, attempt, start: entry.start }
      // first pass wins: the holder stops and integrates this change (its helpers are stopped with it)
      if (h.agent.adoptPass(t, result)) {
        recorder.bump('helperWins')
        recorder.worked(t.id, agent.index, entry.start, now, true)
        agent.pick()
        return
      }
    }
    recorder.spend('helping', now - entry.start)
    agent.pick()
  }

  private drop (task: number, entry: Helping): void {
    const list = this.helping.get(task)
    if (list === undefined) return
    const rest = list.filter(x => x !== entry)
    if (rest.length === 0) this.helping.delete(task)
    else this.helping.set(task, rest)
  }

  private stopHelpers (task: number): void {
    const list = this.helping.get(task)
    if (list === undefined) return
    this.helping.delete(task)
    const now = this.o.scheduler.now
    for (const x of list) {
      if (!x.active) continue
      x.active = false
      this.o.recorder.spend('helping', now - x.start)
      this.o.recorder.bump('helpersStopped')
      x.agent.later(0, () => { x.agent.pick() })
    }
  }
}
