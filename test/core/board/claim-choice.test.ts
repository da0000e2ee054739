import { describe, expect, it } from 'vitest'
import { Board } from '../../../src/core/board/board.js'
import { ClaimProtocol } from '../../../src/core/board/claim-protocol.js'
import { RecentPeerClaims, nextChoices, pendingTasks, preferenceOrder, readyChoice, rendezvousScore } from '../../../src/core/board/claim-choice.js'
import { EntryWriter } from './helpers.js'

const ME = 'me'
const WINDOW = 500

function boardWith (ids: string[], opts: { priority?: (id: string) => number, liveness?: (peer: string) => boolean } = {}): { board: Board, w: EntryWriter } {
  const w = new EntryWriter()
  const live = opts.liveness
  const board = new Board(live === undefined ? {} : { liveness: { isLive: p => live(p) } })
  for (const id of ids) board.apply(w.task('planner', { id, priority: opts.priority?.(id) ?? 0 }))
  return { board, w }
}

const ids = (n: number, prefix = 't'): string[] => Array.from({ length: n }, (_, i) => `${prefix}${i}`)

describe('claim --next: which ready task an agent prefers', () => {
  it('ranks higher priorities first, whatever the hash says', () => {
    const { board } = boardWith(ids(6), { priority: id => id === 't4' ? 5 : id === 't1' ? 3 : 0 })
    for (const agent of ['ann', 'bob', 'cy']) {
      const order = preferenceOrder(agent, board.ready(0)).map(t => t.id)
      expect(order.slice(0, 2)).toEqual(['t4', 't1'])
      expect(order.slice(2).sort()).toEqual(['t0', 't2', 't3', 't5'])
    }
  })

  it('spreads agents over equal tasks: 64 agents have many distinct first choices, where taking the first ready task gives one', () => {
    const { board } = boardWith(ids(64))
    const ready = board.ready(0)
    const agents = ids(64, '12D3KooWagent')
    const first = new Set(agents.map(a => preferenceOrder(a, ready)[0].id))
    const greedy = new Set(agents.map(() => ready[0].id))
    expect(greedy.size).toBe(1)
    // A random assignment of 64 to 64 gives about 40 distinct choices.
    expect(first.size).toBeGreaterThan(30)
  })

  it('is deterministic, and a task leaving the list keeps the order of the others', () => {
    const { board } = boardWith(ids(10))
    const ready = board.ready(0)
    const order = preferenceOrder('ann', ready).map(t => t.id)
    expect(preferenceOrder('ann', [...ready].reverse()).map(t => t.id)).toEqual(order)
    const without = preferenceOrder('ann', ready.filter(t => t.id !== order[0])).map(t => t.id)
    expect(without).toEqual(order.slice(1))
    expect(rendezvousScore('ann', 't1')).toBe(rendezvousScore('ann', 't1'))
    expect(rendezvousScore('ann', 't1')).not.toBe(rendezvousScore('ann', 't2'))
  })

  it('skips the tasks already tried by this call', () => {
    const { board } = boardWith(ids(4))
    const choice = { ready: board.ready(0), pending: [] }
    const all = nextChoices(choice, ME).map(t => t.id)
    expect(nextChoices(choice, ME, new Set([all[0], all[2]])).map(t => t.id)).toEqual([all[1], all[3]])
  })
})

describe('pending: tasks a peer\'s claim is settling on', () => {
  it('a peer whose lease this daemon has not heard yet: its fresh claim is not a takeover chance, but pending until its window has passed', () => {
    // amy is not live here (no heartbeat yet): the board calls her task expired, so ready.
    const { board, w } = boardWith(['parser', 'lexer'], { liveness: p => p === ME })
    const recent = new RecentPeerClaims()
    board.apply(w.claim('amy', 'parser', 1))
    recent.record('parser', 'amy', 1, 1000)
    expect(board.ready(1000).map(t => t.id)).toEqual(['lexer', 'parser'])
    const during = readyChoice(board, ME, 1000 + WINDOW - 1, recent, WINDOW)
    expect(during.ready.map(t => t.id)).toEqual(['lexer'])
    expect(during.pending).toEqual([{ task: 'parser', peer: 'amy', epoch: 1, settlesAt: 1000 + WINDOW }])
    const after = readyChoice(board, ME, 1000 + WINDOW, recent, WINDOW)
    expect(after.pending).toEqual([])
    expect(after.ready.map(t => t.id)).toEqual(['lexer', 'parser'])
  })

  it('shows the peer that holds the task by the holder rule, not a claim it beat', () => {
    const { board, w } = boardWith(['parser'])
    const recent = new RecentPeerClaims()
    board.apply(w.claim('bob', 'parser', 1, {}, 5))
    board.apply(w.claim('amy', 'parser', 1, {}, 4))
    recent.record('parser', 'bob', 1, 10)
    expect(pendingTasks(board, ME, 20, recent, WINDOW)).toEqual([])
    recent.record('parser', 'amy', 1, 15)
    expect(pendingTasks(board, ME, 20, recent, WINDOW)).toEqual([{ task: 'parser', peer: 'amy', epoch: 1, settlesAt: 15 + WINDOW }])
  })

  it('leaves out a task whose dependencies are not done, and a done task', () => {
    const w = new EntryWriter()
    const board = new Board()
    board.apply(w.task('planner', { id: 'base' }))
    board.apply(w.task('planner', { id: 'top', deps: ['base'] }))
    const recent = new RecentPeerClaims()
    board.apply(w.claim('amy', 'top', 1))
    recent.record('top', 'amy', 1, 0)
    board.apply(w.claim('bob', 'base', 1))
    recent.record('base', 'bob', 1, 0)
    expect(pendingTasks(board, ME, 10, recent, WINDOW).map(p => p.task)).toEqual(['base'])
    board.apply(w.done('bob', 'base', 1))
    expect(pendingTasks(board, ME, 10, recent, WINDOW).map(p => p.task)).toEqual(['top'])
  })

  it('forgets claims older than it keeps', () => {
    const recent = new RecentPeerClaims(1000)
    recent.record('a', 'amy', 1, 0)
    recent.record('b', 'amy', 1, 2000)
    expect(recent.receivedAt('a', 'amy', 1)).toBeUndefined()
    expect(recent.receivedAt('b', 'amy', 1)).toBe(2000)
    expect(recent.size).toBe(1)
  })
})

describe('the claim protocol keeps what the choice needs', () => {
  it('records when peers\' claims arrive (not its own), and names the claim it is settling on or holds', () => {
    const w = new EntryWriter()
    const p = new ClaimProtocol({ me: ME, startedAt: 0, fixedSettleMs: WINDOW })
    for (const id of ['a', 'b', 'c']) p.apply(w.task('planner', { id }), 0)
    p.apply(w.claim('amy', 'a', 1), 100)
    expect(p.readyChoice(200)).toMatchObject({ ready: [{ id: 'b' }, { id: 'c' }], pending: [{ task: 'a', peer: 'amy' }] })
    expect(p.current()).toBeUndefined()
    const choice = p.nextChoices(200)[0].id
    const ticket = p.claim(choice, [], 200)
    for (const a of ticket.output.append) p.apply(w.entry(ME, a.kind, a.body), 200)
    expect(p.recent.receivedAt(choice, ME, 1)).toBeUndefined()
    expect(p.current()).toEqual({ task: choice, settling: true })
    p.tick(200 + WINDOW)
    expect(p.current()).toEqual({ task: choice, settling: false })
    expect(p.readyChoice(200 + WINDOW).pending).toEqual([])
  })

  it('puts a task this daemon released last, so that a peer takes it first', () => {
    const w = new EntryWriter()
    const p = new ClaimProtocol({ me: ME, startedAt: 0, fixedSettleMs: WINDOW })
    for (const id of ['a', 'b', 'c']) p.apply(w.task('planner', { id }), 0)
    const first = p.nextChoices(0)[0].id
    p.apply(w.claim(ME, first, 1), 0)
    p.apply(w.release(ME, first, 1, { note: 'stuck' }), 0)
    const order = p.nextChoices(0).map(t => t.id)
    expect(order).toHaveLength(3)
    expect(order.at(-1)).toBe(first)
  })
})
