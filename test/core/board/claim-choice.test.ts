import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { Board } from '../../../src/core/board/board.js'
import { ClaimProtocol } from '../../../src/core/board/claim-protocol.js'
import {
  RecentPeerClaims,
  matchSeekers,
  nextChoices,
  pendingTasks,
  preferenceOrder,
  readyChoice,
  rendezvousScore,
  rendezvousScorer
} from '../../../src/core/board/claim-choice.js'
import { EntryWriter } from './helpers.js'

const ME = 'me'
const WINDOW = 500

function boardWith(
  ids: string[],
  opts: { priority?: (id: string) => number; liveness?: (peer: string) => boolean } = {}
): { board: Board; w: EntryWriter } {
  const w = new EntryWriter()
  const live = opts.liveness
  const board = new Board(live === undefined ? {} : { liveness: { isLive: p => live(p) } })
  for (const id of ids) board.apply(w.task('planner', { id, priority: opts.priority?.(id) ?? 0 }))
  return { board, w }
}

const ids = (n: number, prefix = 't'): string[] => Array.from({ length: n }, (_, i) => `${prefix}${i}`)

describe('claim --next: which ready task an agent prefers', () => {
  it('ranks higher priorities first, whatever the hash says', () => {
    const { board } = boardWith(ids(6), { priority: id => (id === 't4' ? 5 : id === 't1' ? 3 : 0) })
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
    const without = preferenceOrder(
      'ann',
      ready.filter(t => t.id !== order[0])
    ).map(t => t.id)
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

describe('claim --next: one matching of the agents choosing to the ready tasks', () => {
  const agentIds = (n: number): string[] => ids(n, '12D3KooWagent')
  const firstChoices = (agents: string[], choice: { ready: ReturnType<Board['ready']>; pending: [] }): string[] =>
    agents.map(
      a =>
        nextChoices(
          choice,
          a,
          new Set(),
          agents.filter(x => x !== a)
        )[0].id
    )

  it('with the same view, 64 agents over 128 tasks all have distinct first choices, where independent hashes collide', () => {
    const { board } = boardWith(ids(128))
    const choice = { ready: board.ready(0), pending: [] as [] }
    const agents = agentIds(64)
    expect(new Set(firstChoices(agents, choice)).size).toBe(64)
    const independent = new Set(agents.map(a => preferenceOrder(a, choice.ready)[0].id))
    expect(independent.size).toBeLessThan(64)
  })

  it('property: with equal views no two agents pick the same task while tasks remain, however the agents and tasks are listed', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.stringMatching(/^[a-z0-9]{1,12}$/), { minLength: 1, maxLength: 40 }),
        fc.uniqueArray(fc.stringMatching(/^[a-z0-9]{1,6}(-[a-z0-9]{1,3})?$/), { minLength: 1, maxLength: 60 }),
        fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 60, maxLength: 60 }),
        (agents, taskIds, prios) => {
          const { board } = boardWith(taskIds, { priority: id => prios[taskIds.indexOf(id)] })
          const ready = board.ready(0)
          const shuffled = { ready: [...ready].reverse(), pending: [] as [] }
          const firsts = agents.map(
            (a, i) => nextChoices(i % 2 === 0 ? { ready, pending: [] } : shuffled, a, new Set(), [...agents].reverse())[0].id
          )
          const matched = Math.min(agents.length, taskIds.length)
          // The first `matched` agents in the matching's eyes get distinct tasks: count distinct picks.
          expect(new Set(firsts).size).toBe(matched)
          // And the tasks picked are the highest-priority ones.
          const top = ready
            .slice(0, matched)
            .map(t => t.priority)
            .sort()
          const picked = [...new Set(firsts)].map(id => board.task(id, 0)?.priority ?? -1).sort()
          expect(picked).toEqual(top)
        }
      )
    )
  })

  it('property: taking out a matched pair (a claim that arrived) leaves every other pair as it was', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 30 }), fc.integer({ min: 1, max: 50 }), fc.nat(), (a, t, pick) => {
        const agents = agentIds(a)
        const { board } = boardWith(ids(t))
        const tasks = board.ready(0)
        const before = matchSeekers(agents, tasks)
        const pairs = [...before]
        const [task, agent] = pairs[pick % pairs.length]
        const after = matchSeekers(
          agents.filter(x => x !== agent),
          tasks.filter(x => x.id !== task)
        )
        expect(after).toEqual(new Map(pairs.filter(([x]) => x !== task)))
      })
    )
  })

  it('matches each agent to one task and each task to one agent, the higher priorities first', () => {
    const { board } = boardWith(ids(6), { priority: id => (id === 't4' ? 5 : id === 't1' ? 3 : 0) })
    const m = matchSeekers(['ann', 'bob'], board.ready(0))
    expect([...m.keys()].sort()).toEqual(['t1', 't4'])
    expect(new Set(m.values())).toEqual(new Set(['ann', 'bob']))
    expect(matchSeekers(['bob', 'ann', 'bob'], [...board.ready(0)].reverse())).toEqual(m)
  })

  it('gives a task to no agent that handed it back; that agent takes its own match, the others after', () => {
    const { board, w } = boardWith(['a', 'b', 'c'])
    board.apply(w.claim('ann', 'a', 1))
    board.apply(w.release('ann', 'a', 1, { note: 'stuck' }))
    for (const agents of [['ann'], ['ann', 'bob'], ['ann', 'bob', 'cy']]) {
      expect(matchSeekers(agents, board.ready(0)).get('a')).not.toBe('ann')
    }
    expect(matchSeekers(['ann'], board.ready(0)).get('a')).toBeUndefined()
  })

  it('after its match: the tasks matched to nobody, then those matched to other agents', () => {
    const { board } = boardWith(ids(5))
    const choice = { ready: board.ready(0), pending: [] }
    const m = matchSeekers(['ann', 'bob'], choice.ready)
    const order = nextChoices(choice, 'ann', new Set(), ['bob']).map(t => t.id)
    expect(order[0]).toBe([...m].find(([, a]) => a === 'ann')?.[0])
    expect(order.at(-1)).toBe([...m].find(([, a]) => a === 'bob')?.[0])
    expect(order.slice(1, 4).sort()).toEqual(
      ids(5)
        .filter(t => !m.has(t))
        .sort()
    )
  })

  it('scores the same pair alike whether one at a time or per agent', () => {
    const score = rendezvousScorer('ann')
    for (const t of ids(20)) expect(score(t)).toBe(rendezvousScore('ann', t))
  })
})

describe("pending: tasks a peer's claim is settling on", () => {
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
  it("records when peers' claims arrive (not its own), and names the claim it is settling on or holds", () => {
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

  it('counts as choosing itself and the live peers holding nothing; a peer whose claim arrived is out', () => {
    const w = new EntryWriter()
    const p = new ClaimProtocol({ me: ME, startedAt: 0, fixedSettleMs: WINDOW, leaseMs: 10_000 })
    for (const id of ['a', 'b', 'c']) p.apply(w.task('planner', { id }), 0)
    p.heard('amy', 0)
    p.heard('bob', 0)
    expect(p.seekers(100).sort()).toEqual(['amy', 'bob', ME].sort())
    const before = matchSeekers([ME, 'amy', 'bob'], p.board.ready(100))
    const amys = [...before].find(([, a]) => a === 'amy')?.[0] as string
    p.apply(w.claim('amy', amys, 1), 100)
    expect(p.seekers(200).sort()).toEqual(['bob', ME].sort())
    // Mine is what the full matching gave me, before and after amy's claim came in.
    expect(p.nextChoices(200)[0].id).toBe([...before].find(([, a]) => a === ME)?.[0])
    // A peer whose lease lapsed is not choosing.
    expect(p.seekers(100_000)).toEqual([ME])
  })
})
