// The fault-schedule checker: seeded schedules of crashes, partitions, lossy,
// duplicating, reordering links and skewed clocks, run through the simulator
// on the core claim protocol, with every run's history checked. It finds
// nothing wrong with the protocol as it is, and it does find (and shrink) a
// protocol that answers HELD without waiting.
import { describe, expect, it } from 'vitest'
import { ClaimProtocol, type ClaimTicket } from '../../../src/core/board/claim-protocol.js'
import { checkFaults, checkSchedule } from '../../../src/sim/faults/check-faults.js'
import { checkRun } from '../../../src/sim/faults/checks.js'
import type { RunRecord as RecordedRun } from '../../../src/sim/faults/run-record.js'
import { History } from '../../../src/sim/faults/history.js'
import { randomSchedule, type FaultSchedule } from '../../../src/sim/faults/schedule.js'
import { SharedBranch } from '../../../src/sim/faults/shared-branch.js'
import { runSchedule, type RunOutcome } from '../../../src/sim/faults/world.js'

/** A protocol that answers a retried claim HELD at once, while the claim still settles (the bug of the old short-cut). */
class HastyRetry extends ClaimProtocol {
  override claim(task: string, scope: readonly string[], now: number, opts: { wait?: boolean } = {}): ClaimTicket {
    const h = this.board.holder(task)
    if (this.isSettling(task) && h?.holder === this.me) {
      return {
        task,
        epoch: h.epoch,
        output: {
          append: [],
          answers: [{ outcome: 'HELD', task, epoch: h.epoch, winner: this.me, settleMs: 0, handoff: '', branch: '' }],
          notices: [],
          mineChanged: false
        }
      }
    }
    return super.claim(task, scope, now, opts)
  }
}

function size(s: FaultSchedule): number {
  return s.faults.length * 1000 + s.nodes * 100 + s.tasks * 10 + s.activeMs / 1e6 + (s.loss + s.duplicate + s.reorder > 0 ? 1 : 0)
}

describe('the fault-schedule checker', () => {
  it('20 seeded schedules of crashes, partitions, message faults and skewed clocks: no violation', () => {
    const summary = checkFaults({ schedules: 20, seed: 1 })
    expect(summary.failed.flatMap(f => f.violations)).toEqual([])
    expect(summary).toMatchObject({ schedules: 20, violations: 0 })
    // and the runs were not empty: faults happened, agents did work
    expect(summary.faults).toBeGreaterThan(20)
    expect(summary.operations).toBeGreaterThan(500)
  })

  it('a run records what the checks need: HELD and LOST answers, notices, landed work, delivered messages, crashes and partitions', () => {
    const s = randomSchedule(1)
    const run = runSchedule({
      ...s,
      faults: [
        ...s.faults,
        { kind: 'crash', node: 0, at: 5_000, restartAt: 9_000, loseUnsynced: true },
        { kind: 'partition', at: 10_000, until: 15_000, groups: [[1]] }
      ]
    })
    const answers = run.history
      .pairs()
      .filter(p => p.invoke.f === 'claim' && p.complete.type === 'ok')
      .map(p => p.complete.outcome)
    expect(answers).toContain('HELD')
    expect(answers).toContain('LOST')
    expect(run.branch.landed.length).toBeGreaterThan(0)
    expect(run.history.of('deliver').length).toBeGreaterThan(0)
    expect(run.history.of('notice').length).toBeGreaterThan(0)
    expect(run.history.of('nemesis').map(e => e.f)).toEqual(expect.arrayContaining(['crash', 'restart', 'partition', 'heal', 'quiet']))
    expect(checkRun(run, { minSettleMs: 250 })).toEqual([])
  })

  it('finds a protocol that answers HELD without waiting, and shrinks the schedule that shows it', () => {
    const hasty = {
      createProtocol: (init: ConstructorParameters<typeof ClaimProtocol>[0]) => new ClaimProtocol({ ...init, fixedSettleMs: 0 })
    }
    const summary = checkFaults({ schedules: 20, seed: 1, ...hasty })
    expect(summary.violations).toBeGreaterThan(10)
    const [failed] = summary.failed
    const texts = failed.violations.map(v => v.text)
    expect(texts.some(t => t.includes('sooner than any settle window'))).toBe(true)
    // two agents told HELD for one task with no fault between them, somewhere in the twenty
    const doubles = Array.from({ length: 20 }, (_, i) => checkSchedule(randomSchedule(1 + i), hasty).violations)
      .flat()
      .filter(v => v.text.includes('both told HELD'))
    expect(doubles.length).toBeGreaterThan(0)
    // the shrunk schedule is smaller, and fails on its own, the same way
    expect(size(failed.shrunk)).toBeLessThan(size(randomSchedule(failed.seed)))
    expect(failed.shrunk.faults).toEqual([])
    expect(checkSchedule(failed.shrunk, hasty).violations.map(v => v.check)).toContain('a')
    expect(checkSchedule(failed.shrunk).violations).toEqual([])
  })

  it('finds a protocol that answers a retried claim HELD before its settle window has passed', () => {
    const summary = checkFaults({ schedules: 20, seed: 1, createProtocol: init => new HastyRetry(init) })
    expect(summary.violations).toBeGreaterThan(0)
    expect(summary.failed[0].shrunkViolations.map(v => v.check)).toContain('a')
  })
})

describe('the checks judge a recorded run as data', () => {
  /** What another recorder would hand over: the run as JSON, no simulator object in it. */
  function asData(run: RunOutcome): RecordedRun {
    const json = JSON.stringify({
      events: run.history.events,
      landed: run.branch.landed,
      replicas: run.replicas,
      winners: [...run.winners]
    })
    const plain = JSON.parse(json) as {
      events: RecordedRun['history']['events']
      landed: RecordedRun['branch']['landed']
      replicas: RecordedRun['replicas']
      winners: Array<[string, string]>
    }
    return {
      history: { events: plain.events },
      branch: { landed: plain.landed },
      replicas: plain.replicas,
      winners: new Map(plain.winners)
    }
  }

  it('gives the same verdicts for a run read back from JSON, with and without violations', () => {
    const ok = runSchedule(randomSchedule(3))
    expect(checkRun(asData(ok), { minSettleMs: 250 })).toEqual(checkRun(ok, { minSettleMs: 250 }))
    const hasty = runSchedule(randomSchedule(1), { createProtocol: init => new ClaimProtocol({ ...init, fixedSettleMs: 0 }) })
    const violations = checkRun(hasty, { minSettleMs: 250 })
    expect(violations.length).toBeGreaterThan(0)
    expect(checkRun(asData(hasty), { minSettleMs: 250 })).toEqual(violations)
  })
})

describe('each check can fail', () => {
  /** A run with two replicas, built by hand. */
  function outcome(): RunOutcome {
    const s = randomSchedule(1)
    return {
      schedule: { ...s, nodes: 2 },
      history: new History(),
      branch: new SharedBranch(),
      winners: new Map(),
      replicas: [
        { node: 'n0', up: true, entryIds: ['n0/1'], board: ['t0 open -@0 -'] },
        { node: 'n1', up: true, entryIds: ['n0/1'], board: ['t0 open -@0 -'] }
      ]
    }
  }

  it('(b) work that lands after its agent was told the claim was lost', () => {
    const run = outcome()
    const claim = run.history.invoke({ time: 0, node: 'n0', f: 'claim', task: 't0' })
    run.history.complete(claim, 300, { type: 'ok', outcome: 'HELD', epoch: 1 })
    run.history.add({ kind: 'notice', time: 1_000, node: 'n0', task: 't0', epoch: 1, reason: 'superseded', winner: 'n1' })
    run.branch.push('t0', 1, 'n0', 2_000)
    expect(checkRun(run, { minSettleMs: 250 }).map(v => v.check)).toContain('b')
  })

  it('(c) an acknowledged entry missing at a replica, (e) replicas that differ', () => {
    const run = outcome()
    run.history.add({ kind: 'append', time: 10, node: 'n1', id: 'n1/1', entryKind: 'task' })
    run.replicas[1].entryIds = ['n0/1', 'n1/1']
    run.replicas[1].board = ['t0 claimed n1@1 -']
    const checks = checkRun(run, { minSettleMs: 250 }).map(v => v.check)
    expect(checks).toContain('c')
    expect(checks).toContain('e')
  })

  it('(d) a message delivered twice, or never', () => {
    const run = outcome()
    for (const id of ['m1', 'm2']) {
      const op = run.history.invoke({ time: 0, node: 'n0', f: 'send', to: 'n1' })
      run.history.complete(op, 0, { type: 'ok', id })
    }
    run.history.add({ kind: 'deliver', time: 50, node: 'n1', from: 'n0', id: 'm1' })
    run.history.add({ kind: 'deliver', time: 90, node: 'n1', from: 'n0', id: 'm1' })
    const texts = checkRun(run, { minSettleMs: 250 })
      .filter(v => v.check === 'd')
      .map(v => v.text)
    expect(texts).toEqual([expect.stringContaining('delivered 2 times'), expect.stringContaining('delivered 0 times')])
  })
})
