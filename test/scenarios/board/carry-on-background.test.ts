// Background verify (agency integrate --background, background-integration
// integrateInBackground): a holder whose work is ready hands it to its own
// daemon and goes on. Real in-process daemons and a real shared repository:
// amy integrates core in the background and is answered before anything is
// merged (the verify waits on a gate file); core is on its way (carry-on), so
// claim --next gives her another task; when the gate opens her daemon lands
// core and writes its done. A change that breaks the tests is answered
// failed: nothing reaches the shared branch, amy is told, and the task is her
// current task again (status, claim --next). A request a stop left unanswered
// is integrated at the daemon's next start.
import { access } from 'node:fs/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { commitFiles, sh } from '../../repo/git-fixtures.js'
import { addrsOf } from './helpers.js'
import { waitFor } from '../../helpers/wait-for.js'
import { integrateCall, notices, startAssistSwarm, type AssistSwarm } from './assist-swarm.js'
import { VerifyGate } from './verify-gate.js'
import { meshStatus } from '../../../src/api/mesh-handlers.js'
import { backgroundMarks, markBackground } from '../../../src/repo/background-ref.js'
import type { Daemon } from '../../../src/daemon/daemon.js'

let swarm: AssistSwarm
let amy: Daemon
let bob: Daemon
let gate: VerifyGate

beforeAll(async () => {
  gate = await VerifyGate.make()
  // The verify waits until the test opens the gate: what lands, lands after the answer.
  swarm = await startAssistSwarm(['amy', 'bob'], gate.command('test ! -e broken.txt'))
  ;[amy, bob] = swarm.daemons
  await amy.addTasks(['docs', 'lint'].map(id => ({ id, title: id, description: '', deps: [], scope: [`${id}/**`], priority: 0 })))
  await waitFor(() => bob.boardService.board.task('lint', bob.boardService.now()) !== undefined, { what: 'bob to see the tasks' })
}, 120_000)
afterAll(async () => {
  await gate?.teardown([amy], async () => {
    await swarm?.cleanup()
  })
})

/** What the shared branch has at `path`, or undefined. */
async function onShared(path: string): Promise<string | undefined> {
  return await sh(swarm.repo.bare, ['show', `main:${path}`]).catch(() => undefined)
}

const closeGate = async (): Promise<void> => {
  await gate.close()
}
const openGate = async (): Promise<void> => {
  await gate.open()
}

describe('a holder that integrates in the background', () => {
  let second = ''
  let third = ''

  it('is answered before the merge, claims its next task, and its daemon lands the first and writes its done', async () => {
    await closeGate()
    await commitFiles(amy.workspacePath(), { 'core/core.txt': 'core\n' })
    const r = await integrateCall(amy, { task: 'core', message: '', background: true })
    expect(r.result).toBe('accepted')
    expect(r.epoch).toBe(1)
    expect(r.summary).toContain('claim --next')
    // Nothing merged yet: the verify waits on the gate.
    expect(await onShared('core/core.txt')).toBeUndefined()
    await expect(access(gate.path)).rejects.toThrow()
    expect(amy.boardService.board.requestPending('core', 1, amy.peerId)).toBe(true)
    expect(amy.boardService.working().map(h => h.task)).toEqual([])

    const next = await amy.claimNextTask([])
    expect(next.outcome).toBe('HELD')
    expect(next.task).not.toBe('core')
    second = next.task
    expect(
      amy.boardService
        .held()
        .map(h => h.task)
        .sort()
    ).toEqual(['core', second].sort())
    expect(amy.boardService.working().map(h => h.task)).toEqual([second])

    await openGate()
    await amy.repo().backgroundSettled()
    expect(await onShared('core/core.txt')).toBe('core')
    await waitFor(() => amy.boardService.board.doneRecord('core')?.by === amy.peerId, { what: "amy's daemon to mark core done" })
    await waitFor(() => bob.boardService.board.doneRecord('core')?.by === amy.peerId, { what: 'bob to see core done by amy' })
    expect(amy.boardService.board.doneRecord('core')?.epoch).toBe(1)
    expect(amy.boardService.board.requestPending('core', 1, amy.peerId)).toBe(false)
    await waitFor(async () => (await notices(amy, 'integration')).some(t => t.includes('your daemon marked core done')), {
      what: 'amy to be told'
    })
    expect(amy.boardService.held().map(h => h.task)).toEqual([second])
  })

  it('answers a change that breaks the tests failed: nothing lands, the holder is told, and the task is its current task again', async () => {
    await closeGate()
    await commitFiles(amy.workspacePath(), { [`${second}/b.txt`]: 'b\n', 'broken.txt': 'oops\n' })
    const epoch = amy.boardService.board.holder(second)?.epoch
    const r = await amy.repo().integrateInBackground(second, '')
    expect(r.result).toBe('accepted')
    const other = await amy.claimNextTask([])
    expect(other.outcome).toBe('HELD')
    expect(other.task).not.toBe(second)
    third = other.task

    await openGate()
    await amy.repo().backgroundSettled()
    const answer = amy.boardService.board.integrationResults().find(i => i.task === second)
    expect(answer?.result).toBe('failed')
    expect(answer?.request).not.toBe('')
    expect(await onShared('broken.txt')).toBeUndefined()
    expect(await onShared(`${second}/b.txt`)).toBeUndefined()
    await waitFor(
      async () =>
        (await notices(amy, 'integration')).some(
          t => t.includes(`your integration request for ${second}@${epoch} did not land`) && t.includes('your current task again')
        ),
      { what: 'amy to be told it did not land' }
    )
    expect(amy.boardService.board.holder(second)?.holder).toBe(amy.peerId)
    expect(amy.boardService.board.doneRecord(second)).toBeUndefined()
    expect(
      amy.boardService
        .working()
        .map(h => h.task)
        .sort()
    ).toEqual([second, other.task].sort())
    expect((await meshStatus(amy)).held.map(t => t.id)[0]).toBe(second)
    const back = await amy.claimNextTask([])
    expect(back.outcome).toBe('HELD')
    expect(back.task).toBe(second)
  })

  it('integrates again at the next start when a stop left its request unanswered', async () => {
    await openGate()
    await amy.repo().workspaceInfo(third)
    await commitFiles(amy.workspacePath(), { [`${third}/c.txt`]: 'c\n' })
    // What a daemon killed while it verified leaves: the request on the log, unanswered, and its mark in the clone.
    const request = await amy.repo().requestIntegration(third)
    await markBackground(amy.repo().workspace, third, request.commit)
    const epoch = amy.boardService.board.holder(third)?.epoch ?? 0
    amy = await swarm.cluster.restart(amy, { peers: addrsOf(bob) })
    await waitFor(() => amy.boardService.board.doneRecord(third)?.by === amy.peerId, {
      what: "amy's restarted daemon to land the task and mark it done",
      timeoutMs: 60_000
    })
    expect(amy.boardService.board.requestPending(third, epoch, amy.peerId)).toBe(false)
    expect(amy.boardService.board.integrationResults().find(i => i.task === third)?.request).toBe(request.entryId)
    expect(await onShared(`${third}/c.txt`)).toBe('c')
    await waitFor(async () => !(await backgroundMarks(amy.repo().workspace)).has(third), { what: 'the mark to be cleared' })
  }, 120_000)

  it('refuses a task it does not hold, writing nothing', async () => {
    const before = amy.logService.state.size
    await expect(amy.repo().integrateInBackground('ui', '')).rejects.toThrow()
    expect(amy.logService.state.size).toBe(before)
  })
})
