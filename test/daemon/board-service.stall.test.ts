// A daemon stopped (SIGSTOP) and continued: it heard nothing while it stood
// still, so on waking it judges nothing by what it saw before. A claim whose
// settle window it slept through is not answered HELD from that stale view:
// it waits until the daemon has caught up with its peer, and then loses to
// the peer's takeover at the next epoch. And a peer's lease did not run out
// on a silence the stopped daemon could not hear: the peer's task is not
// taken over on waking.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { PROCESS_TEST_TIMEOUT_MS, ProcessCluster, type AgentdProcess } from '../helpers/agentd-process.js'
import { waitFor } from '../helpers/wait-for.js'
import { ClaimOutcome, type AgencyClient, type ClaimReply } from '../../src/gen/agency/v1/api.js'

const cluster = new ProcessCluster()
let a: AgentdProcess
let b: AgentdProcess
const TASKS = ['t1', 't2', 't3', 'held-by-b']

beforeAll(async () => {
  // a's window is fixed and long enough that a stop right after its claim is written falls in it
  a = await cluster.start({ name: 'a', liveTimeoutMs: 3_000, extraArgs: ['--settle-ms', '4000'] })
  b = await cluster.start({ name: 'b', peers: [a.listenAddr], liveTimeoutMs: 3_000 })
  await a.api.call((c: AgencyClient) => c.addTasks, {
    tasks: TASKS.map(id => ({ id, title: id, description: '', deps: [], scope: [], priority: 0 }))
  })
  await waitFor(async () => (await b.api.call((c: AgencyClient) => c.listTasks, { state: '' })).tasks.length === TASKS.length, {
    what: 'b to see the tasks'
  })
  await waitFor(
    async () =>
      (await a.peers()).some(p => p.peerId === b.peerId && p.live) && (await b.peers()).some(p => p.peerId === a.peerId && p.live),
    { what: 'a and b to hear each other' }
  )
}, PROCESS_TEST_TIMEOUT_MS)

afterAll(async () => {
  await cluster.cleanup()
}, PROCESS_TEST_TIMEOUT_MS)

const holderAt = async (d: AgentdProcess, task: string): Promise<{ holder: string; epoch: number } | undefined> => {
  const t = (await d.api.call((c: AgencyClient) => c.getTask, { id: task })).task
  return t == null || t.holder === '' ? undefined : { holder: t.holder, epoch: Number(t.epoch) }
}

describe('a daemon stopped in its settle window', () => {
  it(
    'is not told HELD on waking from what it saw before: it catches up with its peer first, and loses to the takeover',
    async () => {
      // b holds a task of its own before a stops
      expect((await b.api.call((c: AgencyClient) => c.claim, { task: 'held-by-b', scope: [], noWait: false })).outcome).toBe(
        ClaimOutcome.CLAIM_HELD
      )
      await waitFor(async () => (await holderAt(a, 'held-by-b'))?.holder === b.peerId, { what: 'a to see b hold its task' })

      // a claims; once b has its claim, a is stopped in its window (a claim answered before the stop: the next task)
      let task = ''
      let answer: Promise<ClaimReply> | undefined
      for (const t of ['t1', 't2', 't3']) {
        let answered = false
        const call = a.api.call((c: AgencyClient) => c.claim, { task: t, scope: [], noWait: false }, 120_000)
        void call.then(
          () => {
            answered = true
          },
          () => {
            answered = true
          }
        )
        await waitFor(async () => (await holderAt(b, t))?.holder === a.peerId, { what: `b to see a's claim on ${t}` })
        process.kill(a.pid!, 'SIGSTOP')
        if (!answered) {
          task = t
          answer = call
          break
        }
        process.kill(a.pid!, 'SIGCONT')
        await call
      }
      expect(task).not.toBe('')
      try {
        // b sees a's lease run out, then takes the task over at epoch 2
        await waitFor(async () => (await b.peers()).some(p => p.peerId === a.peerId && !p.live), {
          what: "b to see the stopped a's lease run out"
        })
        const takeover = await b.api.call((c: AgencyClient) => c.claim, { task, scope: [], noWait: false })
        expect(takeover).toMatchObject({ outcome: ClaimOutcome.CLAIM_HELD, epoch: 2 })
        // while a is still stopped, its agent asks for b's task: the call waits in a's socket
        const grab = a.api
          .call((c: AgencyClient) => c.claim, { task: 'held-by-b', scope: [], noWait: false }, 120_000)
          .then(
            r => r,
            (err: Error) => err
          )
        process.kill(a.pid!, 'SIGCONT')

        const reply = await answer!
        expect(reply).toMatchObject({ outcome: ClaimOutcome.CLAIM_LOST, task, epoch: 1, winner: b.peerId })
        // b's lease did not run out on a's silence: its task is refused, not taken over
        const grabbed = await grab
        expect(grabbed).toBeInstanceOf(Error)
        expect((grabbed as Error).message).toMatch(/held by/)
        expect(await holderAt(a, 'held-by-b')).toEqual({ holder: b.peerId, epoch: 1 })
      } finally {
        try {
          process.kill(a.pid!, 'SIGCONT')
        } catch {
          /* gone */
        }
      }
    },
    PROCESS_TEST_TIMEOUT_MS
  )
})
