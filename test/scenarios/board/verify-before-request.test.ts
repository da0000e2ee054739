// Background integrate while an integrator serves the swarm (background-integration
// verifyThenRequest; backgroundVerify=2 in the simulator): the holder's daemon
// verifies the change on the shared branch first and writes the integration
// request only once it is green, so the integrator's batch never takes an
// unverified change. Real in-process daemons and a real shared repository:
// ivy serves as integrator (seen answering amy's request for docs); amy hands
// core over in the background and is answered at once, claim --next gives her
// another task while her daemon verifies (the verify waits on a gate file),
// and no request for core is on the log until the verify is green; then ivy's
// batch lands it and amy's daemon writes the done. A change that breaks the
// tests writes no request: amy is told and the task is her current task
// again. A stop while verifying loses nothing: after the restart the task is
// amy's to work on, with no request and no done.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { commitFiles, sh } from '../../repo/git-fixtures.js'
import { addrsOf } from './helpers.js'
import { waitFor } from '../../helpers/wait-for.js'
import { integrateCall, notices, startAssistSwarm, type AssistSwarm } from './assist-swarm.js'
import { VerifyGate } from './verify-gate.js'
import { decodeBody } from '../../../src/core/log/kinds.js'
import type { Daemon } from '../../../src/daemon/daemon.js'

let swarm: AssistSwarm
let amy: Daemon
let ivy: Daemon
/** amy's daemons stopped by a restart, whose verify may still run */
const stopped: Daemon[] = []
let gate: VerifyGate
const closeGate = async (): Promise<void> => {
  await gate.close()
}
const openGate = async (): Promise<void> => {
  await gate.open()
}

beforeAll(async () => {
  gate = await VerifyGate.make()
  await openGate()
  // Every verify (amy's and ivy's batches) waits until the test opens the gate.
  swarm = await startAssistSwarm(['amy', 'ivy'], gate.command('test ! -e broken.txt'))
  ;[amy, ivy] = swarm.daemons
  await amy.addTasks(['docs', 'lint', 'misc'].map(id => ({ id, title: id, description: '', deps: [], scope: [`${id}/**`], priority: 0 })))
  await waitFor(() => ivy.boardService.board.task('misc', ivy.boardService.now()) !== undefined, { what: 'ivy to see the tasks' })
}, 120_000)
afterAll(async () => {
  await gate?.teardown([amy, ...stopped], async () => {
    await swarm?.cleanup()
  })
})

/** The integration_request entries for `task` in `d`'s log. */
function requestsFor(d: Daemon, task: string): string[] {
  const out: string[] = []
  for (const e of d.logService.state.ordered(new Set(['integration_request']))) {
    if (decodeBody('integration_request', e.entry.body).task === task) out.push(e.id)
  }
  return out
}

/** What the shared branch has at `path`, or undefined. */
async function onShared(path: string): Promise<string | undefined> {
  return await sh(swarm.repo.bare, ['show', `main:${path}`]).catch(() => undefined)
}

describe('a background integrate while an integrator serves the swarm', () => {
  let second = ''
  let third = ''

  it("counts an agent as integrator once it answered another agent's request", async () => {
    expect(amy.repo().integratorServing()).toBeUndefined()
    expect((await amy.claimTask('docs', [], false)).outcome).toBe('HELD')
    await commitFiles(amy.workspacePath(), { 'docs/d.txt': 'd\n' })
    await amy.repo().requestIntegration('docs')
    await waitFor(() => ivy.repo().pendingRequests().length === 1, { what: "ivy to see amy's request" })
    expect((await ivy.repo().runIntegrator(32)).landed).toEqual(['docs'])
    await waitFor(() => amy.repo().integratorServing() === ivy.peerId, { what: 'amy to see ivy serving' })
    await waitFor(() => amy.boardService.board.doneRecord('docs')?.by === amy.peerId, { what: "amy's daemon to mark docs done" })
  })

  it('is answered at once, gives the next task while it verifies, requests only once green, and the integrator lands it', async () => {
    await closeGate()
    await amy.repo().workspaceInfo('core')
    await commitFiles(amy.workspacePath(), { 'core/core.txt': 'core\n' })
    const r = await integrateCall(amy, { task: 'core', message: '', background: true })
    expect(r.result).toBe('accepted')
    expect(r.summary).toContain('verifies it on the shared branch first')
    // Verifying: on its way for amy's daemon only, and nothing on the log for the integrator to take.
    expect(amy.boardService.working().map(h => h.task)).toEqual([])
    const next = await amy.claimNextTask([])
    expect(next.outcome).toBe('HELD')
    expect(next.task).not.toBe('core')
    second = next.task
    expect(amy.boardService.working().map(h => h.task)).toEqual([second])
    expect(requestsFor(amy, 'core')).toEqual([])
    expect((await ivy.repo().runIntegrator(32)).landed).toEqual([])
    expect(ivy.boardService.board.task('core', ivy.boardService.now())).toMatchObject({ state: 'claimed', holder: amy.peerId })

    await openGate()
    await amy.repo().backgroundSettled()
    expect(requestsFor(amy, 'core')).toHaveLength(1)
    expect(await onShared('core/core.txt')).toBeUndefined()
    expect(amy.boardService.working().map(h => h.task)).toEqual([second])
    await waitFor(
      () =>
        ivy
          .repo()
          .pendingRequests()
          .some(p => p.task === 'core'),
      { what: "ivy to see amy's request for core" }
    )
    expect((await ivy.repo().runIntegrator(32)).landed).toEqual(['core'])
    expect(await onShared('core/core.txt')).toBe('core')
    await waitFor(() => amy.boardService.board.doneRecord('core')?.by === amy.peerId, { what: "amy's daemon to mark core done" })
    // landed by the integrator's batch, answering amy's request
    expect(
      amy.boardService.board
        .integrationResults()
        .filter(i => i.task === 'core')
        .map(i => i.author)
    ).toEqual([ivy.peerId])
    expect(amy.boardService.held().map(h => h.task)).toEqual([second])
  })

  it('writes no request for a change that breaks the tests: the holder is told and the task is current again', async () => {
    await closeGate()
    await commitFiles(amy.workspacePath(), { [`${second}/b.txt`]: 'b\n', 'broken.txt': 'oops\n' })
    const epoch = amy.boardService.board.holder(second)?.epoch
    expect((await amy.repo().integrateInBackground(second, '')).result).toBe('accepted')
    const other = await amy.claimNextTask([])
    expect(other.outcome).toBe('HELD')
    expect(other.task).not.toBe(second)
    third = other.task

    await openGate()
    await amy.repo().backgroundSettled()
    expect(requestsFor(amy, second)).toEqual([])
    const failed = amy.boardService.board.integrationResults().find(i => i.task === second)
    expect(failed).toMatchObject({ result: 'failed', request: '', author: amy.peerId })
    const told = await waitFor(
      async () => (await notices(amy, 'integration')).find(t => t.includes(`your background integrate of ${second}@${epoch}`)),
      { what: 'amy to be told' }
    )
    expect(told).toContain('did not pass')
    expect(told).toContain('your current task again')
    expect(await onShared('broken.txt')).toBeUndefined()
    expect(amy.boardService.board.doneRecord(second)).toBeUndefined()
    expect(
      amy.boardService
        .working()
        .map(h => h.task)
        .sort()
    ).toEqual([second, third].sort())
    const back = await amy.claimNextTask([])
    expect(back.outcome).toBe('HELD')
    expect(back.task).toBe(second)
  })

  it("loses nothing when the daemon stops while it verifies: after the restart the task is its holder's to work on", async () => {
    await closeGate()
    await amy.repo().workspaceInfo(third)
    await commitFiles(amy.workspacePath(), { [`${third}/c.txt`]: 'c\n' })
    expect((await amy.repo().integrateInBackground(third, '')).result).toBe('accepted')
    expect(amy.boardService.working().map(h => h.task)).not.toContain(third)
    const old = amy
    stopped.push(old)
    amy = await swarm.cluster.restart(amy, { peers: addrsOf(ivy) })
    expect(amy.boardService.working().map(h => h.task)).toContain(third)
    expect(amy.boardService.board.holder(third)?.holder).toBe(amy.peerId)
    // The stopped daemon's verify ends green, and writes nothing after its stop.
    await openGate()
    await old.repo().backgroundSettled()
    expect(requestsFor(amy, third)).toEqual([])
    expect(amy.boardService.board.doneRecord(third)).toBeUndefined()
    expect(amy.boardService.working().map(h => h.task)).toContain(third)
  }, 120_000)
})
