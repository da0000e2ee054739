// The goal-only start and the stop rule, on the board core: the `plan` task
// every replica derives from the goal, the checks a plan passes before any
// task is written, and when the goal counts as met.
import { describe, expect, it } from 'vitest'
import { Board } from '../../../src/core/board/board.js'
import { PLAN_TASK_ID } from '../../../src/core/board/plan-task.js'
import { InvalidArgumentError } from '../../../src/core/errors.js'
import { TestRun } from '../../../src/gen/agency/v1/log.js'
import { EntryWriter } from './helpers.js'

const task = (
  id: string,
  deps: string[] = []
): { id: string; title: string; description: string; deps: string[]; scope: string[]; priority: number } => ({
  id,
  title: id,
  description: '',
  deps,
  scope: [`src/${id}/**`],
  priority: 0
})

describe('the plan task', () => {
  it('appears on every replica once a goal exists and no task does, whatever order the entries came in', () => {
    const w = new EntryWriter()
    const goal = w.goal('amy', 'a calculator')
    const a = new Board()
    expect(a.task(PLAN_TASK_ID, 0)).toBeUndefined()
    a.apply(goal)
    expect(a.task(PLAN_TASK_ID, 0)).toMatchObject({ id: 'plan', state: 'open', addedBy: 'amy' })
    expect(a.ready(0).map(t => t.id)).toEqual(['plan'])
    expect(a.task(PLAN_TASK_ID, 0)?.description).toContain('a calculator')
  })

  it('stays once claimed, while the planner adds tasks, until it is done; unclaimed, it goes when tasks exist', () => {
    const w = new EntryWriter()
    const goal = w.goal('amy', 'a calculator')
    const claim = w.claim('bob', PLAN_TASK_ID, 1)
    const lexer = w.task('bob', { id: 'lexer' })
    const done = w.done('bob', PLAN_TASK_ID, 1)
    for (const order of [
      [goal, claim, lexer, done],
      [done, lexer, claim, goal],
      [lexer, goal, done, claim]
    ]) {
      const b = new Board()
      for (const e of order) b.apply(e)
      expect(b.tasks(0).map(t => [t.id, t.state])).toEqual([
        ['lexer', 'open'],
        ['plan', 'done']
      ])
    }
    const byHand = new Board()
    for (const e of [goal, lexer]) byHand.apply(e)
    expect(byHand.tasks(0).map(t => t.id)).toEqual(['lexer'])
  })

  it('cannot be defined by a task entry: a peer\'s "plan" task is ignored the same way everywhere', () => {
    const w = new EntryWriter()
    const b = new Board()
    expect(b.apply(w.task('mal', { id: PLAN_TASK_ID, title: 'mine' }))).toBe(false)
    expect(b.task(PLAN_TASK_ID, 0)).toBeUndefined()
  })
})

describe('a plan is checked as one graph', () => {
  const board = (): Board => {
    const w = new EntryWriter()
    const b = new Board()
    b.apply(w.goal('amy', 'a calculator'))
    b.apply(w.task('amy', { id: 'lexer', title: 'lexer', scope: ['src/lexer/**'] }))
    return b
  }

  it('orders the tasks after their dependencies, inside the plan or on the board', () => {
    const fresh = board().checkNewTasks([task('eval', ['parser']), task('parser', ['lexer', 'ast']), task('ast')])
    expect(fresh.map(t => t.id)).toEqual(['ast', 'parser', 'eval'])
  })

  it('refuses a dependency that names no task, a cycle, a duplicate, "plan" itself and a redefinition', () => {
    const b = board()
    const refused = (tasks: ReturnType<typeof task>[]): string => {
      try {
        b.checkNewTasks(tasks)
      } catch (err) {
        expect(err).toBeInstanceOf(InvalidArgumentError)
        return (err as Error).message
      }
      throw new Error('accepted')
    }
    expect(refused([task('parser', ['lexr'])])).toMatch(/depends on lexr, which is no task/)
    expect(refused([task('a', ['c']), task('b', ['a']), task('c', ['b'])])).toMatch(/cycle: a -> c -> b -> a/)
    expect(refused([task('a'), task('a')])).toMatch(/given twice/)
    expect(refused([task(PLAN_TASK_ID)])).toMatch(/planning task/)
    expect(refused([task('x', [PLAN_TASK_ID])])).toMatch(/do not depend on "plan"/)
    expect(refused([{ ...task('lexer'), title: 'another lexer' }])).toMatch(/already exists with another definition/)
  })

  it('drops a task that is already on the board exactly as given (a retried plan)', () => {
    const b = board()
    expect(
      b.checkNewTasks([{ ...task('lexer'), title: 'lexer', scope: ['src/lexer/**'] }, task('parser', ['lexer'])]).map(t => t.id)
    ).toEqual(['parser'])
  })
})

describe('the stop rule', () => {
  const run = (w: EntryWriter, passed: number, failed: number, skipped = 0): ReturnType<EntryWriter['entry']> =>
    w.entry('amy', 'test_run', TestRun.fromPartial({ commit: 'c', passed, failed, total: passed + failed + skipped }))

  it('is met when every task is done and the latest shared run passed some and failed none, skipped or not', () => {
    const w = new EntryWriter()
    const b = new Board()
    for (const e of [w.goal('amy', 'g'), w.task('amy', { id: 't1' }), w.claim('amy', 't1', 1), run(w, 3, 0, 2)]) b.apply(e)
    expect(b.goalMet(0)).toBe(false) // green before the work is done does not count
    b.apply(w.done('amy', 't1', 1))
    expect(b.goalMet(0)).toBe(true)
    b.apply(run(w, 3, 1))
    expect(b.goalMet(0)).toBe(false)
    b.apply(run(w, 0, 0, 4))
    expect(b.goalMet(0)).toBe(false) // nothing ran
  })

  it('is not met with no goal, no task, or no test run', () => {
    const w = new EntryWriter()
    const b = new Board()
    expect(b.goalMet(0)).toBe(false)
    b.apply(w.goal('amy', 'g'))
    expect(b.goalMet(0)).toBe(false) // the plan task is open
    b.apply(w.claim('amy', PLAN_TASK_ID, 1))
    b.apply(w.done('amy', PLAN_TASK_ID, 1))
    expect(b.goalMet(0)).toBe(false) // no run on the shared branch
  })
})
