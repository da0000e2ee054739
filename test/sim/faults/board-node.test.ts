import { describe, expect, it } from 'vitest'
import { overlaps, overlapsFor } from '../../../src/core/board/claim-overlaps.js'
import type { ClaimNotice, ClaimVerdict } from '../../../src/core/board/claim-protocol.js'
import { claimOutcome } from '../../../src/core/board/settle.js'
import { FailedPreconditionError } from '../../../src/core/errors.js'
import type { SimBoardNode } from '../../../src/sim/faults/board-node.js'
import { addTasks, createSwarm, holderTable } from './board-node-swarm.js'

const NET = { minLatencyMs: 5, maxLatencyMs: 40, jitterMs: 5 }

/** Claims through the node's claim protocol; the answer comes after the settle window. */
function claim(
  node: SimBoardNode,
  task: string,
  scope: string[] = []
): { epoch: number; verdict: () => ClaimVerdict | undefined; notices: ClaimNotice[] } {
  let verdict: ClaimVerdict | undefined
  const notices: ClaimNotice[] = []
  node.listen({
    verdict: v => {
      if (v.task === task) verdict = v
    },
    notice: n => {
      if (n.task === task) notices.push(n)
    }
  })
  const ticket = node.claim(task, scope)
  return { epoch: ticket.epoch, verdict: () => verdict, notices }
}

describe('lease expiry and takeover, simulated', () => {
  it('after the holder dies, another agent takes over at epoch + 1 with the hand-off; the restarted holder learns it lost', () => {
    const { network, nodes } = createSwarm(11, 5, NET, { heartbeatMs: 1_000, leaseMs: 3_000, settle: { minMs: 0, defaultMs: 300 } })
    const [zoe, amy, bob, cat] = nodes
    const [task] = addTasks(zoe, 1, () => ['src/parser/**'])
    network.run(2_000)

    // zoe holds it first and hands it off with notes
    const z = claim(zoe, task)
    network.run(network.now + zoe.settle.windowMs())
    expect(z.verdict()?.outcome).toBe('HELD')
    zoe.release(task, 'lexer done; grammar next', 'agency/parser/zoe')
    network.run(network.now + 500)

    const a = claim(amy, task)
    expect(a.verdict()).toBeUndefined() // not before the settle window
    network.run(network.now + amy.settle.windowMs())
    expect(a.verdict()).toMatchObject({
      outcome: 'HELD',
      task,
      epoch: 2,
      winner: amy.name,
      handoff: 'lexer done; grammar next',
      branch: 'agency/parser/zoe'
    })

    amy.crash()
    network.run(network.now + 1_000)
    expect(bob.board.task(task, bob.now)?.state).toBe('claimed')
    expect(() => bob.board.checkClaimable(task, bob.name, bob.now)).toThrow(FailedPreconditionError)
    network.run(network.now + 3_000)
    // on every live node, amy's lease ran out on its own clock
    for (const n of [zoe, bob, cat]) expect(n.board.task(task, n.now)).toMatchObject({ state: 'expired', holder: 'agent-0001' })

    const plan = bob.board.checkClaimable(task, bob.name, bob.now)
    expect(plan).toMatchObject({
      epoch: 3,
      takeover: { previousHolder: amy.name, previousEpoch: 2, expired: true, note: 'lexer done; grammar next', branch: 'agency/parser/zoe' }
    })
    const b = claim(bob, task)
    network.run(network.now + bob.settle.windowMs())
    expect(b.verdict()).toMatchObject({ outcome: 'HELD', task, epoch: 3 })
    expect(cat.board.task(task, cat.now)).toMatchObject({
      state: 'claimed',
      holder: bob.name,
      epoch: 3,
      handoff: { note: 'lexer done; grammar next' }
    })

    // amy restarts: before syncing it still thinks it holds the task; after, it is told it lost
    amy.restart()
    expect(claimOutcome(amy.board, task, amy.name, 2).outcome).toBe('HELD')
    expect(a.notices).toEqual([])
    amy.requestSync(cat.name)
    network.run(network.now + 1_000)
    expect(claimOutcome(amy.board, task, amy.name, 2)).toEqual({ outcome: 'LOST', task, epoch: 2, winner: bob.name, reason: 'superseded' })
    expect(a.notices).toEqual([{ type: 'claim_superseded', task, epoch: 2, reason: 'superseded', winner: bob.name }])
    expect(amy.board.heldBy(amy.name)).toEqual([])
    for (const n of nodes) expect(holderTable(n)).toEqual({ [task]: `${bob.name}@3` })
  })
})

describe('partition, simulated', () => {
  it('both sides claim the same task; after healing every node shows one holder and the loser is told', () => {
    const { network, nodes } = createSwarm(21, 6, NET, {
      heartbeatMs: 1_000,
      leaseMs: 10_000,
      syncEveryMs: 500,
      settle: { minMs: 0, defaultMs: 300 }
    })
    const [task] = addTasks(nodes[0], 1)
    network.run(2_000)
    const left = nodes.slice(0, 3)
    const right = nodes.slice(3)
    network.partition([left.map(n => n.name), right.map(n => n.name)])

    const l = claim(left[1], task)
    const r = claim(right[2], task)
    network.run(network.now + 1_000)
    // each side settles on its own claimant
    expect(l.verdict()?.outcome).toBe('HELD')
    expect(r.verdict()?.outcome).toBe('HELD')
    for (const n of left) expect(n.board.holder(task)?.holder).toBe(left[1].name)
    for (const n of right) expect(n.board.holder(task)?.holder).toBe(right[2].name)

    network.heal()
    network.run(network.now + 5_000) // anti-entropy repairs what gossip missed
    const table = holderTable(nodes[0])
    for (const n of nodes) expect(holderTable(n)).toEqual(table)
    const winner = table[task].split('@')[0]
    const [loser, lost, won] = winner === left[1].name ? [right[2], r, l] : [left[1], l, r]
    // the loser is told, and its claim is released so it can never come back as the holder
    expect(lost.notices).toEqual([{ type: 'claim_lost', task, epoch: 1, reason: 'outbid', winner }])
    expect(won.notices).toEqual([])
    for (const n of nodes) expect(n.board.claimStatus(task, loser.name, 1)).toBe('released')
    expect(loser.board.heldBy(loser.name)).toEqual([])
  })

  it('lost gossip is repaired by anti-entropy: every node ends with the same entries and holders', () => {
    const { network, nodes, rng } = createSwarm(
      31,
      30,
      { ...NET, loss: 0.1 },
      { heartbeatMs: 1_000, leaseMs: 60_000, syncEveryMs: 300, settle: { minMs: 0, defaultMs: 300 } }
    )
    const ids = addTasks(nodes[0], 10)
    network.run(3_000)
    for (const n of nodes) expect(n.board.tasks(n.now)).toHaveLength(10)
    for (const n of nodes.slice(0, 20)) {
      const task = rng.pick(ids)
      if (n.board.task(task, n.now)?.state === 'open') claim(n, task)
    }
    network.run(network.now + 10_000)
    expect(network.stats.lost).toBeGreaterThan(0)
    const size = nodes[0].board.size
    const table = holderTable(nodes[0])
    expect(Object.keys(table).length).toBeGreaterThan(0)
    for (const n of nodes) {
      expect(n.board.size).toBe(size)
      expect(holderTable(n)).toEqual(table)
    }
  })
})

describe('overlap, simulated', () => {
  it('claims with overlapping globs show up on both holders; disjoint claims raise nothing', () => {
    const { network, nodes } = createSwarm(41, 4, NET, { heartbeatMs: 1_000, leaseMs: 10_000, settle: { minMs: 0, defaultMs: 300 } })
    const [amy, bob, cat, dan] = nodes
    const [core, board, docs] = addTasks(amy, 3)
    network.run(2_000)
    claim(amy, core, ['src/core/**'])
    claim(bob, board, ['src/core/board/*.ts'])
    claim(cat, docs, ['docs/**'])
    network.run(network.now + 1_000)

    for (const n of nodes) {
      expect(overlaps(n.board, n.now).map(o => [o.a.holder, o.b.holder, o.globs])).toEqual([
        [amy.name, bob.name, [['src/core/**', 'src/core/board/*.ts']]]
      ])
    }
    expect(overlapsFor(amy.board, amy.board.holder(core)!, amy.now).map(o => o.a.holder)).toEqual([bob.name])
    expect(overlapsFor(bob.board, bob.board.holder(board)!, bob.now).map(o => o.a.holder)).toEqual([amy.name])
    expect(overlapsFor(cat.board, cat.board.holder(docs)!, cat.now)).toEqual([])
    expect(dan.board.liveClaims(dan.now)).toHaveLength(3)
  })
})
