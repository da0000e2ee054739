// Idle agents that help the critical path, and hand-off by speed, in the
// agency simulation. An agent with nothing ready looks at held tasks its
// board knows and takes the one with the longest tail of work behind it:
//
// - hand-off: if that task's holder has been on its attempt for more than
//   `handoffFactor` times the task's usual time (stalled, or a slow agent)
//   and this agent is not slow itself, the holder's daemon releases the task
//   to it (the holder's time on it is lost) and it claims the task afresh;
// - help: otherwise it attempts the task with an approach that nobody has
//   recorded as failed (the findings) and that neither the holder nor another
//   helper has announced (a note finding: "helping on T with approach A"), at
//   most `maxHelpersPerTask` helpers a task. The first pass wins: a helper
//   that passes first is handed the task (at once with hand-off, else when
//   the holder's attempt ends without a pass) and integrates its own change;
//   when the holder passes first, the helpers stop and note what they tried.
//
// What helpers spend without winning, and what holders spend before a
// helper's pass replaced theirs, is budgeted redundancy (`helping`), counted
// apart from waste. Simplification: who holds which task with which approach
// is read from this registry, which the agents' claims and announcements
// would tell their peers within a gossip delay (under a second).

import type { Replica } from '../replica.js'
import type { Attempt, ProjectTask } from '../workload.js'
import type { AgencyAgent, Result } from './agency-agent.js'
import type { AgencySwarm } from './agency.js'
import { Finding } from '../../gen/agency/v1/log.js'
import { MECHANISM_DEFAULTS } from './agency-mechanisms.js'

const CANDIDATES = 16

interface Holding { agent: AgencyAgent, attemptStart: number, approach: string, merging: boolean }
interface Helping { agent: AgencyAgent, approach: string, start: number, active: boolean }

export class AgencyHelpers {
  private readonly swarm: AgencySwarm
  private readonly holders = new Map<number, Holding>()
  private readonly helping = new Map<number, Helping[]>()
  /** hand-off off: helpers' passes waiting for their holder's attempt to end */
  private readonly waiting = new Map<number, { agent: AgencyAgent, result: Result }>()

  constructor (swarm: AgencySwarm) {
    this.swarm = swarm
  }

  /** Helpers at work on `task` now, with their approaches (tests). */
  helpersOf (task: number): Array<{ agent: number, approach: string }> {
    return (this.helping.get(task) ?? []).map(h => ({ agent: h.agent.index, approach: h.approach }))
  }

  /** The approach the holder of `task` is attempting now (tests). */
  holderApproach (task: number): string | undefined {
    return this.holders.get(task)?.approach
  }

  holding (task: number, agent: AgencyAgent, attemptStart: number, approach: string, merging: boolean): void {
    this.holders.set(task, { agent, attemptStart, approach, merging })
  }

  holderGone (task: number, agent: AgencyAgent): void {
    if (this.holders.get(task)?.agent === agent) this.holders.delete(task)
  }

  /** The holder's own attempt passed: the helpers stop. */
  holderPassed (task: number): void {
    const h = this.holders.get(task)
    if (h !== undefined) h.merging = true
    this.stopHelpers(task)
  }

  resultWaiting (task: number): boolean {
    return this.waiting.has(task)
  }

  /** The holder released `task` after its attempt failed: a waiting helper's pass takes it. */
  released (task: number): void {
    const w = this.waiting.get(task)
    if (w === undefined) return
    this.waiting.delete(task)
    this.swarm.recorder.bump('helperWins')
    w.agent.takeOver(w.result.task, w.result)
  }

  /** `task` was integrated. */
  taskDone (task: number): void {
    this.stopHelpers(task)
    const w = this.waiting.get(task)
    if (w === undefined) return
    this.waiting.delete(task)
    this.swarm.recorder.spend('helping', w.result.attempt.durationMs)
    w.agent.later(0, () => { w.agent.pick() })
  }

  /** An idle agent looks for a held task on the critical path to help or take over; true if it found one. */
  help (agent: AgencyAgent, replica: Replica, now: number): boolean {
    const { mechanisms, project, progress } = this.swarm
    if (!mechanisms.helpers && !mechanisms.handoff) return false
    const held = replica.ready.held
    if (held.size === 0) return false
    const seen = new Set<number>()
    for (let i = 0; i < CANDIDATES && seen.size < held.size; i++) seen.add(held.pick(agent.rng) as number)
    const tasks = [...seen].map(i => project.tasks[i]).sort((a, b) => b.tailMs - a.tailMs || a.index - b.index)
    for (const t of tasks) {
      const h = this.holders.get(t.index)
      if (h === undefined || h.agent === agent || h.merging || progress.passed(t.id)) continue
      if (mechanisms.handoff && !agent.slow && now - h.attemptStart > MECHANISM_DEFAULTS.handoffFactor * t.effortMs) {
        if (h.agent.yieldTask(t, 'lost')) {
          this.swarm.recorder.bump('handoffsBySpeed')
          this.stopHelpers(t.index)
          agent.takeOver(t, undefined)
          return true
        }
      }
      if (mechanisms.helpers && this.startHelping(agent, replica, t, h, now)) return true
    }
    return false
  }

  private startHelping (agent: AgencyAgent, replica: Replica, t: ProjectTask, h: Holding, now: number): boolean {
    const { project, progress, recorder } = this.swarm
    const list = this.helping.get(t.index) ?? []
    if (list.length >= MECHANISM_DEFAULTS.maxHelpersPerTask || this.waiting.has(t.index)) return false
    const known = agent.knownTraps(t)
    const area = project.areas[t.area]
    const taken = new Set([h.approach, ...list.map(x => x.approach)])
    const free = area.approaches.filter(a => !known.has(`${area.name}/${a}`) && !taken.has(a))
    if (free.length === 0) return false
    const approach = agent.rng.pick(free)
    replica.writeFinding(Finding.fromPartial({
      kind: 'note',
      text: `helping on ${t.id} (held by ${h.agent.name}) with ${approach}`,
      paths: t.files,
      tags: [area.name, t.id, `approach:${approach}`, 'helping']
    }), now, { indexed: false })
    const slowdown = project.hazards.slowdown(agent.index, t.index, progress.nextAttempt(t))
    const attempt = project.attempt(agent.rng, t, known, slowdown, approach)
    const entry: Helping = { agent, approach, start: now, active: true }
    list.push(entry)
    this.helping.set(t.index, list)
    recorder.bump('helperAttempts')
    agent.later(attempt.durationMs, () => { if (entry.active) this.finished(t, entry, attempt) })
    return true
  }

  private finished (t: ProjectTask, entry: Helping, attempt: Attempt): void {
    const { recorder, progress, scheduler, mechanisms } = this.swarm
    const now = scheduler.now
    entry.active = false
    this.drop(t.index, entry)
    const agent = entry.agent
    const h = this.holders.get(t.index)
    if (attempt.result === 'trap') {
      recorder.trapHit(attempt.trap, entry.start, attempt.durationMs)
      agent.recordTrap(t, attempt, now)
    }
    if (attempt.result !== 'pass' || progress.passed(t.id) || h?.merging === true) {
      recorder.spend('helping', now - entry.start)
      agent.pick()
      return
    }
    recorder.bump('helperPasses')
    const result: Result = { task: t, attempt, start: entry.start }
    if (h === undefined || (mechanisms.handoff && h.agent.yieldTask(t, 'helping'))) {
      recorder.bump('helperWins')
      this.stopHelpers(t.index)
      agent.takeOver(t, result)
      return
    }
    // without hand-off the holder's daemon waits for its agent: the pass waits for the holder's attempt to end
    this.waiting.set(t.index, { agent, result })
  }

  /** A review waits and nobody is idle: a helper stops (reviews unblock the pipeline; helping is speculative) and returns to pick, where the review comes first. */
  interruptOne (): boolean {
    for (const [task, list] of this.helping) {
      const x = list.find(h => h.active)
      if (x === undefined) continue
      x.active = false
      this.drop(task, x)
      this.swarm.recorder.spend('helping', this.swarm.scheduler.now - x.start)
      this.swarm.recorder.bump('helpersStopped')
      x.agent.later(0, () => { x.agent.pick() })
      return true
    }
    return false
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
    const now = this.swarm.scheduler.now
    for (const x of list) {
      if (!x.active) continue
      x.active = false
      this.swarm.recorder.spend('helping', now - x.start)
      this.swarm.recorder.bump('helpersStopped')
      x.agent.later(0, () => { x.agent.pick() })
    }
  }
}
