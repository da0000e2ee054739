// The shared remote is the arbiter of who may land a task's work: each
// integration pushes the shared branch and refs/agency/tasks/<task> (which
// names the epoch and holder of the work that landed) in one atomic push, with
// a lease on the task ref. A holder cut off from the mesh but not from git
// still believes its claim; the remote refuses it once a takeover has landed.
import { existsSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { integrate, type IntegrateResult } from '../../src/repo/integrate.js'
import { integrateBatch } from '../../src/repo/integrator.js'
import { readTaskFence } from '../../src/repo/task-fence.js'
import { fetchProvenLanding, landedPaths } from '../../src/repo/fence-landing.js'
import { requestRefName, taskFenceRef } from '../../src/repo/ref-names.js'
import type { Workspace } from '../../src/repo/workspace.js'
import { waitFor } from '../helpers/wait-for.js'
import { agentWorkspace, commitFiles, makeSharedRepo, sh, type SharedRepo } from './git-fixtures.js'

let repo: SharedRepo
beforeEach(async () => {
  repo = await makeSharedRepo()
})
afterEach(async () => {
  await repo.cleanup()
})

/** The partitioned holder's view: its own board still says it holds the task. */
const stillHeld = async (): Promise<void> => {}

async function agentWithWork(agentId: string, task: string, files: Record<string, string>): Promise<{ ws: Workspace; work: string }> {
  const ws = await agentWorkspace(repo, agentId)
  await ws.checkoutTask(task)
  return { ws, work: await commitFiles(ws.dir, files, `${agentId} works on ${task}`) }
}

function merged(r: IntegrateResult): string {
  expect(r.result, JSON.stringify(r)).toBe('merged')
  return (r as { commit: string }).commit
}

const fenceOf = async (task: string): Promise<string> =>
  await sh(repo.bare, [
    'log',
    '-1',
    '--format=%(trailers:key=Agency-Task,valueonly)%(trailers:key=Agency-Agent,valueonly)',
    taskFenceRef(task)
  ])

describe('the task fence at the shared remote', () => {
  it('refuses the old holder once the takeover at epoch + 1 has integrated', async () => {
    const old = await agentWithWork('old', 't1', { 'old.txt': 'superseded work\n' })
    const heir = await agentWithWork('heir', 't1', { 'heir.txt': 'the takeover\n' })

    const landed = merged(await integrate({ workspace: heir.ws, task: 't1', epoch: 2, verify: 'true', checkFence: stillHeld }))
    expect(await sh(repo.bare, ['rev-parse', taskFenceRef('t1')])).toBe(landed)
    expect(await fenceOf('t1')).toBe('t1@2\nheir')
    const tip = await repo.tip()

    const err = await integrate({ workspace: old.ws, task: 't1', epoch: 1, verify: 'true', checkFence: stillHeld }).catch(e => e)
    expect(err).toMatchObject({ name: 'FencedError', code: 'FAILED_PRECONDITION' })
    expect(err.message).toMatch(/t1 is at epoch 2 on the shared remote \(heir\)/)
    expect(err.message).toMatch(/agency claim/)
    expect(await repo.tip()).toBe(tip)
    expect(await sh(repo.bare, ['rev-list', 'main'])).not.toContain(old.work)
    expect(await fenceOf('t1')).toBe('t1@2\nheir')
  })

  it('refuses the old holder whose tests were running when the takeover landed: the lease on the task ref fails', async () => {
    const old = await agentWithWork('old', 't1', { 'old.txt': 'superseded work\n' })
    const heir = await agentWithWork('heir', 't1', { 'heir.txt': 'the takeover\n' })
    const started = join(repo.root, 'old-verify-started')
    const go = join(repo.root, 'old-verify-may-finish')
    const verify = `touch ${started}; while [ ! -e ${go} ]; do sleep 0.05; done`

    const running = integrate({ workspace: old.ws, task: 't1', epoch: 1, verify, checkFence: stillHeld }).catch(e => e)
    await waitFor(() => existsSync(started), { what: 'the old holder to be running its tests', timeoutMs: 60_000 })
    merged(await integrate({ workspace: heir.ws, task: 't1', epoch: 2, verify: 'true', checkFence: stillHeld }))
    const tip = await repo.tip()
    await writeFile(go, '')

    expect(await running).toMatchObject({ name: 'FencedError' })
    expect(await repo.tip()).toBe(tip)
    expect(await sh(repo.bare, ['rev-list', 'main'])).not.toContain(old.work)
  }, 120_000)

  it('lets the holder land more work in the same epoch, and a later epoch after it', async () => {
    const a = await agentWithWork('a1', 't1', { 'one.txt': '1\n' })
    merged(await integrate({ workspace: a.ws, task: 't1', epoch: 1, verify: 'true', checkFence: stillHeld }))
    await commitFiles(a.ws.dir, { 'two.txt': '2\n' })
    const second = merged(await integrate({ workspace: a.ws, task: 't1', epoch: 1, verify: 'true', checkFence: stillHeld }))
    expect(await sh(repo.bare, ['rev-parse', taskFenceRef('t1')])).toBe(second)

    // Someone else at the same epoch is not the holder the remote knows.
    const rival = await agentWithWork('a2', 't1', { 'rival.txt': 'x\n' })
    await expect(integrate({ workspace: rival.ws, task: 't1', epoch: 1, verify: 'true', checkFence: stillHeld })).rejects.toMatchObject({
      name: 'FencedError'
    })
    const later = merged(await integrate({ workspace: rival.ws, task: 't1', epoch: 3, verify: 'true', checkFence: stillHeld }))
    expect(await readTaskFence(rival.ws, 't1')).toEqual({ task: 't1', epoch: 3, agent: 'a2', commit: later })
  })

  it("the integrator sets each landed task's ref in the same push, and refuses a request the remote has superseded", async () => {
    const heir = await agentWithWork('heir', 't1', { 'heir.txt': 'the takeover\n' })
    merged(await integrate({ workspace: heir.ws, task: 't1', epoch: 2, verify: 'true', checkFence: stillHeld }))

    // Two requests published as their authors would: a stale one for t1 at epoch 1, a good one for t2.
    const requests = []
    for (const [agent, task, file] of [
      ['old', 't1', 'old.txt'],
      ['b', 't2', 'b.txt']
    ]) {
      const { ws, work } = await agentWithWork(agent, task, { [file]: `${agent}\n` })
      await sh(ws.dir, ['push', '--quiet', 'origin', `${work}:${requestRefName(agent, task)}`])
      requests.push({ ref: requestRefName(agent, task), commit: work, task, epoch: 1, author: agent })
    }
    const integrator = await agentWorkspace(repo, 'int')
    const r = await integrateBatch({ workspace: integrator, requests, verify: 'true' })

    expect(r.landed.map(l => l.request.task)).toEqual(['t2'])
    expect(r.refused).toEqual([
      {
        request: requests[0],
        reason: expect.stringMatching(/t1 is at epoch 2 on the shared remote \(heir\)/),
        fenced: { epoch: 2, agent: 'heir' }
      }
    ])
    expect(await sh(repo.bare, ['rev-parse', taskFenceRef('t2')])).toBe(r.landed[0].commit)
    expect(await fenceOf('t2')).toBe('t2@1\nb')
    expect(await fenceOf('t1')).toBe('t1@2\nheir')
    expect(await sh(repo.bare, ['rev-list', 'main'])).not.toContain(requests[0].commit)
  })

  it('the integrator lands one request per task per batch, and leaves the next for the next batch', async () => {
    const requests = []
    for (const [agent, epoch, file] of [
      ['a', 1, 'a.txt'],
      ['b', 2, 'b.txt']
    ] as const) {
      const { ws, work } = await agentWithWork(agent, 't1', { [file]: `${agent}\n` })
      await sh(ws.dir, ['push', '--quiet', 'origin', `${work}:${requestRefName(agent, 't1')}`])
      requests.push({ ref: requestRefName(agent, 't1'), commit: work, task: 't1', epoch, author: agent })
    }
    const integrator = await agentWorkspace(repo, 'int')
    const first = await integrateBatch({ workspace: integrator, requests, verify: 'true' })
    expect(first.landed.map(l => l.request.author)).toEqual(['a'])
    expect(first.deferred).toEqual([{ request: requests[1], reason: expect.stringMatching(/another request for task t1/) }])
    const second = await integrateBatch({ workspace: integrator, requests: [requests[1]], verify: 'true' })
    expect(second.landed.map(l => l.request.author)).toEqual(['b'])
    expect(await fenceOf('t1')).toBe('t1@2\nb')
  })

  it('proves a landing to its holder retrying after the log entry was lost, and to no other claim', async () => {
    const holder = await agentWithWork('amy', 't1', { 'amy.txt': 'landed\n' })
    const landed = merged(await integrate({ workspace: holder.ws, task: 't1', epoch: 3, verify: 'true', checkFence: stillHeld }))

    // The retry: nothing new to push, and the fence names this claim with its merge on main.
    const again = await integrate({ workspace: holder.ws, task: 't1', epoch: 3, verify: 'false', checkFence: stillHeld })
    expect(again).toMatchObject({ result: 'up-to-date', landing: landed })
    expect(await fetchProvenLanding(holder.ws, 't1', 3, 'amy')).toBe(landed)
    expect(await landedPaths(holder.ws.dir, landed)).toEqual(['amy.txt'])

    // The same claim at a later epoch, another agent, another task: not proven.
    expect(await integrate({ workspace: holder.ws, task: 't1', epoch: 4, verify: 'true', checkFence: stillHeld })).toMatchObject({
      result: 'up-to-date',
      landing: null
    })
    expect(await fetchProvenLanding(holder.ws, 't1', 4, 'amy')).toBeNull()
    expect(await fetchProvenLanding(holder.ws, 't1', 3, 'bob')).toBeNull()
    expect(await fetchProvenLanding(holder.ws, 't2', 3, 'amy')).toBeNull()

    // A fence whose commit is not on the shared branch proves nothing.
    await sh(repo.bare, ['update-ref', 'refs/heads/main', `${landed}^1`])
    expect(await fetchProvenLanding(holder.ws, 't1', 3, 'amy')).toBeNull()
  })

  it('keeps request refs out of the task-ref namespace', () => {
    expect(() => requestRefName('tasks', 't1')).toThrow(/reserved/)
    expect(taskFenceRef('t1')).toBe('refs/agency/tasks/t1')
    expect(() => taskFenceRef('../x')).toThrow(/not usable in a git ref name/)
  })
})
