// Carry-on (core/board/carry-on): a holder whose integration request waits in
// the integrator's queue goes on with its next task. Real in-process daemons
// and a real shared repository: amy holds core and asks ivy, the integrator,
// to land it; claim --next gives amy another task while core still is hers;
// ivy lands core and amy's daemon writes core's done (no agency done). A
// landing whose done a stop left unwritten is written at the next start. A
// request that breaks the tests leaves amy holding its task, told, and
// claim --next puts her back on it before the other task she holds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { commitFiles } from '../../repo/git-fixtures.js'
import { addrsOf } from './helpers.js'
import { waitFor } from '../../helpers/wait-for.js'
import { notices, startAssistSwarm, type AssistSwarm } from './assist-swarm.js'
import { meshStatus } from '../../../src/api/mesh-handlers.js'
import type { Daemon } from '../../../src/daemon/daemon.js'

let swarm: AssistSwarm
let amy: Daemon
let ivy: Daemon

beforeAll(async () => {
  swarm = await startAssistSwarm(['amy', 'ivy'], 'test ! -e broken.txt')
  ;[amy, ivy] = swarm.daemons
  // Tasks nobody waits on besides core's chain, so claim --next has something while core is pending.
  await amy.addTasks(['docs', 'lint'].map(id => ({ id, title: id, description: '', deps: [], scope: [`${id}/**`], priority: 0 })))
  await waitFor(() => ivy.boardService.board.task('lint', ivy.boardService.now()) !== undefined, { what: 'ivy to see the tasks' })
}, 120_000)
afterAll(async () => {
  await swarm?.cleanup()
})

async function landOne(): Promise<ReturnType<ReturnType<Daemon['repo']>['runIntegrator']>> {
  await waitFor(() => ivy.repo().pendingRequests().length === 1, { what: "ivy to see amy's request" })
  return await ivy.repo().runIntegrator(32)
}

const holderOf = (d: Daemon, task: string): string | undefined => d.boardService.board.holder(task)?.holder

describe("a holder whose request is in the integrator's queue", () => {
  let second = ''

  it("claims its next task while the first is on its way, and its daemon writes the first one's done when it lands", async () => {
    await commitFiles(amy.workspacePath(), { 'core/core.txt': 'core\n' })
    await amy.repo().requestIntegration('core')
    const next = await amy.claimNextTask([])
    expect(next.outcome).toBe('HELD')
    expect(next.task).not.toBe('core')
    second = next.task
    // core is still amy's: its lease goes on until it is done.
    expect(holderOf(amy, 'core')).toBe(amy.peerId)
    expect(
      amy.boardService
        .held()
        .map(h => h.task)
        .sort()
    ).toEqual(['core', second].sort())
    expect(amy.boardService.working().map(h => h.task)).toEqual([second])
    expect((await meshStatus(amy)).held.map(t => t.id)).toEqual([second, 'core'])
    // A retried claim --next answers the task it is on, not core.
    expect((await amy.claimNextTask([])).task).toBe(second)

    expect((await landOne()).landed).toEqual(['core'])
    await waitFor(() => amy.boardService.board.doneRecord('core')?.by === amy.peerId, { what: "amy's daemon to mark core done" })
    await waitFor(() => ivy.boardService.board.doneRecord('core')?.by === amy.peerId, { what: 'ivy to see core done by amy' })
    expect(amy.boardService.board.doneRecord('core')?.epoch).toBe(1)
    await waitFor(async () => (await notices(amy, 'integration')).some(t => t.includes('your daemon marked core done')), {
      what: 'amy to be told'
    })
    // An agent that says done anyway changes nothing.
    const before = amy.logService.state.size
    expect((await amy.doneTask('core', '', [], '')).state).toBe('done')
    expect(amy.logService.state.size).toBe(before)
  })

  it('writes the done at the next start when a stop left it unwritten', async () => {
    await commitFiles(amy.workspacePath(), { [`${second}/a.txt`]: 'a\n' })
    await amy.repo().requestIntegration(second)
    // The crash window: the landing arrives, the daemon writes nothing.
    amy.boardService.stop()
    expect((await landOne()).landed).toEqual([second])
    await waitFor(() => amy.boardService.board.integrationResults().some(i => i.task === second && i.result === 'merged'), {
      what: 'amy to fold the landing'
    })
    expect(amy.boardService.board.doneRecord(second)).toBeUndefined()

    amy = await swarm.cluster.restart(amy, { peers: addrsOf(ivy) })
    await waitFor(() => amy.boardService.board.doneRecord(second)?.by === amy.peerId, {
      what: "amy's daemon to mark the task done at start"
    })
    await waitFor(() => amy.presence.isLive(ivy.peerId) && ivy.presence.isLive(amy.peerId), {
      what: 'amy and ivy to see each other again',
      timeoutMs: 30_000
    })
  })

  it('leaves a holder whose request failed holding its task, told, and claim --next puts it back on it first', async () => {
    const third = await amy.claimNextTask([])
    expect(third.outcome).toBe('HELD')
    await commitFiles(amy.workspacePath(), { [`${third.task}/b.txt`]: 'b\n', 'broken.txt': 'oops\n' })
    await amy.repo().requestIntegration(third.task)
    const other = await amy.claimNextTask([])
    expect(other.outcome).toBe('HELD')
    expect(other.task).not.toBe(third.task)

    expect((await landOne()).failed).toEqual([third.task])
    await waitFor(
      async () =>
        (await notices(amy, 'integration')).some(
          t => t.includes(`your integration request for ${third.task}@${third.epoch} did not land`) && t.includes('your current task again')
        ),
      { what: 'amy to be told it did not land' }
    )
    expect(holderOf(amy, third.task)).toBe(amy.peerId)
    expect(amy.boardService.board.doneRecord(third.task)).toBeUndefined()
    expect(
      amy.boardService
        .working()
        .map(h => h.task)
        .sort()
    ).toEqual([third.task, other.task].sort())
    // status shows it first, as claim --next answers it
    expect((await meshStatus(amy)).held.map(t => t.id)[0]).toBe(third.task)
    const back = await amy.claimNextTask([])
    expect(back.outcome).toBe('HELD')
    expect(back.task).toBe(third.task)
  })
})
