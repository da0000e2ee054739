import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { FailedPreconditionError } from '../../src/core/errors.js'
import { integrate, type IntegrateResult } from '../../src/repo/integrate.js'
import type { Workspace } from '../../src/repo/workspace.js'
import { agentWorkspace, commitFiles, makeSharedRepo, noJitter, sh, snapshot, type SharedRepo } from './git-fixtures.js'

let repo: SharedRepo
beforeEach(async () => {
  repo = await makeSharedRepo({ 'README.md': '# shared\n', 'shared.txt': 'one\ntwo\nthree\n' })
})
afterEach(async () => {
  await repo.cleanup()
})

const held = async (): Promise<void> => {}

/** A workspace for `agentId` on task `task` with one commit of `files`. */
async function agentWithWork(agentId: string, task: string, files: Record<string, string>): Promise<{ ws: Workspace; work: string }> {
  const ws = await agentWorkspace(repo, agentId)
  await ws.checkoutTask(task)
  const work = await commitFiles(ws.dir, files, `${agentId} works on ${task}`)
  return { ws, work }
}

function expectResult<R extends IntegrateResult['result']>(r: IntegrateResult, kind: R): Extract<IntegrateResult, { result: R }> {
  expect(r.result, JSON.stringify(r)).toBe(kind)
  return r as Extract<IntegrateResult, { result: R }>
}

describe('integrate', () => {
  it('merges the task branch onto the shared branch with the fence trailers, and leaves the agent where it was', async () => {
    const { ws, work } = await agentWithWork('a1', 't1', { 'feature.txt': 'hello\n' })
    const before = await snapshot(ws.dir)
    const base = await repo.tip()

    const r = expectResult(
      await integrate({
        workspace: ws,
        task: 't1',
        epoch: 3,
        agentId: 'a1',
        message: 'Add feature',
        verify: 'test -f feature.txt',
        checkFence: held
      }),
      'merged'
    )

    expect(await repo.tip()).toBe(r.commit)
    expect(r).toMatchObject({ base, attempts: 1, retries: 0, paths: ['feature.txt'] })
    expect(await sh(repo.bare, ['rev-parse', `${r.commit}^1`, `${r.commit}^2`])).toBe(`${base}\n${work}`)
    const trailers = await sh(repo.bare, ['log', '-1', '--format=%(trailers:only,unfold)', r.commit])
    expect(trailers).toBe('Agency-Task: t1@3\nAgency-Agent: a1')
    expect(await sh(repo.bare, ['log', '-1', '--format=%s', r.commit])).toBe('Add feature')
    expect(await snapshot(ws.dir)).toBe(before)
  })

  it('lands all eight of eight agents integrating at once, counting the retries', async () => {
    const agents = await Promise.all(
      Array.from({ length: 8 }, async (_, i) => await agentWithWork(`agent${i}`, `task${i}`, { [`file${i}.txt`]: `agent ${i}\n` }))
    )

    const results = await Promise.all(
      agents.map(
        async ({ ws }, i) =>
          await integrate({ workspace: ws, task: `task${i}`, epoch: 1, verify: 'true', checkFence: held, maxAttempts: 20 })
      )
    )

    for (const r of results) expectResult(r, 'merged')
    const history = await sh(repo.bare, ['rev-list', 'main'])
    for (const [i, { work }] of agents.entries()) {
      expect(history).toContain(work)
      expect(history).toContain((results[i] as { commit: string }).commit)
    }
    const files = await sh(repo.bare, ['ls-tree', '--name-only', 'main'])
    for (let i = 0; i < 8; i++) expect(files).toContain(`file${i}.txt`)
    // One merge commit per agent on the shared line: none lost, none twice.
    const merges = (await sh(repo.bare, ['log', '--first-parent', '--merges', '--format=%(trailers:key=Agency-Agent,valueonly)', 'main']))
      .split('\n')
      .filter(Boolean)
    expect(merges.sort()).toEqual(agents.map((_, i) => `agent${i}`).sort())
    // Each lost race is a retry; the counts are reported, however many there were.
    for (const r of results) expect(r.retries).toBe(r.attempts - 1)
    // Rejected pushes leave dangling objects behind; those are not damage.
    expect(await sh(repo.bare, ['fsck', '--no-progress', '--no-dangling', '--strict'])).toBe('')
  }, 180_000) // a few hundred git processes: generous on a loaded machine, no timing asserted

  it('returns the conflicting files when two agents change the same lines, and pushes nothing', async () => {
    const first = await agentWithWork('a1', 't1', { 'shared.txt': 'one\nTWO by a1\nthree\n' })
    const second = await agentWithWork('a2', 't2', { 'shared.txt': 'one\ntwo by a2\nthree\n' })
    expectResult(await integrate({ workspace: first.ws, task: 't1', epoch: 1, verify: 'true', checkFence: held }), 'merged')
    const tip = await repo.tip()
    const before = await snapshot(second.ws.dir)

    const r = expectResult(await integrate({ workspace: second.ws, task: 't2', epoch: 1, verify: 'true', checkFence: held }), 'conflict')

    expect(r.files).toEqual(['shared.txt'])
    expect(await repo.tip()).toBe(tip)
    expect(await snapshot(second.ws.dir)).toBe(before)
  })

  it('does not push when the tests fail, and says how they failed', async () => {
    const { ws } = await agentWithWork('a1', 't1', { 'feature.txt': 'x\n' })
    const tip = await repo.tip()

    const r = expectResult(
      await integrate({
        workspace: ws,
        task: 't1',
        epoch: 1,
        checkFence: held,
        verify: 'echo "running 2 tests"; echo "1 passed, 1 failed"; exit 1'
      }),
      'failed'
    )

    expect(r.tests).toEqual({ passed: 1, failed: 1, skipped: 0, total: 2, format: 'plain' })
    expect(r.exitCode).toBe(1)
    expect(r.summary).toMatch(/1 failed, 1 passed/)
    expect(await repo.tip()).toBe(tip)
  })

  it('does not push a green exit code when the output reports failed tests', async () => {
    const { ws } = await agentWithWork('a1', 't1', { 'feature.txt': 'x\n' })
    const tip = await repo.tip()
    const r = expectResult(
      await integrate({ workspace: ws, task: 't1', epoch: 1, checkFence: held, verify: 'echo "Tests: 1 failed, 2 passed, 3 total"' }),
      'failed'
    )
    expect(r.tests).toMatchObject({ failed: 1, format: 'jest' })
    expect(await repo.tip()).toBe(tip)
  })

  it('is refused when the claim was lost, before anything is fetched or pushed', async () => {
    const { ws } = await agentWithWork('a1', 't1', { 'feature.txt': 'x\n' })
    const tip = await repo.tip()
    const lost = async (): Promise<void> => {
      throw new FailedPreconditionError('claim on t1 was lost to a2 at epoch 2')
    }

    await expect(integrate({ workspace: ws, task: 't1', epoch: 1, verify: 'true', checkFence: lost })).rejects.toMatchObject({
      code: 'FAILED_PRECONDITION',
      message: /lost to a2/
    })
    expect(await repo.tip()).toBe(tip)
  })

  it('is refused when the claim is lost while the tests run', async () => {
    const { ws } = await agentWithWork('a1', 't1', { 'feature.txt': 'x\n' })
    const tip = await repo.tip()
    let checks = 0
    const losesAfterFirstCheck = async (): Promise<void> => {
      if (++checks > 1) throw new FailedPreconditionError('claim lost')
    }
    await expect(integrate({ workspace: ws, task: 't1', epoch: 1, verify: 'true', checkFence: losesAfterFirstCheck })).rejects.toThrow(
      'claim lost'
    )
    expect(checks).toBe(2)
    expect(await repo.tip()).toBe(tip)
  })

  it('reports a branch that is already in the shared history as up to date', async () => {
    const { ws } = await agentWithWork('a1', 't1', { 'feature.txt': 'x\n' })
    const merged = expectResult(await integrate({ workspace: ws, task: 't1', epoch: 1, verify: 'true', checkFence: held }), 'merged')
    const again = expectResult(await integrate({ workspace: ws, task: 't1', epoch: 1, verify: 'true', checkFence: held }), 'up-to-date')
    expect(again.commit).toBe(merged.commit)
  })

  it('gives up as contended after the attempts, never claiming a push that did not land', async () => {
    const { ws } = await agentWithWork('a1', 't1', { 'feature.txt': 'x\n' })
    // Each verify run, another writer lands a commit first: every push is non-fast-forward.
    const other = await agentWithWork('a2', 't2', { 'r.txt': '' })
    let n = 0
    const racer = join(other.ws.dir, 'race.sh')
    await writeFile(
      racer,
      `cd ${other.ws.dir} && git pull -q --no-rebase origin main && echo x >> r.txt && git add r.txt && git commit -qm race && git push -q origin HEAD:main\n`
    )
    const r = expectResult(
      await integrate({
        workspace: ws,
        task: 't1',
        epoch: 1,
        checkFence: async () => {
          n++
        },
        maxAttempts: 3,
        jitter: noJitter,
        verify: `sh ${racer} >/dev/null 2>&1`
      }),
      'contended'
    )
    expect(r).toMatchObject({ attempts: 3, retries: 2 })
    expect(await sh(repo.bare, ['rev-list', 'main'])).not.toContain(await sh(ws.dir, ['rev-parse', 'agency/a1/t1']))
    expect(n).toBe(4) // once up front, once before each push
  })

  it('verifies with paths linked from the workspace, such as installed dependencies', async () => {
    const { ws } = await agentWithWork('a1', 't1', { '.gitignore': 'node_modules\n' })
    await writeFile(join(ws.dir, 'node_modules'), 'installed\n') // ignored, so the workspace stays clean
    const verify = 'test -e node_modules'
    expectResult(await integrate({ workspace: ws, task: 't1', epoch: 1, verify, checkFence: held }), 'failed')
    expectResult(
      await integrate({ workspace: ws, task: 't1', epoch: 1, verify, checkFence: held, linkFromWorkspace: ['node_modules'] }),
      'merged'
    )
  })

  describe('bad input gives a clear error and changes nothing', () => {
    it('a dirty workspace', async () => {
      const { ws } = await agentWithWork('a1', 't1', { 'feature.txt': 'x\n' })
      await writeFile(join(ws.dir, 'forgotten.txt'), 'not committed')
      const before = await snapshot(ws.dir)
      const tip = await repo.tip()
      const err = await integrate({ workspace: ws, task: 't1', epoch: 1, verify: 'true', checkFence: held }).catch(e => e)
      expect(err).toMatchObject({ name: 'DirtyWorkspaceError', code: 'FAILED_PRECONDITION', files: ['forgotten.txt'] })
      expect(err.message).toMatch(/forgotten\.txt/)
      expect(await snapshot(ws.dir)).toBe(before)
      expect(await repo.tip()).toBe(tip)
    })

    it('a verify command that does not exist, by name or by path', async () => {
      const { ws } = await agentWithWork('a1', 't1', { 'feature.txt': 'x\n' })
      const before = await snapshot(ws.dir)
      const tip = await repo.tip()
      for (const verify of ['no-such-test-runner --all', './scripts/no-such-script.sh']) {
        const err = await integrate({ workspace: ws, task: 't1', epoch: 1, verify, checkFence: held }).catch(e => e)
        expect(err).toMatchObject({ name: 'VerifyCommandNotFoundError', code: 'INVALID_ARGUMENT' })
        expect(err.message).toMatch(/no-such-/)
      }
      expect(await snapshot(ws.dir)).toBe(before)
      expect(await repo.tip()).toBe(tip)
    })

    it('a task without a branch, a bad epoch, an empty verify command', async () => {
      const { ws } = await agentWithWork('a1', 't1', { 'feature.txt': 'x\n' })
      await expect(integrate({ workspace: ws, task: 'never-started', epoch: 1, verify: 'true', checkFence: held })).rejects.toMatchObject({
        name: 'TaskBranchNotFoundError',
        code: 'FAILED_PRECONDITION'
      })
      await expect(integrate({ workspace: ws, task: 't1', epoch: -1, verify: 'true', checkFence: held })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT'
      })
      await expect(integrate({ workspace: ws, task: 't1', epoch: 1, verify: '  ', checkFence: held })).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT'
      })
    })

    it('a remote that has gone away', async () => {
      const { ws } = await agentWithWork('a1', 't1', { 'feature.txt': 'x\n' })
      const before = await snapshot(ws.dir)
      const { rename } = await import('node:fs/promises')
      await rename(repo.bare, `${repo.bare}.gone`)
      await expect(integrate({ workspace: ws, task: 't1', epoch: 1, verify: 'true', checkFence: held })).rejects.toMatchObject({
        name: 'RemoteUnavailableError',
        code: 'UNAVAILABLE'
      })
      expect(await snapshot(ws.dir)).toBe(before)
      await rename(`${repo.bare}.gone`, repo.bare)
    })
  })
})
