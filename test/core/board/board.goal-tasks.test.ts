import { describe, expect, it } from 'vitest'
import { Board } from '../../../src/core/board/board.js'
import { validateTaskId } from '../../../src/core/board/task-id.js'
import { InvalidArgumentError } from '../../../src/core/errors.js'
import { EntryWriter } from './helpers.js'

describe('goal', () => {
  it('the current goal is the change with the highest (lamport, author); history keeps every change in order', () => {
    const w = new EntryWriter()
    const first = w.goal('amy', 'build a parser', 1)
    const concurrentA = w.goal('amy', 'build a fast parser', 4)
    const concurrentB = w.goal('bob', 'build a correct parser', 4)
    const b = new Board()
    for (const e of [concurrentB, first, concurrentA]) b.apply(e)
    expect(b.goal()).toMatchObject({ text: 'build a correct parser', setBy: 'bob', testCommand: 'npm test', entryId: concurrentB.id })
    expect(b.goalHistory().map(g => g.text)).toEqual(['build a parser', 'build a fast parser', 'build a correct parser'])
  })

  it('there is no goal until one is set', () => {
    expect(new Board().goal()).toBeUndefined()
  })
})

describe('tasks', () => {
  it('concurrent adds of one id merge: the first defines it, later non-empty fields update in order', () => {
    const w = new EntryWriter()
    const amy = w.task('amy', { id: 'parser', title: 'Parser', description: 'LR', priority: 2, scope: ['src/parser/**'] }, 3)
    const bob = w.task('bob', { id: 'parser', title: 'Parse things', description: '', deps: ['lexer'], priority: 0 }, 3)
    const cat = w.task('cat', { id: 'parser', title: '', description: 'PEG', priority: 5 }, 2)
    for (const order of [
      [amy, bob, cat],
      [cat, bob, amy],
      [bob, amy, cat]
    ]) {
      const b = new Board()
      for (const e of order) b.apply(e)
      // order: cat (2), amy (3), bob (3)
      expect(b.task('parser', 0)).toMatchObject({
        id: 'parser',
        addedBy: 'cat',
        title: 'Parse things',
        description: 'LR',
        deps: ['lexer'],
        scope: ['src/parser/**'],
        priority: 2,
        state: 'open'
      })
    }
  })

  it('task ids are slugs', () => {
    for (const ok of ['parser', 'board-core', 'v2.api', 'a_b', 'x1']) expect(validateTaskId(ok)).toBe(ok)
    for (const bad of ['', 'Parser', 'a b', '-a', 'a-', 'a--b', 'a..b', '../x', 'a/b', 'x.lock', 'a'.repeat(65), 7]) {
      expect(() => validateTaskId(bad)).toThrow(InvalidArgumentError)
    }
  })

  it('filters tasks by state', () => {
    const w = new EntryWriter()
    const b = new Board()
    for (const e of [w.task('p', { id: 'a' }), w.task('p', { id: 'b' }), w.claim('amy', 'b', 1)]) b.apply(e)
    expect(b.tasks(0, 'open').map(t => t.id)).toEqual(['a'])
    expect(b.tasks(0, 'claimed').map(t => t.id)).toEqual(['b'])
    expect(b.task('missing', 0)).toBeUndefined()
  })
})
