import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { integrateBatch, pushRequestRef, type IntegrationRequest } from '../../src/repo/integrator.js'
import { agentWorkspace, commitFiles, makeSharedRepo, setIdentity, sh, type SharedRepo } from './git-fixtures.js'

let repo: SharedRepo | undefined
afterEach(async () => {
  await repo?.cleanup()
  repo = undefined
})

/**
 * Agent a<i> commits `files[i]` on task t<i> and publishes it as
 * refs/agency/a<i>/t<i>; returns the requests in that order. One clone makes
 * them all (pushRequestRef has its own tests), which keeps the suite fast.
 */
async function publish(shared: SharedRepo, files: Array<Record<string, string>>): Promise<IntegrationRequest[]> {
  const authors = join(shared.root, 'authors')
  await sh(shared.root, ['clone', '--quiet', shared.bare, authors])
  await setIdentity(authors, 'authors')
  const requests: IntegrationRequest[] = []
  for (const [i, f] of files.entries()) {
    await sh(authors, ['switch', '--quiet', '--detach', 'origin/main'])
    const commit = await commitFiles(authors, f, `a${i} on t${i}`)
    const ref = `refs/agency/a${i}/t${i}`
    await sh(authors, ['push', '--quiet', 'origin', `${commit}:${ref}`])
    requests.push({ ref, commit, task: `t${i}`, epoch: i + 1, author: `a${i}` })
  }
  return requests
}

const refsOf = async (shared: SharedRepo): Promise<string> => await sh(shared.bare, ['for-each-ref', '--format=%(refname)', 'refs/agency'])

describe('pushRequestRef', () => {
  it('publishes the task branch as refs/agency/<agent>/<task>, and re-publishes it after more work', async () => {
    repo = await makeSharedRepo()
    const ws = await agentWorkspace(repo, 'a1')
    await ws.checkoutTask('t1')
    const first = await commitFiles(ws.dir, { 'a.txt': '1' })
    expect(await pushRequestRef(ws, 't1')).toEqual({ ref: 'refs/agency/a1/t1', commit: first })
    expect(await sh(repo.bare, ['rev-parse', 'refs/agency/a1/t1'])).toBe(first)

    await sh(ws.dir, ['commit', '--quiet', '--amend', '-m', 'reworded'])
    const second = await sh(ws.dir, ['rev-parse', 'HEAD'])
    expect((await pushRequestRef(ws, 't1')).commit).toBe(second)
    expect(await sh(repo.bare, ['rev-parse', 'refs/agency/a1/t1'])).toBe(second)
  })

  it('lets another agent take the task over from the published branch', async () => {
    repo = await makeSharedRepo()
    const ws = await agentWorkspace(repo, 'a1')
    await ws.checkoutTask('t1')
    const work = await commitFiles(ws.dir, { 'a.txt': '1' })
    await pushRequestRef(ws, 't1')
    const heir = await agentWorkspace(repo, 'a2')
    expect(await heir.checkoutTask('t1', { from: 'refs/agency/a1/t1' })).toEqual({ branch: 'agency/a2/t1', created: true })
    expect(await sh(heir.dir, ['rev-parse', 'HEAD'])).toBe(work)
    await expect(heir.checkoutTask('t2', { from: 'refs/agency/a9/t2' })).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: /refs\/agency\/a9\/t2/
    })
    expect(await heir.currentBranch()).toBe('agency/a2/t1')
  })

  it('refuses a dirty workspace and a task without a branch', async () => {
    repo = await makeSharedRepo()
    const ws = await agentWorkspace(repo, 'a1')
    await ws.checkoutTask('t1')
    await writeFile(join(ws.dir, 'loose.txt'), 'x')
    await expect(pushRequestRef(ws, 't1')).rejects.toMatchObject({ name: 'DirtyWorkspaceError' })
    await expect(pushRequestRef(ws, 'other')).rejects.toMatchObject({ name: 'TaskBranchNotFoundError' })
    expect(await refsOf(repo)).toBe('')
  })
})

describe('pushRequestRef for an assistant', () => {
  it("publishes a named branch (an assist branch) under the agent's own ref, refusing one with no commits beyond the shared branch", async () => {
    repo = await makeSharedRepo()
    const holder = await agentWorkspace(repo, 'h')
    await holder.checkoutTask('t1')
    const held = await commitFiles(holder.dir, { 'h.txt': 'holder' })
    const helper = await agentWorkspace(repo, 'a')
    await helper.checkoutTask('t1-assist-1')
    const branch = helper.taskBranch('t1-assist-1')
    await expect(pushRequestRef(helper, 't1', { branch, requireNewCommits: true })).rejects.toMatchObject({
      name: 'NoNewCommitsError',
      code: 'FAILED_PRECONDITION',
      message: /agency\/a\/t1-assist-1 has no commits beyond main/
    })
    expect(await refsOf(repo)).toBe('')

    const work = await commitFiles(helper.dir, { 'a.txt': 'assistant' })
    expect(await pushRequestRef(helper, 't1', { branch, requireNewCommits: true })).toEqual({ ref: 'refs/agency/a/t1', commit: work })
    expect(await pushRequestRef(holder, 't1')).toEqual({ ref: 'refs/agency/h/t1', commit: held })
    // Neither request overwrites the other.
    expect(await sh(repo.bare, ['rev-parse', 'refs/agency/a/t1'])).toBe(work)
    expect(await sh(repo.bare, ['rev-parse', 'refs/agency/h/t1'])).toBe(held)
    await expect(pushRequestRef(helper, 't1', { branch: '../escape' })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' })
  })
})

describe('integrateBatch', () => {
  it('batches five branches, lands the four good ones in one push and reports the one that breaks the tests', async () => {
    repo = await makeSharedRepo()
    const requests = await publish(repo, [
      { 'f0.txt': '0' },
      { 'f1.txt': '1' },
      { 'f2.txt': '2' },
      { BAD: 'breaks the build' },
      { 'f4.txt': '4' }
    ])
    const integrator = await agentWorkspace(repo, 'int')
    const base = await repo.tip()

    const r = await integrateBatch({ workspace: integrator, requests, verify: 'echo checking; test ! -e BAD' })

    expect(r.landed.map(l => l.request.task)).toEqual(['t0', 't1', 't2', 't4'])
    expect(r.failed.map(f => f.request.task)).toEqual(['t3'])
    expect(r.failed[0].request.author).toBe('a3')
    expect(r.failed[0].summary).toMatch(/exit code 1/)
    expect(r).toMatchObject({ conflicts: [], deferred: [], alreadyMerged: [], attempts: 1, retries: 0 })
    expect(r.pushed).toBe(await repo.tip())

    // The four landed in log order, one merge each on the shared line, on top of the old tip.
    const line = (await sh(repo.bare, ['rev-list', '--first-parent', `${base}..main`])).split('\n').reverse()
    expect(line).toEqual(r.landed.map(l => l.commit))
    const history = await sh(repo.bare, ['rev-list', 'main'])
    for (const req of requests) expect(history.includes(req.commit)).toBe(req.task !== 't3')
    expect(await sh(repo.bare, ['ls-tree', '--name-only', 'main'])).not.toContain('BAD')

    // Each merge names the request it landed, its author and the integrator.
    const trailers = await sh(repo.bare, ['log', '-1', '--format=%(trailers:only,unfold)', r.landed[3].commit])
    expect(trailers).toBe('Agency-Task: t4@5\nAgency-Agent: a4\nAgency-Integrator: int')

    // Landed request refs are cleaned up; the bad one stays for its author. Each landed task has its fence.
    expect(await refsOf(repo)).toBe(['refs/agency/a3/t3', ...['t0', 't1', 't2', 't4'].map(t => `refs/agency/tasks/${t}`)].join('\n'))
    expect(await sh(repo.bare, ['rev-parse', 'refs/agency/tasks/t4'])).toBe(r.landed[3].commit)
    expect(await sh(repo.bare, ['fsck', '--no-progress', '--no-dangling', '--strict'])).toBe('')
  }, 120_000) // generous on a loaded machine; no timing is asserted

  it('verifies a green batch once', async () => {
    repo = await makeSharedRepo()
    const requests = await publish(repo, [{ 'f0.txt': '0' }, { 'f1.txt': '1' }, { 'f2.txt': '2' }])
    const integrator = await agentWorkspace(repo, 'int')
    const r = await integrateBatch({ workspace: integrator, requests, verify: 'echo "3 passed, 0 failed"' })
    expect(r.landed).toHaveLength(3)
    expect(r.verifyRuns).toBe(1)
    expect(r.tests).toMatchObject({ passed: 3, failed: 0, format: 'plain' })
  })

  it('sets aside a branch that conflicts with an earlier one and lands the rest', async () => {
    repo = await makeSharedRepo({ 'shared.txt': 'one\ntwo\n' })
    const requests = await publish(repo, [{ 'shared.txt': 'one\nTWO\n' }, { 'shared.txt': 'one\n2\n' }, { 'other.txt': 'x' }])
    const integrator = await agentWorkspace(repo, 'int')
    const r = await integrateBatch({ workspace: integrator, requests, verify: 'true' })
    expect(r.landed.map(l => l.request.task)).toEqual(['t0', 't2'])
    expect(r.conflicts).toEqual([{ request: requests[1], files: ['shared.txt'] }])
    expect(await sh(repo.bare, ['show', 'main:shared.txt'])).toBe('one\nTWO')
  })

  it('blames nobody when the shared branch fails verify on its own', async () => {
    repo = await makeSharedRepo({ RED: 'the shared branch is broken' })
    const requests = await publish(repo, [{ 'f0.txt': '0' }, { 'f1.txt': '1' }])
    const integrator = await agentWorkspace(repo, 'int')
    const tip = await repo.tip()
    const r = await integrateBatch({ workspace: integrator, requests, verify: 'test ! -e RED' })
    expect(r.failed).toEqual([])
    expect(r.deferred.map(d => d.request.task)).toEqual(['t0', 't1'])
    expect(r.deferred[0].reason).toMatch(/fails verify on its own/)
    expect(r.pushed).toBeNull()
    expect(await repo.tip()).toBe(tip)
  })

  it('reports requests already in the shared history and ones whose commit is gone', async () => {
    repo = await makeSharedRepo()
    const [req] = await publish(repo, [{ 'f0.txt': '0' }])
    // On main without an integration of it (no task fence names it).
    await sh(repo.bare, ['update-ref', 'refs/heads/main', req.commit])
    const integrator = await agentWorkspace(repo, 'int')
    const ghost = { ref: 'refs/agency/a9/t9', task: 't9', epoch: 1, author: 'a9', commit: 'f'.repeat(40) }
    const r = await integrateBatch({ workspace: integrator, requests: [req, ghost], verify: 'true' })
    expect(r.alreadyMerged).toEqual([req])
    expect(r.recovered).toEqual([])
    expect(r.deferred.map(d => d.request)).toEqual([ghost])
    expect(r.pushed).toBeNull()
  })

  it('answers a request an earlier batch landed (its entries lost) from the task fence, without pushing again', async () => {
    repo = await makeSharedRepo()
    const [a, b] = await publish(repo, [{ 'f0.txt': '0' }, { 'f1.txt': '1' }])
    const integrator = await agentWorkspace(repo, 'int')
    // The batch that landed; its caller died before writing the log entries.
    const first = await integrateBatch({ workspace: integrator, requests: [a, b], verify: 'true', deleteLandedRefs: false })
    expect(first.landed.map(l => l.request)).toEqual([a, b])
    const tip = await repo.tip()

    // The same requests again, and one that names the fence's task but another author or epoch.
    const otherAuthor = { ...a, author: 'a7', ref: 'refs/agency/a7/t0' }
    await sh(repo.bare, ['update-ref', otherAuthor.ref, a.commit])
    const otherEpoch = { ...b, epoch: b.epoch + 1 }
    const again = await integrateBatch({ workspace: integrator, requests: [a, b], verify: 'false' })
    expect(again.recovered).toEqual(first.landed)
    expect(again).toMatchObject({ landed: [], alreadyMerged: [], failed: [], pushed: null, verifyRuns: 0 })
    expect(await repo.tip()).toBe(tip)
    // Recovered requests are landed ones: their refs are cleaned up as landed refs are.
    expect(await sh(repo.bare, ['for-each-ref', '--format=%(refname)', 'refs/agency/a0', 'refs/agency/a1'])).toBe('')

    const foreign = await integrateBatch({ workspace: integrator, requests: [otherAuthor, otherEpoch], verify: 'true' })
    expect(foreign.recovered).toEqual([])
    expect(foreign.refused.map(x => x.request)).toEqual([otherAuthor])
    // Epoch 3 is above the fence's 2: not proven landed, so it is merged as any request (already in history here).
    expect(foreign.alreadyMerged).toEqual([otherEpoch])
  })

  it('refuses malformed requests one by one, each with its reason, and lands the rest of the batch', async () => {
    repo = await makeSharedRepo()
    const [a, b] = await publish(repo, [{ 'f0.txt': '0' }, { 'f1.txt': '1' }])
    // A commit with a history of its own: git refuses to merge it.
    const stranger = join(repo.root, 'stranger')
    await sh(repo.root, ['init', '--quiet', '-b', 'main', stranger])
    await setIdentity(stranger, 'stranger')
    const orphan = await commitFiles(stranger, { 'alien.txt': 'x' }, 'unrelated history')
    await sh(stranger, ['push', '--quiet', repo.bare, `${orphan}:refs/agency/a5/t5`])
    const unrelated = { ref: 'refs/agency/a5/t5', commit: orphan, task: 't5', epoch: 1, author: 'a5' }
    const bad = [
      { ...a, ref: 'refs/heads/main' },
      { ...a, commit: 'HEAD' },
      { ...a, task: '../../x' },
      { ...a, epoch: 1.5 },
      { ...a, author: 'a7' } // someone else's ref under a7's name
    ]
    const integrator = await agentWorkspace(repo, 'int')

    const r = await integrateBatch({
      workspace: integrator,
      requests: [bad[0], a, bad[1], bad[2], unrelated, bad[3], b, bad[4]],
      verify: 'true'
    })

    expect(r.landed.map(l => l.request)).toEqual([a, b])
    expect(r.pushed).toBe(await repo.tip())
    expect(r.refused.map(x => x.request)).toEqual([bad[0], bad[1], bad[2], bad[3], bad[4], unrelated])
    expect(r.refused.map(x => x.reason)).toEqual([
      expect.stringMatching(/not the author's request ref/),
      expect.stringMatching(/not a full hex object id/),
      expect.stringMatching(/not usable in a git ref name/),
      expect.stringMatching(/not a non-negative integer/),
      expect.stringMatching(/not the author's request ref refs\/agency\/a7\/t0/),
      expect.stringMatching(/unrelated histories/)
    ])
    expect(await sh(repo.bare, ['ls-tree', '--name-only', 'main'])).not.toContain('alien.txt')
  })

  it("lands the first of a holder's and an assistant's requests for one task; the other waits a batch, then the remote's fence refuses it", async () => {
    repo = await makeSharedRepo()
    const [assistant, holder] = await publish(repo, [{ 'a.txt': 'assistant' }, { 'h.txt': 'holder' }])
    // Both for task t0 at epoch 1, each under its author's own ref.
    const requests = [
      { ...assistant, epoch: 1 },
      { ...holder, task: 't0', epoch: 1, ref: 'refs/agency/a1/t0' }
    ]
    await sh(repo.bare, ['update-ref', 'refs/agency/a1/t0', holder.commit])
    const integrator = await agentWorkspace(repo, 'int')

    const first = await integrateBatch({ workspace: integrator, requests, verify: 'true' })
    expect(first.landed.map(l => l.request)).toEqual([requests[0]])
    expect(first.deferred).toEqual([
      { request: requests[1], reason: expect.stringContaining('another request for task t0 is in this batch') }
    ])
    expect(await sh(repo.bare, ['log', '-1', '--format=%(trailers:key=Agency-Agent,valueonly)', 'refs/agency/tasks/t0'])).toBe('a0')

    const second = await integrateBatch({ workspace: integrator, requests: [requests[1]], verify: 'true' })
    expect(second.landed).toEqual([])
    expect(second.pushed).toBeNull()
    expect(second.refused).toEqual([
      { request: requests[1], reason: expect.stringContaining('another holder at the same epoch'), fenced: { epoch: 1, agent: 'a0' } }
    ])
    expect(await sh(repo.bare, ['ls-tree', '--name-only', 'main'])).not.toContain('h.txt')
  })

  it('still refuses a batch that is not a list, or too long, and a verify command that does not exist', async () => {
    repo = await makeSharedRepo()
    const [req] = await publish(repo, [{ 'f0.txt': '0' }])
    const integrator = await agentWorkspace(repo, 'int')
    const tip = await repo.tip()
    await expect(integrateBatch({ workspace: integrator, requests: 'x' as never, verify: 'true' })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT'
    })
    await expect(integrateBatch({ workspace: integrator, requests: Array(300).fill(req), verify: 'true' })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT'
    })
    await expect(integrateBatch({ workspace: integrator, requests: [req], verify: 'no-such-runner' })).rejects.toMatchObject({
      name: 'VerifyCommandNotFoundError'
    })
    expect(await repo.tip()).toBe(tip)
  })
})
