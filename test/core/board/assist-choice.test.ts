// Assists, in the core: which held task an idle agent helps (the critical path
// first, then the longest held, then spread by a rendezvous hash), the
// threshold and budget that gate it, approach dedupe, who may assist, and the
// rule that lets the first passing integration of an assistant finish a task.
import { describe, expect, it } from 'vitest'
import { Finding } from '../../../src/gen/agency/v1/log.js'
import { Board } from '../../../src/core/board/board.js'
import { AssistBook, APPROACH_TAG, ASSIST_END_TAG, taskTag } from '../../../src/core/board/assist-book.js'
import {
  ASSIST_DEFAULTS,
  assistCandidates,
  checkApproach,
  checkAssistTask,
  chooseAssist,
  dependentChains,
  sameApproach,
  type AssistInput
} from '../../../src/core/board/assist-choice.js'
import { assistBudgetNow, assistPlacesLeft, freeAgentCount } from '../../../src/core/board/assist-spare.js'
import { EntryWriter } from './helpers.js'

const T0 = 1_700_000_000_000
const MIN = 60_000

/** A board with tasks a <- b <- c (c needs b needs a) and x, y standalone; holders as given. */
function boardWith(holders: Record<string, string>): { board: Board; w: EntryWriter } {
  const w = new EntryWriter()
  const board = new Board()
  board.apply(w.goal('p', 'build it'))
  board.apply(w.task('p', { id: 'a' }))
  board.apply(w.task('p', { id: 'b', deps: ['a'] }))
  board.apply(w.task('p', { id: 'c', deps: ['b'] }))
  board.apply(w.task('p', { id: 'x' }))
  board.apply(w.task('p', { id: 'y' }))
  for (const [task, holder] of Object.entries(holders)) board.apply(w.claim(holder, task, 1))
  return { board, w }
}

let findingSeq = 0
function finding(book: AssistBook, author: string, f: Partial<Finding>, lamport = 1000 + findingSeq): string {
  const id = `f${++findingSeq}`
  book.add({ id, author, seq: findingSeq, lamport, time: T0 + lamport }, Finding.fromPartial(f))
  return id
}

function announce(book: AssistBook, author: string, task: string, text: string): string {
  return finding(book, author, { kind: 'decision', text, tags: [APPROACH_TAG, taskTag(task)] })
}

function input(board: Board, book: AssistBook, me: string, over: Partial<AssistInput> = {}): AssistInput {
  return { board, book, me, now: 0, wallNow: T0 + 60 * MIN, isLive: () => true, policy: { budget: 2, floorMs: 10 * MIN }, ...over }
}

describe('choosing the task to assist', () => {
  it('takes the held task with the longest chain of not-done dependents', () => {
    const { board } = boardWith({ a: 'h1', x: 'h2' })
    expect(dependentChains(board.tasks(0)).get('a')).toBe(2)
    expect(dependentChains(board.tasks(0)).get('x')).toBe(0)
    expect(chooseAssist(input(board, new AssistBook(), 'me'))?.task).toBe('a')
  })

  it('among equal chains takes the one held longest, and spreads agents over equal ones by the rendezvous hash', () => {
    const { board, w } = boardWith({ x: 'h1' })
    board.apply(w.claim('h2', 'y', 1, {}, 500)) // claimed later: held for less time
    expect(chooseAssist(input(board, new AssistBook(), 'me'))?.task).toBe('x')

    const same = boardWith({})
    same.board.apply(same.w.claim('h1', 'x', 1, {}, 100))
    same.board.apply(same.w.claim('h2', 'y', 1, {}, 100))
    const picks = new Set(Array.from({ length: 16 }, (_, i) => chooseAssist(input(same.board, new AssistBook(), `agent-${i}`))?.task))
    expect(picks).toEqual(new Set(['x', 'y']))
  })

  it('waits until a task is held for the floor; how long done tasks took does not move it', () => {
    const { board, w } = boardWith({})
    // Two tasks done, after 20 and 40 minutes: no longer a threshold of their median.
    board.apply(w.entry('h1', 'claim', { task: 'x', scope: [], epoch: 1, takeoverOf: '', branch: '', handoff: '' }))
    const claimX = w.entry('h1', 'done', { task: 'x', epoch: 1, commit: 'cx', paths: [] })
    board.apply({ ...claimX, time: board.claimTime('x')! + 20 * MIN })
    board.apply(w.claim('h2', 'y', 1))
    const doneY = w.done('h2', 'y', 1)
    board.apply({ ...doneY, time: board.claimTime('y')! + 40 * MIN })

    board.apply(w.claim('h3', 'a', 1))
    const since = board.claimTime('a')!
    const book = new AssistBook()
    expect(chooseAssist(input(board, book, 'me', { wallNow: since + 9 * MIN }))).toBeUndefined()
    const [c] = assistCandidates(input(board, book, 'me', { wallNow: since + 9 * MIN }))
    expect(c.refusal).toContain('held for 9 min')
    expect(c.thresholdMs).toBe(10 * MIN)
    expect(chooseAssist(input(board, book, 'me', { wallNow: since + 11 * MIN }))?.task).toBe('a')
  })

  it('by default a task may be assisted as soon as it is held', () => {
    expect(ASSIST_DEFAULTS.floorMs).toBe(0)
    const { board, w } = boardWith({})
    board.apply(w.claim('h1', 'a', 1))
    const since = board.claimTime('a')!
    const policy = { ...ASSIST_DEFAULTS }
    expect(chooseAssist(input(board, new AssistBook(), 'me', { wallNow: since, policy }))?.task).toBe('a')
  })

  it('keeps to the budget of live assistants per task; ended and dead assists do not count', () => {
    const { board } = boardWith({ a: 'h1', x: 'h2' })
    const book = new AssistBook()
    announce(book, 'b1', 'a', 'memoise the parser')
    const second = announce(book, 'b2', 'a', 'rewrite it as a state machine')
    expect(chooseAssist(input(board, book, 'me'))?.task).toBe('x') // a has 2 of 2
    expect(() => checkAssistTask(input(board, book, 'me'), 'a')).toThrow(/2 assistant\(s\) already, the budget per task \(2\)/)
    expect(chooseAssist(input(board, book, 'me', { isLive: p => p !== 'b1' }))?.task).toBe('a')
    finding(book, 'b2', { kind: 'failure', text: 'too slow', tags: [APPROACH_TAG, taskTag('a'), ASSIST_END_TAG], refs: [second] })
    expect(chooseAssist(input(board, book, 'me'))?.task).toBe('a')
  })

  it('opens spare places beyond the budget only while more agents are free than places are left', () => {
    const { board } = boardWith({ a: 'h1', x: 'h2' })
    const book = new AssistBook()
    announce(book, 'b1', 'a', 'memoise the parser')
    announce(book, 'b2', 'a', 'rewrite it as a state machine')
    announce(book, 'b3', 'x', 'split the module in two')
    const policy = { budget: 2, floorMs: 10 * MIN, spare: 2 }
    // a is full, x has one place left: one free agent (me) takes x, as without spare places
    const scarce = input(board, book, 'me', { policy, freeAgents: 1 })
    expect(chooseAssist(scarce)?.task).toBe('x')
    expect(assistCandidates(scarce).find(c => c.task === 'a')?.refusal).toMatch(
      /2 assistant\(s\) already, the budget per task \(2; 4 while more agents are free than places are left/
    )
    // two free agents for one place: every task has 2 more; a (the longer chain) comes first again
    const many = input(board, book, 'me', { policy, freeAgents: 2 })
    expect(chooseAssist(many)?.task).toBe('a')
    expect(assistCandidates(many).map(c => c.budget)).toEqual([4, 4])
    announce(book, 'b4', 'a', 'parse it lazily')
    announce(book, 'b5', 'a', 'generate the parser')
    expect(assistCandidates(input(board, book, 'me', { policy, freeAgents: 9 })).find(c => c.task === 'a')?.refusal).toMatch(
      /4 assistant\(s\) already, the budget per task \(2, 4 while more agents are free/
    )
    // spare 0, or the free agents unknown: the budget alone
    expect(chooseAssist(input(board, book, 'me', { policy: { ...policy, spare: 0 }, freeAgents: 9 }))?.task).toBe('x')
    expect(chooseAssist(input(board, book, 'me', { policy }))?.task).toBe('x')
    expect(ASSIST_DEFAULTS.spare).toBe(2)
  })

  it('counts free agents (not at work, not assisting) and the places left', () => {
    expect(freeAgentCount(['me', 'h1', 'h2', 'b1', 'idle'], new Set(['h1', 'h2']), new Set(['b1']))).toBe(2)
    expect(assistPlacesLeft(2, [0, 1, 2, 3])).toBe(3)
    expect(assistBudgetNow(2, 2, 4, 3)).toBe(4)
    expect(assistBudgetNow(2, 2, 3, 3)).toBe(2)
    expect(assistBudgetNow(2, 2, undefined, 0)).toBe(2)
    const book = new AssistBook()
    const ended = announce(book, 'b1', 'a', 'memoise the parser')
    announce(book, 'b2', 'x', 'split the module')
    announce(book, 'b3', 'y', 'inline it')
    finding(book, 'b1', { kind: 'failure', text: 'no', tags: [APPROACH_TAG, taskTag('a'), ASSIST_END_TAG], refs: [ended] })
    expect(book.assistingAgents(task => task === 'y')).toEqual(new Set(['b2']))
  })
})

describe('who may assist, and with what approach', () => {
  it('refuses an agent that holds a task or already assists one, an unheld, unknown or done task', () => {
    const { board, w } = boardWith({ a: 'h1', x: 'me' })
    const book = new AssistBook()
    expect(() => chooseAssist(input(board, book, 'me'))).toThrow(/you hold x/)
    expect(() => checkAssistTask(input(board, book, 'other'), 'nope')).toThrow(/no task "nope"/)
    expect(() => checkAssistTask(input(board, book, 'other'), 'y')).toThrow(/not held by a live agent \(it is open\): claim it instead/)
    announce(book, 'other', 'a', 'cache the lookups')
    expect(() => checkAssistTask(input(board, book, 'other'), 'x')).toThrow(/you already assist a/)
    board.apply(w.done('h1', 'a', 1))
    // a is done: that assist is over, and a cannot be assisted
    expect(checkAssistTask(input(board, book, 'other'), 'x').task).toBe('x')
    expect(() => checkAssistTask(input(board, book, 'third'), 'a')).toThrow(/task a is done/)
  })

  it('refuses an approach announced on the task already, in progress or tried; accepts a different one', () => {
    const { board } = boardWith({ a: 'h1' })
    const book = new AssistBook()
    const first = announce(book, 'b1', 'a', 'Use a trie for the prefix lookups.')
    finding(book, 'b1', {
      kind: 'failure',
      text: 'tries used too much memory',
      tags: [APPROACH_TAG, taskTag('a'), ASSIST_END_TAG],
      refs: [first]
    })
    const c = checkAssistTask(input(board, book, 'me'), 'a')
    expect(c.approaches).toMatchObject([{ author: 'b1', ended: true, learned: 'tries used too much memory' }])
    expect(() => checkApproach(c, 'use a TRIE for the prefix lookups')).toThrow(/announced on a already by b1 \(tried/)
    expect(() => checkApproach(c, '  ')).toThrow(/name your approach/)
    expect(checkApproach(c, 'sort the keys and binary-search them')).toBe('sort the keys and binary-search them')
  })

  it('judges two approaches the same by their words, case and punctuation aside', () => {
    expect(sameApproach('Memoise the parser!', 'memoise, the parser')).toBe(true)
    expect(sameApproach('memoise the parser', 'memoise the lexer')).toBe(false)
    expect(sameApproach('use a trie', 'use a hash map')).toBe(false)
  })

  it('folds approach findings into the same views whatever their order', () => {
    const make = (order: number[]): AssistBook => {
      const book = new AssistBook()
      const items = [
        { id: 'e1', author: 'b1', lamport: 1, f: { text: 'one', tags: [APPROACH_TAG, taskTag('a')] } },
        { id: 'e2', author: 'b1', lamport: 2, f: { text: 'learned', tags: [APPROACH_TAG, taskTag('a'), ASSIST_END_TAG], refs: ['e1'] } },
        { id: 'e3', author: 'b2', lamport: 3, f: { text: 'two', tags: [APPROACH_TAG, taskTag('a')] } },
        { id: 'e4', author: 'b1', lamport: 4, f: { text: 'three', tags: [APPROACH_TAG, taskTag('x')] } }
      ]
      for (const i of order) {
        const it = items[i]
        book.add({ id: it.id, author: it.author, seq: it.lamport, lamport: it.lamport, time: it.lamport }, Finding.fromPartial(it.f))
      }
      return book
    }
    const views = (b: AssistBook): unknown => [b.approaches('a'), b.active('a'), b.current('b1', () => false), b.current('b2', () => false)]
    const base = views(make([0, 1, 2, 3]))
    for (const order of [
      [3, 2, 1, 0],
      [1, 3, 0, 2],
      [2, 0, 3, 1]
    ])
      expect(views(make(order))).toEqual(base)
    expect(
      make([0, 1, 2, 3])
        .active('a')
        .map(a => a.author)
    ).toEqual(['b2'])
  })
})

describe('a task done by its assistant', () => {
  it('counts the done of an agent whose own merged integration landed the task at that epoch, in any order', () => {
    const entries = (w: EntryWriter): ReturnType<EntryWriter['entry']>[] => [
      w.task('p', { id: 'a' }),
      w.claim('holder', 'a', 1),
      w.integration('helper', 'a', ['src/a.ts']),
      w.done('helper', 'a', 1)
    ]
    const forward = new Board()
    for (const e of entries(new EntryWriter())) forward.apply(e)
    expect(forward.task('a', 0)).toMatchObject({ state: 'done', holder: 'holder', doneBy: 'helper' })

    const backward = new Board()
    for (const e of entries(new EntryWriter()).reverse()) backward.apply(e)
    expect(backward.task('a', 0)).toEqual(forward.task('a', 0))
  })

  it('ignores a done by a non-holder without a landed integration at that epoch', () => {
    const w = new EntryWriter()
    const board = new Board()
    board.apply(w.task('p', { id: 'a' }))
    board.apply(w.claim('holder', 'a', 1))
    board.apply(w.integration('helper', 'a', [], 'failed'))
    board.apply(w.done('helper', 'a', 1))
    expect(board.task('a', 0)).toMatchObject({ state: 'claimed', holder: 'holder' })
  })
})
