// The pieces the experiment's numbers come from, on inputs made by hand:
// the shared record's work, duplicate work and repeated failures (the
// simulator's definitions), tokens in harness logs, durations, JUnit corner
// cases, and the report's table.
import { describe, expect, it } from 'vitest'
import { parseDuration, formatDuration } from '../../src/experiment/duration.js'
import { tokensInHarnessLog, addTokens } from '../../src/experiment/harness-tokens.js'
import { readJUnitCases } from '../../src/experiment/junit-xml.js'
import { renderReport } from '../../src/experiment/report.js'
import type { ExperimentConfig, PassPoint, RunSummary } from '../../src/experiment/run-files.js'
import { timeTo } from '../../src/experiment/run-files.js'
import { summarizeRecord, type RecordEntry } from '../../src/experiment/swarm-record.js'

const S = 1000
let lamport = 0
const entry = (author: string, time: number, kind: string, body: Record<string, unknown>): RecordEntry =>
  ({ id: `${author}-${++lamport}`, author, lamport, time: 1_000_000 + time, kind, body })

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
      entry(author, time, 'finding', { kind: 'failure', text: `approach ${approach} fails`, paths: ['src/x.py'], tags: [`task:${task}`, `approach:${approach}`] })
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

describe('tokens in harness logs', () => {
  it('sums Claude Code stream-json results and Codex totals; a log with neither reports none', () => {
    const claude = [
      '{"type":"system","subtype":"init"}',
      '{"type":"result","subtype":"success","usage":{"input_tokens":10,"cache_creation_input_tokens":100,"cache_read_input_tokens":1000,"output_tokens":50}}',
      '[2026-01-01T00:00:00.000Z] agentd: harness exited (code 0, signal null) after 1000 ms',
      '{"type":"result","subtype":"success","usage":{"input_tokens":5,"output_tokens":7}}'
    ].join('\n')
    expect(tokensInHarnessLog(claude)).toEqual({ total: 1172, input: 1115, output: 57, runs: 2 })
    const codex = 'codex\nall done\ntokens used\n12,345\n\nlater run\ntokens used: 655\n'
    expect(tokensInHarnessLog(codex)).toEqual({ total: 13_000, input: null, output: null, runs: 2 })
    expect(tokensInHarnessLog('[sim abc] case: merged and done\n')).toBeNull()
    expect(addTokens([tokensInHarnessLog(claude), null])).toEqual({ total: 1172, input: 1115, output: 57, runs: 2 })
    expect(addTokens([tokensInHarnessLog(claude), tokensInHarnessLog(codex)])?.input).toBeNull()
    expect(addTokens([null, null])).toBeNull()
  })
})

describe('durations', () => {
  it('reads units and refuses 0, negatives and bare numbers with the fix', () => {
    expect(parseDuration('6h', '--budget')).toBe(6 * 3600_000)
    expect(parseDuration('1h30m', '--budget')).toBe(5400_000)
    expect(parseDuration('90s', '--score-every')).toBe(90_000)
    expect(() => parseDuration('0', '--budget')).toThrow(/--budget must be more than 0/)
    expect(() => parseDuration('0m', '--budget')).toThrow(/--budget must be more than 0/)
    expect(() => parseDuration('20', '--budget')).toThrow(/write it with a unit, e\.g\. 6h/)
    expect(() => parseDuration('-5m', '--budget')).toThrow(/not a duration/)
    expect(formatDuration(5400_000)).toBe('1h30m')
  })
})

describe('JUnit corner cases', () => {
  it('names cases as ProgramBench does and leaves out a case with no name', () => {
    const xml = '<testsuites><testsuite>' +
      '<testcase name="bare"/>' +
      '<testcase classname="pkg.mod"/>' +
      '<testcase classname="" name=""/>' +
      '<testsuite><testcase classname="inner" name="deep"/></testsuite>' +
      '<testcase classname="pkg.mod" name="last"/>' +
      '</testsuite></testsuites>'
    // direct cases first, then those of nested suites
    expect(readJUnitCases(xml, 'b').map(c => c.name)).toEqual(['bare', 'pkg.mod.None', 'pkg.mod.last', 'inner.deep'])
  })

  it('a namespaced root is not a JUnit document; entities are decoded in names', () => {
    expect(() => readJUnitCases('<testsuites xmlns="urn:x"><testsuite/></testsuites>', 'b')).toThrow(/not <testsuites>/)
    expect(readJUnitCases('<testsuite><testcase classname="a&amp;b" name="t[1&lt;2]"/></testsuite>', 'b')[0].name).toBe('a&b.t[1<2]')
    expect(() => readJUnitCases('<testsuites><testsuite></testsuites>', 'b')).toThrow(/Malformed/)
    expect(() => readJUnitCases('<testsuites/><testsuites/>', 'b')).toThrow(/Malformed/)
  })
})

describe('the report', () => {
  const config: ExperimentConfig = {
    task: 'demo', taskDir: '/t', cleanroom: '/t/cleanroom', agents: [1, 4], harness: 'sim', budgetSeconds: 1200, scoreEverySeconds: 20, repeat: 1,
    goal: 'g', testCommand: 'c', scoredTests: 50, branches: 2, referenceHash: 'x', referenceBuilt: true, startedAt: '2026-01-01T00:00:00.000Z'
  }
  const points = (pairs: Array<[number, number]>): PassPoint[] => pairs.map(([t, passed]) => ({ t, commit: 'c', passed, tests: 50, score: passed / 50, error: null }))
  const summary = (agents: number, passed: number, p: PassPoint[]): RunSummary => ({
    agents, repeat: 1, startedAt: '', elapsedSeconds: p.at(-1)?.t ?? 0, budgetSeconds: 1200, stoppedBy: 'goal',
    final: { score: passed / 50, passed, tests: 50, commit: 'c', error: null }, timeToSeconds: timeTo(p), agentHours: agents * 0.1,
    harnessRestarts: 0, integrations: 10, integrationAttempts: 10, findings: 12, failureFindings: 2, tasksDone: 10, tasksTotal: 10,
    workAgentSeconds: 100, duplicateAgentSeconds: 0, repeatedFailures: 0, tokens: null, scorings: 5
  })

  it('has the paper\'s table: final pass rate per swarm size and the change against 1 agent', () => {
    const one = points([[0, 0], [60, 5], [120, 12], [300, 20]])
    const four = points([[0, 0], [40, 12], [80, 30]])
    expect(timeTo(one)).toEqual({ 10: 60, 20: 120, 30: 300, 50: null })
    const { markdown, svg } = renderReport({ config, runs: [{ summary: summary(1, 20, one), points: one }, { summary: summary(4, 30, four), points: four }] })
    expect(markdown).toContain('| task | agents | final pass rate | change against 1 agent |')
    expect(markdown).toContain('| demo | 1 | 40.00 % | — |')
    expect(markdown).toContain('| demo | 4 | 60.00 % | +20.00 pp (+50 %) |')
    expect(markdown).toContain('| 1 | 1 | goal | 5m | 1m | 2m | 5m | not reached | 40.00 % (20/50) |')
    expect(svg.match(/<polyline /g)).toHaveLength(2)
    expect(svg).toContain('4 agents')
  })

  it('with repeats, the final pass rate of a size is the mean of its runs, each run listed and drawn', () => {
    const a = points([[0, 0], [100, 20]])
    const b = points([[0, 0], [120, 30]])
    const c = points([[0, 0], [50, 40]])
    const runs = [{ summary: summary(1, 20, a), points: a }, { summary: { ...summary(1, 30, b), repeat: 2 }, points: b }, { summary: summary(4, 40, c), points: c }]
    const { markdown, svg } = renderReport({ config: { ...config, repeat: 2 }, runs })
    expect(markdown).toContain('| demo | 1 | 50.00 % (40.0, 60.0) | — |')
    expect(markdown).toContain('| demo | 4 | 80.00 % | +30.00 pp (+60 %) |')
    expect(markdown).toMatch(/^\| 1 \| 2 \| goal \|/m)
    expect(svg.match(/<polyline /g)).toHaveLength(3)
    expect(svg).toContain('<title>1 agent run 2</title>')
    expect(svg).toMatch(/stroke-dasharray="5,3" points=[^>]*><title>1 agent run 2<\/title>/)
  })
})
