import { describe, expect, it } from 'vitest'
import { Hazards, NO_HAZARDS } from '../../../src/sim/swarm-model/hazards.js'
import { AgencySwarm, runAgency } from '../../../src/sim/swarm-model/strategies/agency.js'
import { runCentralManager } from '../../../src/sim/swarm-model/strategies/central-manager.js'
import { runGitLocks } from '../../../src/sim/swarm-model/strategies/git-locks.js'
import { runNoCoordination } from '../../../src/sim/swarm-model/strategies/no-coordination.js'
import { createProject } from '../../../src/sim/swarm-model/workload.js'

// Small, so that each run takes well under a second; few areas, so scopes overlap and traps recur.
const TASKS = 200
const project = createProject(7, { tasks: TASKS, layers: 4, tasksPerArea: 40 })
const AGENTS = 12
const breaking = project.tasks.filter(t => project.hazards.breaks(t.index)).length
const defective = project.tasks.filter(t => project.hazards.defect(t.index)).length

describe('hazards: the same for every strategy', () => {
  const baselines = [
    runNoCoordination({ project, agents: AGENTS, seed: 3 }),
    runGitLocks({ project, agents: AGENTS, seed: 3 }),
    runCentralManager({ project, agents: AGENTS, seed: 3 })
  ]
  // every change others build on asks for a review (by default only while a peer has nothing to claim)
  const agency = runAgency({ project, agents: AGENTS, seed: 3, settings: { reviewWhenIdle: 0 } })

  it('the project draws them at the configured rates', () => {
    const o = project.hazards.options
    expect(breaking / TASKS).toBeGreaterThan(o.breakChance / 2)
    expect(breaking / TASKS).toBeLessThan(o.breakChance * 1.5)
    expect(defective / TASKS).toBeGreaterThan(o.defectChance / 2)
    expect(defective / TASKS).toBeLessThan(o.defectChance * 1.5)
    const rolls = new Hazards(1, { stallChance: 0.25, slowAgentShare: 0 })
    let stalls = 0
    for (let i = 0; i < 2000; i++) if (rolls.slowdown(i % 50, i, 0) > 1) stalls++
    expect(stalls / 2000).toBeGreaterThan(0.2)
    expect(stalls / 2000).toBeLessThan(0.3)
  })

  it('every baseline merges each breaking change unverified and each defect unreviewed: main breaks, defects reach dependents', () => {
    for (const r of baselines) {
      expect(r.completed).toBe(true)
      expect(r.extra.breakingMerges).toBe(breaking)
      expect(r.extra.defectsLanded).toBe(defective)
      expect(r.brokenMainMs).toBeGreaterThan(0)
      expect(r.extra.defectsHit).toBeGreaterThan(0)
      expect(r.spent.repair).toBeGreaterThan(0)
      expect(r.extra.mismatches).toBeGreaterThan(0)
    }
  })

  it('agency meets the same changes: its verify catches every breaking one before it lands; reviews find defects after they land, and their fixes clear some before a dependent trips over them', () => {
    expect(agency.completed).toBe(true)
    // a change caught, fixed, and later rebuilt by a new holder is caught again: at least once per breaking task
    expect(agency.extra.verifyCaught).toBeGreaterThanOrEqual(breaking)
    expect(agency.extra.breakingMerges ?? 0).toBe(0)
    expect(agency.brokenMainMs).toBe(0)
    expect(agency.extra.reviewCaught).toBeGreaterThan(0)
    expect(agency.extra.defectsLanded).toBeLessThanOrEqual(defective)
    expect(agency.extra.defectsFixedAfterLanding).toBeGreaterThan(0)
    expect(agency.extra.defectsHit ?? 0).toBeLessThan(Math.min(...baselines.map(r => r.extra.defectsHit)))
  })

  it('a review does not hold its author up: the author integrates before the verdict, and only changes others build on are reviewed', () => {
    const dependedOn = project.tasks.filter(t => t.dependentIndices.length > 0).length
    expect(agency.extra.reviewRequests).toBe(dependedOn)
    expect(agency.extra.reviewRequests).toBeLessThan(TASKS)
    // fixes after landing exist only because a change lands before its review is done
    expect(agency.extra.defectsFixedAfterLanding).toBeGreaterThan(0)
  })

  it('without hazards nothing breaks and nothing is wasted on repairs', () => {
    const calm = createProject(7, { tasks: TASKS, layers: 4, tasksPerArea: 40, hazards: NO_HAZARDS })
    const r = runGitLocks({ project: calm, agents: AGENTS, seed: 3 })
    expect(r.completed).toBe(true)
    expect(r.brokenMainMs).toBe(0)
    expect(r.spent.repair ?? 0).toBe(0)
    expect(r.extra.defectsHit ?? 0).toBe(0)
  })

  it('refuses a rate that is not a probability', () => {
    expect(() => new Hazards(1, { breakChance: 1.5 })).toThrow(RangeError)
    expect(() => new Hazards(1, { verifyMs: -1 })).toThrow(RangeError)
  })
})

describe('agency with one mechanism off', () => {
  // every change others build on asks for a review, in every run of this block
  const settings = { reviewWhenIdle: 0 }
  const on = runAgency({ project, agents: AGENTS, seed: 4, settings })

  it('without verified integration, the shared branch is broken for a while', () => {
    const off = runAgency({ project, agents: AGENTS, seed: 4, mechanisms: { verifiedIntegration: false }, settings })
    expect(off.completed).toBe(true)
    expect(on.brokenMainMs).toBe(0)
    expect(off.brokenMainMs).toBeGreaterThan(0)
    expect(off.extra.breakingMerges).toBe(breaking)
  })

  it('without reviews, every defect lands and stays until a dependent trips over it', () => {
    const off = runAgency({ project, agents: AGENTS, seed: 4, mechanisms: { reviews: false }, settings })
    expect(off.extra.defectsLanded).toBe(defective)
    expect(off.extra.reviews ?? 0).toBe(0)
    expect(off.extra.defectsFixedAfterLanding ?? 0).toBe(0)
    expect(on.extra.defectsHit ?? 0).toBeLessThan(off.extra.defectsHit)
  })

  it('without overlap messages, overlapping tasks built apart mismatch more often', () => {
    const off = runAgency({ project, agents: AGENTS, seed: 4, mechanisms: { overlapMessages: false }, settings })
    expect(off.extra.overlapAlerts ?? 0).toBe(0)
    expect(off.extra.mismatches).toBeGreaterThan(on.extra.mismatches ?? 0)
  })

  it('without shared findings, agents hit traps peers had recorded', () => {
    const off = runAgency({ project, agents: AGENTS, seed: 4, mechanisms: { findings: false }, settings })
    expect(off.repeatedTrapHits).toBeGreaterThan(on.repeatedTrapHits)
  })

  it('agents integrate on their own until integrations pile up, then an integrator batches; without batching they race to the branch all along, and the wait is waste', () => {
    const off = runAgency({ project, agents: AGENTS, seed: 4, mechanisms: { batching: false }, settings })
    expect(off.completed).toBe(true)
    expect(on.extra.integratorStartedAtMin).toBeGreaterThanOrEqual(0)
    expect(on.extra.batches).toBeGreaterThan(0)
    expect(off.extra.batches ?? 0).toBe(0)
    expect(off.extra.integratorStartedAtMin).toBeUndefined()
    expect(off.spent.verifyWait).toBeGreaterThan(on.spent.verifyWait ?? 0)
  })
})

describe('idle agents help the critical path', () => {
  // Stalls are common and the swarm is wide, so holders are often slow and agents often idle.
  const stally = createProject(9, { tasks: 120, layers: 6, tasksPerArea: 40, hazards: { stallChance: 0.3 } })

  it('assistants never run an approach another assistant of the task is running, and their time is budgeted apart from duplicate work', () => {
    const swarm = new AgencySwarm({ project: stally, agents: 40, seed: 5, mechanisms: { handoff: false } })
    let checks = 0
    while (!swarm.progress.complete && swarm.scheduler.now < 200 * 3600_000) {
      swarm.runUntil(swarm.scheduler.now + 20_000)
      for (const t of stally.tasks) {
        const helpers = swarm.helpers.helpersOf(t.index)
        if (helpers.length === 0) continue
        const approaches = helpers.map(h => h.approach)
        expect(new Set(approaches).size).toBe(approaches.length)
        // (the holder never waits for its assistants: with no other approach left it may take one of theirs)
        checks++
      }
    }
    const r = swarm.result()
    expect(r.completed).toBe(true)
    expect(checks).toBeGreaterThan(0)
    expect(r.extra.helperAttempts).toBeGreaterThan(0)
    expect(r.helpingAgentSeconds).toBeGreaterThan(0)
    expect(r.duplicateAgentSeconds).toBe(0)
  })

  it('assistants join only a task held for the floor, the first passing integration wins, and the holder and every other assistant stop when the task is done', () => {
    const floor = 10 * 60_000
    const swarm = new AgencySwarm({
      project: stally,
      agents: 40,
      seed: 7,
      mechanisms: { handoff: false },
      settings: { assistFloorMs: floor }
    })
    let checks = 0
    while (!swarm.progress.complete && swarm.scheduler.now < 200 * 3600_000) {
      swarm.runUntil(swarm.scheduler.now + 20_000)
      const now = swarm.scheduler.now
      for (const t of stally.tasks) {
        const helpers = swarm.helpers.helpersOf(t.index)
        if (swarm.progress.passed(t.id)) {
          expect(helpers.filter(h => !h.integrating)).toEqual([])
          continue
        }
        if (helpers.length === 0) continue
        const since = swarm.helpers.holderSince(t.index)
        if (since !== undefined) expect(now - since).toBeGreaterThan(floor)
        checks++
      }
    }
    const r = swarm.result()
    expect(r.completed).toBe(true)
    expect(checks).toBeGreaterThan(0)
    expect(r.extra.helperWins).toBeGreaterThan(0)
    expect(r.extra.holdersStoppedByAssist).toBeGreaterThan(0)
    // each assistant's win is a done on the board by an agent that was not the claim's winner
    let byAssistant = 0
    swarm.runUntil(swarm.scheduler.now + 60_000) // the last done reaches every daemon
    swarm.replicas[0].drain(swarm.scheduler.now)
    for (const t of stally.tasks) {
      const done = swarm.replicas[0].board.doneRecord(t.id)
      expect(done).toBeDefined()
      if (done !== undefined && swarm.replicas[0].board.winnerAt(t.id, done.epoch) !== done.by) byAssistant++
    }
    expect(byAssistant).toBe(r.extra.helperWins)
    // no agent dropped a task it held (a holder in its change's pipeline is fenced, not stopped, by an assistant's landing)
    expect(swarm.replicas[0].board.holders().size).toBe(0)
    expect(r.duplicateAgentSeconds).toBe(0)
  })

  it("with an integrator announced, assistants land through its queue like holders, and a win there is the assistant's done", () => {
    const r = runAgency({ project: stally, agents: 40, seed: 7, mechanisms: { handoff: false } })
    expect(r.completed).toBe(true)
    expect(r.extra.integratorStartedAtMin).toBeGreaterThanOrEqual(0)
    // assists before the integrator integrate on their own; after it, every one goes through the queue
    expect(r.extra.assistsRequested).toBeGreaterThan(r.extra.assistsIntegrated ?? 0)
    expect(r.extra.helperWins).toBeGreaterThan(0)
    // the loser of each race (holder or assistant) is refused by the fence: one done per task
    expect(r.extra.fencedMerges).toBeGreaterThan(0)
    expect(r.extra['entries: done']).toBe(stally.tasks.length)
    const off = runAgency({ project: stally, agents: 40, seed: 7, mechanisms: { handoff: false, batching: false } })
    expect(off.extra.assistsRequested ?? 0).toBe(0)
    expect(off.extra.assistsIntegrated).toBeGreaterThan(0)
  })

  it('a holder far slower than the task takes hands it to a faster agent only with hand-off on', () => {
    const on = runAgency({ project: stally, agents: 40, seed: 6 })
    const off = runAgency({ project: stally, agents: 40, seed: 6, mechanisms: { handoff: false, helpers: false } })
    expect(on.completed && off.completed).toBe(true)
    expect(on.extra.handoffsBySpeed).toBeGreaterThan(0)
    expect(off.extra.handoffsBySpeed ?? 0).toBe(0)
    expect(off.extra.handoffs ?? 0).toBe(0)
    expect(off.helpingAgentSeconds).toBe(0)
  })
})
