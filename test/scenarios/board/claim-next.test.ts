// Eight daemons in one process, meshed over the libp2p memory transport. One
// claims a task and, while its claim settles, every other daemon shows that
// task as pending (with the claimant) instead of ready. Then all eight call
// claim --next at the same moment: each daemon claims its own match among the
// agents choosing (the same on every daemon with the same view), so each
// writes one claim and every agent ends up holding its own task.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { multiaddr } from '@multiformats/multiaddr'
import type { Daemon } from '../../../src/daemon/daemon.js'
import type { NextClaimAnswer } from '../../../src/daemon/board-service.js'
import { InProcessDaemons } from '../../helpers/in-process-daemons.js'
import { waitFor } from '../../helpers/wait-for.js'

const NODES = 8
const TASKS = Array.from({ length: 10 }, (_, i) => `task-${i}`)
const EARLY = 'early'
// A fixed window: long enough that "pending while it settles" is seen by a
// poll, short enough for a few rounds of claims.
const TIMING = { heartbeatMs: 500, liveTimeoutMs: 60_000, syncIntervalMs: 1000, dmRetryMs: 500, settle: { fixedMs: 4000 } }

describe(`claim --next across ${NODES} daemons`, () => {
  const cluster = new InProcessDaemons()
  const nodes: Daemon[] = []
  let answers: NextClaimAnswer[][] = []

  beforeAll(async () => {
    for (let i = 0; i < NODES; i++) nodes.push(await cluster.start(TIMING))
    for (let i = 1; i < NODES; i++) await nodes[i].node.dial(multiaddr(nodes[0].listenAddrs()[0]))
    for (const [i, d] of nodes.entries()) await d.setStatusLine(`agent ${i}`)
    await waitFor(() => nodes.every(d => d.peers(false).length >= NODES - 1), {
      what: 'every daemon to see the others live',
      timeoutMs: 90_000
    })
    await nodes[0].boardService.addTasks(
      [EARLY, ...TASKS].map(id => ({ id, title: id, description: '', deps: [], scope: [`src/${id}/**`], priority: 0 }))
    )
    await waitFor(() => nodes.every(d => TASKS.every(t => d.boardService.board.task(t, d.boardService.now()) !== undefined)), {
      what: 'the tasks on every board',
      timeoutMs: 60_000
    })
  }, 180_000)

  afterAll(async () => {
    await cluster.stopAll()
  }, 60_000)

  it("shows a task a peer's claim is settling on as pending, with the peer, and leaves it out of ready", async () => {
    const claimant = nodes[0]
    const answer = await claimant.boardService.claim(EARLY, [], true)
    expect(answer.outcome).toBe('PENDING')
    const seen = await waitFor(
      () => {
        const choices = nodes.slice(1).map(d => d.boardService.readyChoice())
        return choices.every(c => c.pending.some(p => p.task === EARLY)) ? choices : undefined
      },
      { what: `every peer to show ${EARLY} pending`, timeoutMs: 30_000, intervalMs: 20 }
    )
    for (const c of seen) {
      expect(c.pending.find(p => p.task === EARLY)).toMatchObject({ peer: claimant.peerId, epoch: 1 })
      expect(c.ready.map(t => t.id)).not.toContain(EARLY)
    }
    await waitFor(() => claimant.boardService.protocol.current()?.settling === false, { what: `${EARLY} to settle`, timeoutMs: 30_000 })
  }, 60_000)

  it('gives every agent calling claim --next at once a task of its own', async () => {
    // With the same view (every other agent that holds nothing is live here,
    // and nodes[0] holds early), the daemons' first choices are all different.
    const seeking = nodes.slice(1)
    await waitFor(() => seeking.every(d => d.boardService.protocol.seekers(d.boardService.now()).length === seeking.length), {
      what: 'every daemon to see the same agents choosing',
      timeoutMs: 60_000
    })
    const firsts = seeking.map(d => d.boardService.protocol.nextChoices(d.boardService.now())[0].id)
    expect(new Set(firsts).size).toBe(seeking.length)
    // Each agent calls until HELD, as the prompt says (a call tries up to 3 claims).
    answers = await Promise.all(
      nodes.map(async d => {
        const mine: NextClaimAnswer[] = []
        for (let call = 0; call < 6; call++) {
          const a = await d.boardService.claimNext([])
          mine.push(a)
          if (a.outcome === 'HELD') break
        }
        return mine
      })
    )
    const final = answers.map(a => a.at(-1) as NextClaimAnswer)
    expect(final.map(a => a.outcome)).toEqual(Array(NODES).fill('HELD'))
    // Distinct first choices: one call and one claim each, on the task chosen.
    expect(answers.slice(1).map(a => [a.length, a[0].attempts, a[0].task])).toEqual(firsts.map(t => [1, 1, t]))
    // The daemon that held `early` already gets it back, claiming nothing new.
    expect(final[0]).toMatchObject({ task: EARLY, attempts: 0 })
    const tasks = final.map(a => a.task)
    expect(new Set(tasks).size).toBe(NODES)
    // No task has two holders, on any board, once every claim and release has arrived.
    const entries = (d: Daemon): number => d.logService.state.size
    await waitFor(() => nodes.every(d => entries(d) === entries(nodes[0])), {
      what: 'every log to hold the same entries',
      timeoutMs: 60_000
    })
    for (const d of nodes) {
      const holders = [EARLY, ...TASKS].map(t => d.boardService.board.holder(t)?.holder).filter(h => h !== undefined)
      expect(holders.length).toBe(NODES)
      expect(new Set(holders).size).toBe(NODES)
      for (const [i, n] of nodes.entries()) expect(d.boardService.board.holder(tasks[i])?.holder).toBe(n.peerId)
    }
  }, 180_000)

  it('answers a repeated claim --next with the task already held, and NONE_READY when nothing is left', async () => {
    const again = await nodes[1].boardService.claimNext([])
    expect(again).toMatchObject({ outcome: 'HELD', task: answers[1].at(-1)?.task, attempts: 0 })
    // nodes[0] finishes its task; the tasks nobody holds are claimed by name; then nothing is left for it.
    await nodes[0].boardService.done(EARLY, '', [], 'the test needs no change')
    const left = TASKS.filter(t => nodes[1].boardService.board.holder(t) === undefined)
    expect(left.length).toBe(TASKS.length + 1 - NODES)
    const byName = await Promise.all(left.map(async (t, i) => await nodes[1 + i].boardService.claim(t, [])))
    expect(byName.map(a => a.outcome)).toEqual(left.map(() => 'HELD'))
    await waitFor(() => left.every(t => nodes[0].boardService.board.holder(t) !== undefined), {
      what: 'nodes[0] to see those claims',
      timeoutMs: 30_000
    })
    const none = await nodes[0].boardService.claimNext([])
    expect(none).toMatchObject({ outcome: 'NONE_READY', task: '', attempts: 0 })
  }, 120_000)
})
