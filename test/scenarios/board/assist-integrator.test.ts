// Assistants land through the integrator's queue, between real in-process
// daemons and a real shared git repository: amy holds core (two tasks wait on
// it), ivy is the announced integrator, bob and cat assist core. cat's request
// breaks the tests: she is told, core stays held. bob's request and amy's are
// pending together: ivy's batch lands bob's (the first in log order; one
// request per task per batch), core is done by bob, amy is told and cat is
// told to stop; amy's request is fenced in the next batch, nothing lands twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { commitFiles, sh, type SharedRepo } from '../../repo/git-fixtures.js'
import { rejectionOf } from './helpers.js'
import { waitFor } from '../../helpers/wait-for.js'
import { notices, startAssistSwarm, type AssistSwarm } from './assist-swarm.js'
import type { Daemon } from '../../../src/daemon/daemon.js'

let swarm: AssistSwarm
let repo: SharedRepo
let amy: Daemon
let ivy: Daemon
let bob: Daemon
let cat: Daemon
let all: Daemon[]

beforeAll(async () => {
  // Green unless a change broke it (the integrator bisects a red batch against a green shared branch).
  swarm = await startAssistSwarm(['amy', 'ivy', 'bob', 'cat'], 'test ! -e broken.txt')
  repo = swarm.repo
  all = swarm.daemons
  amy = all[0]
  ivy = all[1]
  bob = all[2]
  cat = all[3]
  await ivy.announce('integrating: use agency request-integration')
}, 120_000)

afterAll(async () => {
  await swarm?.cleanup()
})

/** Waits until the integrator's log holds `n` unanswered requests, then runs one batch. */
async function batchOf(n: number): ReturnType<ReturnType<Daemon['repo']>['runIntegrator']> {
  await waitFor(() => ivy.repo().pendingRequests().length === n, { what: `ivy to see ${n} pending request(s)` })
  return await ivy.repo().runIntegrator(32)
}

/** Merge commits on the shared branch that landed core at epoch 1. */
async function landingsOfCore(): Promise<number> {
  const bodies = await sh(repo.bare, ['log', '--merges', '--format=%B%x00', 'main'])
  return bodies.split('\0').filter(b => b.includes('Agency-Task: core@1')).length
}

describe('an assistant lands through the integrator', () => {
  it('refuses a request from an assistant whose branch has no commits of its own, pushing nothing', async () => {
    await cat.assist({ task: 'core', approach: 'generate the greeting from a node script', stop: '' })
    const before = cat.logService.state.size
    const empty = await rejectionOf(async () => await cat.repo().requestIntegration(''))
    expect(empty.code).toBe('FAILED_PRECONDITION')
    expect(empty.message).toMatch(/your assist branch agency\/.+\/core-assist-1 has no commits beyond main: commit your work/)
    expect(cat.logService.state.size).toBe(before)
    expect(await sh(repo.bare, ['for-each-ref', '--format=%(refname)', `refs/agency/${cat.peerId}/`])).toBe('')
  })

  it('tells an assistant whose request breaks the tests, and the task is not done', async () => {
    await commitFiles(cat.workspacePath(), { 'hello/hello.txt': 'hello\n', 'broken.txt': 'oops\n' })
    const asked = await cat.repo().requestIntegration('')
    expect(asked.ref).toBe(`refs/agency/${cat.peerId}/core`)
    const r = await batchOf(1)
    expect(r).toMatchObject({ landed: [], failed: ['core'], commit: '' })
    const told = await waitFor(async () => (await notices(cat, 'integration')).find(t => t.includes('core@1')), {
      what: 'cat to be told her request failed'
    })
    expect(told).toContain("your assist's integration request for core@1 did not land (failed)")
    expect(told).toContain('core is not done')
    for (const d of all)
      await waitFor(() => d.boardService.board.integrationResults().some(i => i.result === 'failed'), {
        what: `${d.name} to see the failed integration`
      })
    for (const d of all)
      expect(d.boardService.board.task('core', d.boardService.now())).toMatchObject({ state: 'claimed', holder: amy.peerId })
    expect(cat.assists.current()?.task).toBe('core')
    expect(await landingsOfCore()).toBe(0)
  })

  it("lands the first request in log order of a holder's and an assistant's for one task: the task is done by the assistant and the holder is told", async () => {
    await bob.assist({ task: 'core', approach: 'write the greeting with printf from a shell script', stop: '' })
    await commitFiles(bob.workspacePath(), { 'hello/hello.txt': 'hello from bob\n' })
    const bobs = await bob.repo().requestIntegration('')
    await waitFor(() => amy.logService.state.get(bobs.entryId) !== undefined, { what: "amy to see bob's request" })
    await commitFiles(amy.workspacePath(), { 'hello/hello.txt': 'hello from amy\n' })
    const amys = await amy.repo().requestIntegration('core')
    // Two agents' requests for one task: two refs on the remote, neither overwrites the other.
    expect(amys.ref).not.toBe(bobs.ref)
    expect(await sh(repo.bare, ['rev-parse', bobs.ref])).toBe(bobs.commit)
    expect(await sh(repo.bare, ['rev-parse', amys.ref])).toBe(amys.commit)

    const r = await batchOf(2)
    expect(r).toMatchObject({ landed: ['core'], failed: [], pending: 1 }) // amy's waits: one request per task per batch
    expect(await sh(repo.bare, ['log', '-1', '--format=%B', 'main'])).toContain(`Agency-Agent: ${bob.peerId}`)

    for (const d of all) {
      await waitFor(() => d.boardService.board.task('core', d.boardService.now())?.doneBy === bob.peerId, {
        what: `${d.name} to see core done by bob`
      })
    }
    expect(bob.boardService.board.doneRecord('core')).toMatchObject({ by: bob.peerId, epoch: 1, commit: r.commit })
    // The integrator merged bob's work: it landed nothing of its own.
    expect(ivy.boardService.board.landedBy('core', 1, ivy.peerId)).toBe(false)
    const landed = await waitFor(async () => (await notices(bob, 'integration')).find(t => t.includes('core@1')), {
      what: 'bob to be told his request landed'
    })
    expect(landed).toContain('core is done by you')
    expect(bob.assists.current()).toBeUndefined()

    await waitFor(() => amy.boardService.held().length === 0, { what: "amy's lease on core to end" })
    const lost = await waitFor(async () => (await notices(amy, 'claim_lost')).find(t => t.includes('core')), {
      what: 'amy to be told core was done by bob'
    })
    expect(lost).toContain(`done by ${bob.peerId} (an assistant)`)
    const stop = await waitFor(async () => (await notices(cat, 'assist')).find(t => t.includes('was done by')), {
      what: 'cat to be told to stop'
    })
    expect(stop).toContain('agency assist --stop')
  })

  it("fences the holder's request in the next batch: nothing lands twice", async () => {
    const r = await batchOf(1)
    expect(r).toMatchObject({ landed: [], failed: ['core'], pending: 0, commit: '' })
    const told = await waitFor(async () => (await notices(amy, 'integration')).find(t => t.includes('core@1')), {
      what: 'amy to be told her request was fenced'
    })
    expect(told).toContain("another agent's work for core landed first")
    expect(await landingsOfCore()).toBe(1)
    expect(ivy.boardService.board.integrationResults().map(i => i.result)).toEqual(['failed', 'merged', 'fenced'])
    expect(ivy.repo().pendingRequests()).toEqual([])
  })

  it("refuses, in the integrator, an assistant's request written after the task was done (its daemon would not have)", async () => {
    const ref = `refs/agency/${cat.peerId}/core`
    const commit = await sh(repo.bare, ['rev-parse', ref])
    const tip = await repo.tip()
    await cat.logService.append('integration_request', { task: 'core', epoch: 1, ref, commit })
    const r = await batchOf(1)
    expect(r).toMatchObject({ landed: [], failed: ['core'], pending: 0, commit: '' })
    expect(await repo.tip()).toBe(tip)
    const why = ivy.logService.findings.search({ tag: 'task:core', kind: 'failure' }).map(h => h.finding.text)
    expect(why).toContainEqual(expect.stringContaining(`is refused: task core was done by ${bob.peerId} first`))
    const told = await waitFor(async () => (await notices(cat, 'integration')).find(t => t.includes('(refused)')), {
      what: 'cat to be told her late request was refused'
    })
    expect(told).toContain('If core is done or moved on, stop and record what you learned: agency assist --stop')
  })

  it("refuses an assistant's request once the task is done, writing nothing", async () => {
    await commitFiles(cat.workspacePath(), { 'hello/fixed.txt': 'another try\n' })
    const before = cat.logService.state.size
    const late = await rejectionOf(async () => await cat.repo().requestIntegration(''))
    expect(late.code).toBe('FAILED_PRECONDITION')
    expect(late.message).toContain(`task core was done by ${bob.peerId} first`)
    expect(late.message).toContain('agency assist --stop')
    expect(cat.logService.state.size).toBe(before)
  })
})
