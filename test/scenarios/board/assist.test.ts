// Assists between real in-process daemons with a real shared git repository:
// amy holds a task two others wait on; bob finds nothing ready, is offered the
// task in claim --next's NONE_READY answer, assists it with an approach of his
// own on his own branch, and integrates first: the task is done by bob, amy's
// lease ends and she is told. cat's copy of bob's approach is refused and
// changes nothing; her own approach is taken, and she is told to stop once bob
// has won.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { commitFiles, sh, type SharedRepo } from '../../repo/git-fixtures.js'
import { rejectionOf } from './helpers.js'
import { waitFor } from '../../helpers/wait-for.js'
import { notices, startAssistSwarm, type AssistSwarm } from './assist-swarm.js'
import type { Daemon } from '../../../src/daemon/daemon.js'

let swarm: AssistSwarm
let repo: SharedRepo
let amy: Daemon
let bob: Daemon
let cat: Daemon

const APPROACH = 'Write the greeting with printf from a shell script'

beforeAll(async () => {
  swarm = await startAssistSwarm(['amy', 'bob', 'cat'], 'test -f hello/hello.txt')
  repo = swarm.repo
  amy = swarm.daemons[0]
  bob = swarm.daemons[1]
  cat = swarm.daemons[2]
}, 120_000)

afterAll(async () => {
  await swarm?.cleanup()
})

describe('an idle agent assists the critical path', () => {
  it('offers the held task with dependents when nothing is ready, then announces the approach and tells the holder', async () => {
    const next = await bob.claimNextTask([])
    expect(next.outcome).toBe('NONE_READY')
    expect(next.assist).toMatchObject({ outcome: 'OFFER', task: 'core', holder: amy.peerId, chain: 2, assistants: 0, budget: 2 })

    const joined = await bob.assist({ task: '', approach: APPROACH, stop: '' })
    expect(joined).toMatchObject({
      outcome: 'ASSISTING',
      task: 'core',
      holder: amy.peerId,
      assistants: 1,
      taskBranch: `agency/${bob.peerId}/core-assist-1`
    })
    expect(await sh(bob.workspacePath(), ['symbolic-ref', '--short', 'HEAD'])).toBe(joined.taskBranch)
    // Not a claim: amy keeps the lease.
    expect(bob.boardService.held()).toEqual([])
    expect(bob.boardService.board.task('core', bob.boardService.now())?.holder).toBe(amy.peerId)

    const told = await waitFor(async () => (await notices(amy, 'assist')).find(t => t.includes(bob.peerId)), {
      what: 'amy to be told bob joined'
    })
    expect(told).toContain(APPROACH)

    // One assist at a time.
    const again = await rejectionOf(async () => await bob.assist({ task: 'core', approach: 'something else entirely', stop: '' }))
    expect(again.code).toBe('FAILED_PRECONDITION')
    expect(again.message).toContain('you already assist core')
  })

  it('refuses a second assistant with the same approach, writing nothing; takes a different one', async () => {
    await waitFor(() => cat.assists.look('core').approaches.some(a => a.author === bob.peerId), { what: "cat to see bob's approach" })
    const before = cat.logService.state.size
    const same = await rejectionOf(async () => await cat.assist({ task: 'core', approach: APPROACH.toUpperCase() + '.', stop: '' }))
    expect(same.code).toBe('FAILED_PRECONDITION')
    expect(same.message).toContain(`announced on core already by ${bob.peerId}`)
    expect(cat.logService.state.size).toBe(before)
    expect(cat.assists.current()).toBeUndefined()

    const own = await cat.assist({ task: 'core', approach: 'generate the file from a node script', stop: '' })
    expect(own).toMatchObject({ outcome: 'ASSISTING', assistants: 2 })
  })

  it("lands the first passing integration: the task is done by its assistant, the holder's lease ends and the others are told to stop", async () => {
    await commitFiles(bob.workspacePath(), { 'hello/hello.txt': 'hello\n' })
    const merged = await bob.repo().integrate('', '')
    expect(merged.result).toBe('merged')
    expect(merged.summary).toContain('core is done by you')
    expect(await sh(repo.bare, ['log', '-1', '--format=%B', 'main'])).toContain(`Agency-Agent: ${bob.peerId}`)

    for (const d of [amy, bob, cat]) {
      await waitFor(() => d.boardService.board.task('core', d.boardService.now())?.doneBy === bob.peerId, {
        what: `${d.name} to see core done by bob`
      })
    }
    expect(bob.assists.current()).toBeUndefined()
    await waitFor(() => amy.boardService.held().length === 0, { what: "amy's lease on core to end" })
    const lost = await waitFor(async () => (await notices(amy, 'claim_lost')).find(t => t.includes('core')), {
      what: 'amy to be told core was done by bob'
    })
    expect(lost).toContain(`done by ${bob.peerId}`)
    const late = await rejectionOf(async () => await amy.repo().integrate('core', ''))
    expect(late.code).toBe('FAILED_PRECONDITION')

    const stop = await waitFor(async () => (await notices(cat, 'assist')).find(t => t.includes('was done by')), {
      what: 'cat to be told to stop'
    })
    expect(stop).toContain('agency assist --stop')
    const ended = await cat.assist({ task: '', approach: '', stop: 'node was not needed: a plain file is enough' })
    expect(ended).toMatchObject({ outcome: 'STOPPED', task: 'core' })
    const record = cat.logService.findings.search({ tag: 'assist-end' })
    expect(record.map(h => h.finding)).toEqual([expect.objectContaining({ kind: 'note', refs: [approachId(cat)] })])
  })
})

/** The id of a daemon's approach announcement. */
function approachId(d: Daemon): string {
  const hits = d.logService.findings.search({ tag: 'approach', author: d.peerId })
  return hits.find(h => !h.finding.tags.includes('assist-end'))?.id ?? ''
}
