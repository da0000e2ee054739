// Verify without landing (repo/verify-merge.ts): what a background integrate
// runs before it requests integration while an integrator serves. The merge
// of the handed-over commit onto the shared branch is verified in a scratch
// tree; nothing is pushed, and the agent's working tree is not touched (it
// may be dirty with its next task's work).
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { FencedError } from '../../src/repo/errors.js'
import { integrate } from '../../src/repo/integrate.js'
import { verifyMerge } from '../../src/repo/verify-merge.js'
import { pushRequestRef } from '../../src/repo/integrator.js'
import { agentWorkspace, commitFiles, makeSharedRepo, sh, snapshot, write, type SharedRepo } from './git-fixtures.js'

let repo: SharedRepo
beforeEach(async () => {
  repo = await makeSharedRepo({ 'README.md': '# shared\n', 'shared.txt': 'one\n' })
})
afterEach(async () => {
  await repo.cleanup()
})

describe('verifyMerge', () => {
  it("verifies the merge of the handed-over commit, pushes nothing, and leaves the agent's dirty tree alone", async () => {
    const ws = await agentWorkspace(repo, 'a1')
    await ws.checkoutTask('t1')
    const work = await commitFiles(ws.dir, { 'feature.txt': 'hello\n' })
    // the agent goes on: another branch, uncommitted work
    await ws.checkoutTask('t2')
    await write(ws.dir, 'next.txt', 'half done\n')
    const before = await snapshot(ws.dir)
    const tip = await repo.tip()

    const green = await verifyMerge({ workspace: ws, task: 't1', epoch: 1, commit: work, verify: 'test -f feature.txt' })
    expect(green).toMatchObject({ result: 'green', base: tip })
    const red = await verifyMerge({ workspace: ws, task: 't1', epoch: 1, commit: work, verify: 'test -f missing.txt' })
    expect(red).toMatchObject({ result: 'failed', base: tip })

    expect(await repo.tip()).toBe(tip)
    expect(await snapshot(ws.dir)).toBe(before)
    // the verified commit, not the branch's tip nor the dirty tree, is what a request publishes
    await commitFiles(ws.dir, { 'later.txt': 'x\n' })
    expect((await pushRequestRef(ws, 't1', { commit: work })).commit).toBe(work)
    expect(await sh(repo.bare, ['rev-parse', 'refs/agency/a1/t1'])).toBe(work)
  })

  it('says conflict and up-to-date as integrate would', async () => {
    const ws = await agentWorkspace(repo, 'a1')
    await ws.checkoutTask('t1')
    const work = await commitFiles(ws.dir, { 'shared.txt': 'mine\n' })
    const other = await agentWorkspace(repo, 'a2')
    await other.checkoutTask('t2')
    await commitFiles(other.dir, { 'shared.txt': 'theirs\n' })
    expect((await integrate({ workspace: other, task: 't2', epoch: 1, verify: 'true', checkFence: async () => {} })).result).toBe('merged')

    expect(await verifyMerge({ workspace: ws, task: 't1', epoch: 1, commit: work, verify: 'true' })).toMatchObject({
      result: 'conflict',
      files: ['shared.txt']
    })
    const landed = await sh(repo.bare, ['rev-parse', 'main~1'])
    expect(await verifyMerge({ workspace: ws, task: 't1', epoch: 1, commit: landed, verify: 'false' })).toMatchObject({
      result: 'up-to-date'
    })
  })

  it("refuses, without a verify, a claim the remote's task fence has superseded", async () => {
    const ws = await agentWorkspace(repo, 'a1')
    await ws.checkoutTask('t1')
    const work = await commitFiles(ws.dir, { 'feature.txt': 'mine\n' })
    const other = await agentWorkspace(repo, 'a2')
    await other.checkoutTask('t1')
    await commitFiles(other.dir, { 'other.txt': 'theirs\n' })
    expect((await integrate({ workspace: other, task: 't1', epoch: 2, verify: 'true', checkFence: async () => {} })).result).toBe('merged')

    await expect(verifyMerge({ workspace: ws, task: 't1', epoch: 1, commit: work, verify: 'exit 99' })).rejects.toBeInstanceOf(FencedError)
  })
})
