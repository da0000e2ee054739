// The pieces the experiment's numbers come from, on inputs made by hand:
// the shared record's work, duplicate work and repeated failures (the
// simulator's definitions), tokens in harness logs, durations, JUnit corner
// cases, and the report's table.
import { describe, expect, it } from 'vitest'
import { addSpend, spendOfRecord, usdPerPoint } from '../../src/experiment/run-spend.js'
import { renderReport } from '../../src/experiment/report.js'
import type { ExperimentConfig, PassPoint, RunSummary } from '../../src/experiment/run-files.js'
import { timeTo } from '../../src/experiment/run-files.js'
import { summarizeRecord, type RecordEntry } from '../../src/experiment/swarm-record.js'

const S = 1000
let lamport = 0
const entry = (author: string, time: number, kind: string, body: Record<string, unknown>): RecordEntry => ({
  id: `${author}-${++lamport}`,
  author,
  lamport,
  time: 1_000_000 + time,
  kind,
  body
})

describe('the shared record of a run', () => {
  it('work runs from a winning claim to its release or done; overlapping work on one task is duplicate work', () => {
    lamport = 0
    const log = [
      entry('A', 0, 'claim', { task: 't1', epoch: 1 }),
      entry('B', 0, 'claim', { task: 't2', epoch: 1 }),
      entry('C', 1 * S, 'claim', { task: 't1', epoch: 1 }), // lost the race for t1: no work
      entry('C', 1.2 * S, 'release', { task: 't1', epoch: 1 }),
      entry('A', 10 * S, 'done', { task: 't1', epoch: 1 }),
      // B's lease looked expired at 20 s; A took t2 over while B was still at it until 30 s.
      entry('A', 20 * S, 'claim', { task: 't2', epoch: 2, takeoverOf: 'B' }),
      entry('B', 30 * S, 'release', { task: 't2', epoch: 1 }),
      entry('A', 40 * S, 'done', { task: 't2', epoch: 2 })
    ]
    const r = summarizeRecord(log, 1_000_000 + 50 * S)
    // A: 0-10 on t1, 20-40 on t2; B: 0-30 on t2 -> 60 agent-seconds, 20 of them (10 s, two agents) on t2 at once
    expect(r.workAgentSeconds).toBe(60)
    expect(r.duplicateAgentSeconds).toBe(20)
  })

  it('a failure recorded again on an attempt that started after the first record is a repeated failure', () => {
    lamport = 0
    const failure = (author: string, time: number, task: string, approach: string): RecordEntry =>
      entry(author, time, 'finding', {
        kind: 'failure',
        text: `approach ${approach} fails`,
        paths: ['src/x.py'],
        tags: [`task:${task}`, `approach:${approach}`]
      })
    const log = [
      entry('A', 0, 'claim', { task: 't1', epoch: 1 }),
      entry('B', 2 * S, 'claim', { task: 't3', epoch: 1 }),
      failure('A', 5 * S, 't1', 'naive'), // first record of t1/naive
      failure('B', 6 * S, 't3', 'naive'), // another task: another failure
      entry('A', 8 * S, 'release', { task: 't1', epoch: 1 }),
      entry('B', 9 * S, 'done', { task: 't3', epoch: 1 }),
      entry('B', 12 * S, 'claim', { task: 't1', epoch: 2 }),
      failure('B', 15 * S, 't1', 'naive'), // B started t1 after A's record: repeated
      entry('B', 20 * S, 'done', { task: 't1', epoch: 2 }),
      entry('B', 21 * S, 'integration', { task: 't1', epoch: 2, result: 'merged' }),
      entry('A', 22 * S, 'integration', { task: 't3', epoch: 1, result: 'conflict' }),
      entry('A', 23 * S, 'finding', { kind: 'discovery', text: 'use a table' })
    ]
    const r = summarizeRecord([...log, ...log.slice(0, 3)], 1_000_000 + 30 * S) // entries read from two daemons
    expect(r.failureFindings).toBe(3)
    expect(r.failuresRecorded).toBe(2)
    expect(r.repeatedFailures).toBe(1)
    expect(r.findings).toBe(4)
    expect([r.integrations, r.integrationAttempts]).toEqual([1, 2])
  })
})

describe("spend from the swarm's record", () => {
  const usage = (id: string, author: string, body: Record<string, unknown>): RecordEntry => ({
    id,
    author,
    lamport: 1,
    time: 0,
    kind: 'usage',
    body
  })
  it('folds the usage entries (proto3 JSON, as the API gives them); input counts cached input; none: null', () => {
    const record = [
      usage('e1', 'a', {
        models: [{ model: 'm', inputTokens: 10, cacheReadTokens: 1000, cacheWriteTokens: 100, outputTokens: 50, microUsd: 250000 }],
        wallMs: 1000,
        task: 't'
      }),
      usage('e2', 'b', { models: [{ model: 'm', inputTokens: 5, outputTokens: 7, microUsd: 1000, estimated: true }], wallMs: 1000 }),
      usage('e2', 'b', { models: [{ model: 'm', inputTokens: 5, outputTokens: 7, microUsd: 1000, estimated: true }], wallMs: 1000 }),
      { id: 'x', author: 'a', lamport: 2, time: 0, kind: 'finding', body: { text: 'n' } }
    ]
    expect(spendOfRecord(record)).toEqual({
      inputTokens: 1115,
      outputTokens: 57,
      cacheReadTokens: 1000,
      cacheWriteTokens: 100,
      usd: 0.251,
      estimated: true,
      runs: 2
    })
    expect(spendOfRecord(record.slice(3))).toBeNull()
    expect(addSpend([spendOfRecord(record), null])?.usd).toBe(0.251)
    expect(addSpend([null, undefined])).toBeNull()
    expect(usdPerPoint(12, 0.4)).toBe(0.3)
    expect(usdPerPoint(12, 0)).toBeNull()
  })
})

describe('the report', () => {
  const config: ExperimentConfig = {
    task: 'demo',
    taskDir: '/t',
    cleanroom: '/t/cleanroom',
    agents: [1, 4],
    harness: 'sim',
    budgetSeconds: 1200,
    scoreEverySeconds: 20,
    repeat: 1,
    goal: 'g',
    testCommand: 'c',
    scoredTests: 50,
    branches: 2,
    referenceHash: 'x',
    referenceBuilt: true,
    startedAt: '2026-01-01T00:00:00.000Z'
  }
  const points = (pairs: Array<[number, number]>): PassPoint[] =>
    pairs.map(([t, passed]) => ({ t, commit: 'c', passed, tests: 50, score: passed / 50, error: null }))
  const summary = (agents: number, passed: number, p: PassPoint[]): RunSummary => ({
    agents,
    repeat: 1,
    startedAt: '',
    elapsedSeconds: p.at(-1)?.t ?? 0,
    budgetSeconds: 1200,
    stoppedBy: 'goal',
    final: { score: passed / 50, passed, tests: 50, commit: 'c', error: null },
    timeToSeconds: timeTo(p),
    agentHours: agents * 0.1,
    harnessRestarts: 0,
    integrations: 10,
    integrationAttempts: 10,
    findings: 12,
    failureFindings: 2,
    tasksDone: 10,
    tasksTotal: 10,
    workAgentSeconds: 100,
    duplicateAgentSeconds: 0,
    repeatedFailures: 0,
    spend: null,
    scorings: 5
  })

  it("has the paper's table: final pass rate per swarm size and the change against 1 agent", () => {
    const one = points([
      [0, 0],
      [60, 5],
      [120, 12],
      [300, 20]
    ])
    const four = points([
      [0, 0],
      [40, 12],
      [80, 30]
    ])
    expect(timeTo(one)).toEqual({ 10: 60, 20: 120, 30: 300, 50: null })
    const { markdown, svg } = renderReport({
      config,
      runs: [
        { summary: summary(1, 20, one), points: one },
        { summary: summary(4, 30, four), points: four }
      ]
    })
    expect(markdown).toContain(
      '| task | agents | final pass rate | change against 1 agent | tokens in / out | dollars | dollars per point |'
    )
    expect(markdown).toContain('| demo | 1 | 40.00 % | — | not reported | not reported | — |')
    expect(markdown).toContain('| demo | 4 | 60.00 % | +20.00 pp (+50 %) | not reported | not reported | — |')
    expect(markdown).toContain('| 1 | 1 | goal | 5m | 1m | 2m | 5m | not reached | 40.00 % (20/50) |')
    expect(svg.match(/<polyline /g)).toHaveLength(2)
    expect(svg).toContain('4 agents')
  })

  it('shows tokens and dollars per size and per run, and dollars per point of pass rate', () => {
    const one = points([
      [0, 0],
      [300, 20]
    ])
    const spend = {
      inputTokens: 1_200_000,
      outputTokens: 30_000,
      cacheReadTokens: 1_000_000,
      cacheWriteTokens: 0,
      usd: 8,
      estimated: true,
      runs: 12
    }
    const { markdown } = renderReport({
      config: { ...config, agents: [1], budgetUsd: 20 },
      runs: [{ summary: { ...summary(1, 20, one), spend, stoppedBy: 'spend' }, points: one }]
    })
    expect(markdown).toContain('budget 20m and $20 per swarm')
    // 40 % pass rate for $8: $0.20 a point
    expect(markdown).toContain('| demo | 1 | 40.00 % | — | 1,200,000 / 30,000 | $8.00 (est.) | $0.20 |')
    expect(markdown).toMatch(/\| 1 \| 1 \| spend \| .* \| 1,200,000 \/ 30,000 \| \$8\.00 \(est\.\) \| \$0\.20 \|/)
  })

  it('with repeats, the final pass rate of a size is the mean of its runs, each run listed and drawn', () => {
    const a = points([
      [0, 0],
      [100, 20]
    ])
    const b = points([
      [0, 0],
      [120, 30]
    ])
    const c = points([
      [0, 0],
      [50, 40]
    ])
    const runs = [
      { summary: summary(1, 20, a), points: a },
      { summary: { ...summary(1, 30, b), repeat: 2 }, points: b },
      { summary: summary(4, 40, c), points: c }
    ]
    const { markdown, svg } = renderReport({ config: { ...config, repeat: 2 }, runs })
    expect(markdown).toContain('| demo | 1 | 50.00 % (40.0, 60.0) | — |')
    expect(markdown).toContain('| demo | 4 | 80.00 % | +30.00 pp (+60 %) |')
    expect(markdown).toMatch(/^\| 1 \| 2 \| goal \|/m)
    expect(svg.match(/<polyline /g)).toHaveLength(3)
    expect(svg).toContain('<title>1 agent run 2</title>')
    expect(svg).toMatch(/stroke-dasharray="5,3" points=[^>]*><title>1 agent run 2<\/title>/)
  })
})
