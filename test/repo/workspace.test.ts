import { existsSync } from 'node:fs'
import { mkdir, readFile, readdir, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openWorkspace } from '../../src/repo/workspace.js'
import { agentWorkspace, commitFiles, makeSharedRepo, sh, snapshot, type SharedRepo } from './git-fixtures.js'

let repo: SharedRepo
beforeEach(async () => {
  repo = await makeSharedRepo()
})
afterEach(async () => {
  await repo.cleanup()
})

describe('openWorkspace', () => {
  it('clones the shared branch, then reuses the clone on the next start', async () => {
    const ws = await agentWorkspace(repo, 'a1')
    expect(await sh(ws.dir, ['rev-parse', 'HEAD'])).toBe(await repo.tip())
    expect(await sh(ws.dir, ['config', 'user.email'])).toBe('a1@example.test')
    await writeFile(join(ws.dir, 'scratch.txt'), 'kept')

    const again = await agentWorkspace(repo, 'a1')
    expect(again.dir).toBe(ws.dir)
    expect(await readFile(join(ws.dir, 'scratch.txt'), 'utf8')).toBe('kept')
  })

  it('accepts file:// for a clone made from a path', async () => {
    const ws = await agentWorkspace(repo, 'a1')
    const again = await openWorkspace({ remote: pathToFileURL(repo.bare).href, workdir: ws.dir, agentId: 'a1' })
    expect(again.dir).toBe(ws.dir)
  })

  it('refuses a workdir that is a clone of another repository or not a clone at all', async () => {
    const other = await makeSharedRepo()
    try {
      const ws = await agentWorkspace(repo, 'a1')
      await expect(openWorkspace({ remote: other.bare, workdir: ws.dir, agentId: 'a1' })).rejects.toMatchObject({
        name: 'WorkspaceMismatchError',
        code: 'FAILED_PRECONDITION'
      })
      const junk = join(repo.root, 'junk')
      await mkdir(junk)
      await writeFile(join(junk, 'file'), 'x')
      await expect(openWorkspace({ remote: repo.bare, workdir: junk, agentId: 'a1' })).rejects.toMatchObject({
        name: 'WorkspaceMismatchError'
      })
      expect(await readdir(junk)).toEqual(['file'])
    } finally {
      await other.cleanup()
    }
  })

  it('names a missing remote and creates nothing', async () => {
    const workdir = join(repo.root, 'agents', 'a1')
    const err = await openWorkspace({ remote: join(repo.root, 'nope.git'), workdir, agentId: 'a1' }).catch(e => e)
    expect(err).toMatchObject({ name: 'RemoteUnavailableError', code: 'UNAVAILABLE' })
    expect(err.message).toMatch(/nope\.git/)
    expect(existsSync(workdir)).toBe(false)
  })

  it('leaves an existing clone untouched when the remote has gone', async () => {
    const ws = await agentWorkspace(repo, 'a1')
    const before = await snapshot(ws.dir)
    await rename(repo.bare, `${repo.bare}.gone`)
    await expect(openWorkspace({ remote: repo.bare, workdir: ws.dir, agentId: 'a1' })).rejects.toMatchObject({
      name: 'RemoteUnavailableError',
      code: 'UNAVAILABLE'
    })
    expect(await snapshot(ws.dir)).toBe(before)
  })

  it('opens an existing clone as it is when asked to, while the remote is unreachable', async () => {
    const ws = await agentWorkspace(repo, 'a1')
    const before = await snapshot(ws.dir)
    await rename(repo.bare, `${repo.bare}.gone`)
    const again = await openWorkspace({ remote: repo.bare, workdir: ws.dir, agentId: 'a1', unreachableRemote: 'open' })
    expect(again.dir).toBe(ws.dir)
    expect(await snapshot(ws.dir)).toBe(before)
    // A fresh clone still needs the remote.
    await expect(
      openWorkspace({ remote: repo.bare, workdir: join(repo.root, 'fresh'), agentId: 'a2', unreachableRemote: 'open' })
    ).rejects.toMatchObject({ name: 'RemoteUnavailableError', code: 'UNAVAILABLE' })
    await rename(`${repo.bare}.gone`, repo.bare)
  })

  it('names a remote without the shared branch', async () => {
    await expect(openWorkspace({ remote: repo.bare, branch: 'trunk', workdir: join(repo.root, 'w'), agentId: 'a1' })).rejects.toMatchObject(
      { name: 'RemoteBranchNotFoundError', code: 'FAILED_PRECONDITION' }
    )
    expect(existsSync(join(repo.root, 'w'))).toBe(false)
  })

  it('rejects ids that could escape the ref namespace', async () => {
    await expect(openWorkspace({ remote: repo.bare, workdir: join(repo.root, 'w'), agentId: '../x' })).rejects.toMatchObject({
      code: 'INVALID_ARGUMENT'
    })
    const ws = await agentWorkspace(repo, 'a1')
    expect(() => ws.taskBranch('a/b')).toThrow(/not usable in a git ref/)
    expect(() => ws.taskBranch('x..y')).toThrow(/not usable/)
  })

  it('shares objects with other clones on the host through the mirror', async () => {
    const mirrorDir = join(repo.root, 'mirror')
    const [a, b] = await Promise.all([agentWorkspace(repo, 'a1', { mirrorDir }), agentWorkspace(repo, 'a2', { mirrorDir })])
    const mirrors = (await readdir(mirrorDir)).filter(n => n.endsWith('.git'))
    expect(mirrors).toHaveLength(1)
    for (const ws of [a, b]) {
      const alternates = await readFile(join(ws.gitDir, 'objects', 'info', 'alternates'), 'utf8')
      expect(alternates.trim()).toBe(join(mirrorDir, mirrors[0], 'objects'))
      // origin is the shared remote itself, not the mirror
      expect(await sh(ws.dir, ['config', 'remote.origin.url'])).toBe(repo.bare)
    }
    expect(await sh(repo.bare, ['fsck', '--no-progress'])).toBe('')
  })
})

describe('task branches', () => {
  it('creates agency/<agent>/<task> from the shared branch and switches back to it later', async () => {
    const ws = await agentWorkspace(repo, 'a1')
    expect(ws.taskBranch('t1')).toBe('agency/a1/t1')
    expect(await ws.checkoutTask('t1')).toEqual({ branch: 'agency/a1/t1', created: true })
    expect(await ws.currentBranch()).toBe('agency/a1/t1')
    const work = await commitFiles(ws.dir, { 'a.txt': 'a' })

    await ws.checkoutTask('t2')
    expect(await sh(ws.dir, ['rev-parse', 'HEAD'])).toBe(await repo.tip())
    expect(await ws.checkoutTask('t1')).toEqual({ branch: 'agency/a1/t1', created: false })
    expect(await sh(ws.dir, ['rev-parse', 'HEAD'])).toBe(work)
  })

  it('reports uncommitted and untracked changes as dirty', async () => {
    const ws = await agentWorkspace(repo, 'a1')
    expect(await ws.isDirty()).toBe(false)
    await writeFile(join(ws.dir, 'new.txt'), 'x')
    expect(await ws.dirtyFiles()).toEqual(['new.txt'])
    await sh(ws.dir, ['add', 'new.txt'])
    await writeFile(join(ws.dir, 'README.md'), 'changed')
    expect((await ws.dirtyFiles()).sort()).toEqual(['README.md', 'new.txt'])
    await expect(ws.assertClean()).rejects.toMatchObject({ name: 'DirtyWorkspaceError', code: 'FAILED_PRECONDITION' })
  })
})
