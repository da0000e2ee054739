// Hand-off by speed between real in-process daemons and a real shared git
// repository (docs/handoff.md). amy holds core; her clock is moved on to make
// her slow (claim age against 2 x the median claim-to-done time, floor 10
// min) without waiting. While nothing is done, or she has not held core long
// enough, her daemon's check hands nothing off. Once she is slow, her daemon
// releases core to bob, who assists it: bob's daemon claims core at the next
// epoch from his assist branch and lands it; amy is told to stop and her late
// integrate is refused, by her board and by the remote's task fence. A task
// nobody assists goes to an idle peer, from the holder's pushed work; one
// that stopped before claiming it claims it when it starts again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { decodeBody } from '../../../src/core/log/kinds.js'
import { FencedError } from '../../../src/repo/errors.js'
import { checkTaskFence, readTaskFence } from '../../../src/repo/task-fence.js'
import { commitFiles, sh } from '../../repo/git-fixtures.js'
import { rejectionOf } from './helpers.js'
import { waitFor } from '../../helpers/wait-for.js'
import { notices, startAssistSwarm, type AssistSwarm } from './assist-swarm.js'
import type { Daemon } from '../../../src/daemon/daemon.js'

const HOUR = 3_600_000
let swarm: AssistSwarm
let amy: Daemon
let bob: Daemon
let cat: Daemon
/** how far amy's clock is ahead */
let amyAhead = 0

beforeAll(async () => {
  swarm = await startAssistSwarm(['amy', 'bob', 'cat'], 'test -f README.md', {
    options: { handoff: { factor: 2, floorMs: 10 * 60_000, checkMs: 60 * 60_000 } },
    parts: name => (name === 'amy' ? { wallClock: () => Date.now() + amyAhead } : {})
  })
  ;[amy, bob, cat] = swarm.daemons
}, 120_000)

afterAll(async () => {
  await swarm?.cleanup()
})

/** The releases in a daemon's log, decoded. */
function releases(d: Daemon): Array<{ task: string; epoch: number; to: string; branch: string }> {
  return d.logService.state
    .ordered()
    .filter(e => e.entry.kind === 'release')
    .map(e => decodeBody('release', e.entry.body))
}

describe('hand-off by speed', () => {
  it('hands nothing off while no task is done, or before the holder is slow', async () => {
    amyAhead = 2 * HOUR
    await amy.handoffs.check()
    expect(amy.handoffs.decide('core')).toMatchObject({ refusal: expect.stringContaining('no task is done yet') })
    amyAhead = 0

    // bob finishes a quick task: the board's median claim-to-done time is his few seconds.
    await amy.addTasks([{ id: 'quick', title: 'quick', description: '', deps: [], scope: ['quick/**'], priority: 5 }])
    await waitFor(() => bob.boardService.board.task('quick', bob.boardService.now()) !== undefined, { what: 'bob to see quick' })
    expect((await bob.claimTask('quick', [], false)).outcome).toBe('HELD')
    await commitFiles(bob.workspacePath(), { 'quick/q.txt': 'q\n' })
    expect((await bob.repo().integrate('quick', '')).result).toBe('merged')
    await bob.doneTask('quick', '', [], '')
    await waitFor(() => amy.boardService.board.doneRecord('quick') !== undefined, { what: 'amy to see quick done' })

    await amy.handoffs.check()
    expect(amy.handoffs.decide('core')).toMatchObject({ refusal: expect.stringContaining('handed off past 10 min') })
    // (and an integrate with nothing committed says what to do, writing nothing)
    const before = amy.logService.state.size
    const empty = await rejectionOf(async () => await amy.repo().integrate('core', ''))
    expect(empty.message).toMatch(
      /^your task branch agency\/\S+\/core has no commits beyond main: commit your work in \S+ \(git add -A && git commit -m "<what you did>"\) and integrate again; if the task needs no change, agency done core --no-change "<why>"$/
    )
    expect(amy.logService.state.size).toBe(before)
    expect(amy.boardService.held().map(h => h.task)).toEqual(['core'])
    expect(releases(amy)).toEqual([])
  })

  it("hands a slow holder's task to its assistant, who claims the next epoch from his assist branch and lands it", async () => {
    const joined = await bob.assist({ task: 'core', approach: 'write the greeting by hand', stop: '' })
    expect(joined.outcome).toBe('ASSISTING')
    await commitFiles(bob.workspacePath(), { 'hello/hello.txt': 'hello\n' })
    await waitFor(() => amy.assists.activeOn('core', () => true).some(a => a.author === bob.peerId), { what: 'amy to see bob assist core' })

    amyAhead = HOUR
    expect(amy.handoffs.decide('core')).toMatchObject({ receiver: { agent: bob.peerId, assisting: true } })
    await amy.handoffs.check()
    expect(releases(amy)).toEqual([expect.objectContaining({ task: 'core', epoch: 1, to: bob.peerId })])
    expect(amy.boardService.held()).toEqual([])
    const told = await waitFor(async () => (await notices(amy, 'handoff')).find(t => t.includes('core')), { what: 'amy to be told' })
    expect(told).toContain(`handed to ${bob.peerId}`)
    expect(told).toContain('agency note')

    await waitFor(() => bob.boardService.held().find(h => h.task === 'core' && h.epoch === 2), { what: 'bob to hold core at epoch 2' })
    const bobTold = await waitFor(async () => (await notices(bob, 'handoff')).find(t => t.includes('core')), { what: 'bob to be told' })
    expect(bobTold).toContain(`${amy.peerId} handed its task core to you`)
    await waitFor(() => bob.assists.current() === undefined, { what: "bob's assist to end" })
    expect(await sh(bob.workspacePath(), ['symbolic-ref', '--short', 'HEAD'])).toBe(`agency/${bob.peerId}/core`)
    expect(await sh(bob.workspacePath(), ['ls-files', 'hello'])).toBe('hello/hello.txt')
    // cat, idle, was not chosen: the assistant goes first; and it did not take core from bob.
    expect(cat.boardService.held()).toEqual([])

    const merged = await bob.repo().integrate('', '')
    expect(merged).toMatchObject({ result: 'merged', epoch: 2 })
    await bob.doneTask('core', '', [], '')
    await waitFor(() => amy.boardService.board.doneRecord('core')?.by === bob.peerId, { what: 'amy to see core done by bob' })
  })

  it("refuses the old holder's late integrate: her board and the remote's task fence", async () => {
    await commitFiles(amy.workspacePath(), { 'hello/late.txt': 'late\n' })
    const late = await rejectionOf(async () => await amy.repo().integrate('core', ''))
    expect(late.code).toBe('FAILED_PRECONDITION')
    const fence = await readTaskFence(amy.repo().workspace, 'core')
    expect(() => {
      checkTaskFence(fence, 'core', 1, amy.peerId)
    }).toThrow(FencedError)
    expect(await sh(swarm.repo.bare, ['ls-tree', '--name-only', 'main', 'hello/'])).toBe('hello/hello.txt')
  })

  it("hands a task nobody assists to an idle peer, whose branch starts from the holder's pushed work", async () => {
    await waitFor(() => amy.boardService.readyChoice().ready.some(t => t.id === 'api'), { what: 'amy to see api ready' })
    expect((await amy.claimTask('api', [], false)).outcome).toBe('HELD')
    await commitFiles(amy.workspacePath(), { 'api/half.txt': 'half done\n' })
    amyAhead += HOUR
    await amy.handoffs.check()
    const [release] = releases(amy).filter(r => r.task === 'api')
    expect([bob.peerId, cat.peerId]).toContain(release.to)
    expect(release.branch).toBe('refs/agency/wip/api')
    const receiver = release.to === bob.peerId ? bob : cat
    await waitFor(() => receiver.boardService.held().find(h => h.task === 'api' && h.epoch === 2), {
      what: 'the receiver to hold api at epoch 2'
    })
    await waitFor(
      async () => (await sh(receiver.workspacePath(), ['symbolic-ref', '--short', 'HEAD'])) === `agency/${receiver.peerId}/api`,
      { what: 'its workspace to be on api' }
    )
    expect(await sh(receiver.workspacePath(), ['ls-files', 'api'])).toBe('api/half.txt')
  })

  it('claims a task handed to a daemon that stopped before claiming it when it starts again', async () => {
    const apiHolder = amy.boardService.board.holder('api')?.holder
    let idle = apiHolder === bob.peerId ? cat : bob
    await amy.addTasks([{ id: 'late', title: 'late', description: '', deps: [], scope: ['late/**'], priority: 0 }])
    await waitFor(() => amy.boardService.board.task('late', amy.boardService.now()) !== undefined, { what: 'amy to see late' })
    expect((await amy.claimTask('late', [], false)).outcome).toBe('HELD')
    // The crash window: the release reaches the receiver's daemon, which claims nothing.
    idle.handoffs.stop()
    amyAhead += HOUR
    await amy.handoffs.check()
    expect(releases(amy).filter(r => r.task === 'late')).toEqual([expect.objectContaining({ to: idle.peerId })])
    await waitFor(() => releases(idle).some(r => r.task === 'late'), { what: 'the receiver to fold the release' })
    expect(idle.boardService.held()).toEqual([])

    idle = await swarm.cluster.restart(idle)
    await waitFor(() => idle.boardService.held().find(h => h.task === 'late' && h.epoch === 2), {
      what: 'the receiver to hold late at epoch 2 after its restart'
    })
    await waitFor(async () => (await notices(idle, 'handoff')).find(t => t.includes('its task late to you')), {
      what: 'the receiver to be told'
    })
  })
})
