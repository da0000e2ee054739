// A malformed integration request, written by a peer, is refused with its
// reason in the log, and the integrator goes on: the good request in the same
// batch lands, and the next run does not trip over the bad one again.
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { decodeBody } from '../../src/core/log/kinds.js'
import { integrateBatch } from '../../src/repo/integrator.js'
import { InProcessDaemons } from '../helpers/in-process-daemons.js'
import { commitFiles, makeSharedRepo, setIdentity, sh, type SharedRepo } from './git-fixtures.js'

const daemons = new InProcessDaemons()
let repo: SharedRepo | undefined
afterAll(async () => {
  await daemons.stopAll()
  await repo?.cleanup()
})

describe('the integrator and a malformed request', () => {
  it('records the refusal with its reason and lands the rest of the batch', async () => {
    repo = await makeSharedRepo()
    const d = await daemons.start({
      repo: {
        remote: repo.bare,
        branch: 'main',
        workdir: join(repo.root, 'integrator'),
        verify: 'true',
        mirrorDir: join(repo.root, 'mirrors')
      }
    })
    const me = d.peerId
    await d.boardService.addTask({ id: 'good', title: 'good', description: '', deps: [], scope: [], priority: 0 })

    // The good request: a branch published under this daemon's own request ref.
    const author = join(repo.root, 'author')
    await sh(repo.root, ['clone', '--quiet', repo.bare, author])
    await setIdentity(author, 'author')
    const commit = await commitFiles(author, { 'good.txt': 'good' })
    await sh(author, ['push', '--quiet', 'origin', `${commit}:refs/agency/${me}/good`])
    // What a broken or hostile peer could have written: not its own ref, a commit that is not a hex id.
    await d.logService.append('integration_request', { task: 'bad', epoch: 1, ref: 'refs/heads/main', commit: 'HEAD' })
    await d.logService.append('integration_request', { task: 'good', epoch: 1, ref: `refs/agency/${me}/good`, commit })

    const first = await d.repo().runIntegrator(16)
    expect(first.landed).toEqual(['good'])
    expect(first.failed).toEqual(['bad'])
    expect(await repo.tip()).toBe(first.commit)
    expect(await sh(repo.bare, ['ls-tree', '--name-only', 'main'])).toContain('good.txt')

    const entries = d.logService.state.ordered()
    const refusal = entries
      .filter(e => e.entry.kind === 'integration')
      .map(e => decodeBody('integration', e.entry.body))
      .find(i => i.task === 'bad')
    expect(refusal).toMatchObject({ result: 'refused', commit: '' })
    const why = entries
      .filter(e => e.entry.kind === 'finding')
      .map(e => decodeBody('finding', e.entry.body))
      .find(f => f.tags.includes('task:bad'))
    expect(why?.text).toMatch(/is refused: ref "refs\/heads\/main" is not the author's request ref/)
    expect(why?.tags).toContain('refused')

    // Answered: the next run has nothing to do and throws nothing.
    expect(await d.repo().runIntegrator(16)).toMatchObject({ landed: [], failed: [], pending: 0 })
  }, 120_000)
})

describe('the integrator after it died between its push and its log entries', () => {
  it('answers the pending requests the pushed batch landed, from the task fences, without pushing again', async () => {
    const shared = await makeSharedRepo()
    try {
      const d = await daemons.start({
        repo: {
          remote: shared.bare,
          branch: 'main',
          workdir: join(shared.root, 'integrator'),
          verify: 'true',
          mirrorDir: join(shared.root, 'mirrors')
        }
      })
      const me = d.peerId
      const author = join(shared.root, 'author')
      await sh(shared.root, ['clone', '--quiet', shared.bare, author])
      await setIdentity(author, 'author')
      const ids: Record<string, string> = {}
      for (const t of ['one', 'two']) {
        await d.boardService.addTask({ id: t, title: t, description: '', deps: [], scope: [], priority: 0 })
        await sh(author, ['switch', '--quiet', '--detach', 'origin/main'])
        const commit = await commitFiles(author, { [`${t}.txt`]: t })
        await sh(author, ['push', '--quiet', 'origin', `${commit}:refs/agency/${me}/${t}`])
        ids[t] = (await d.logService.append('integration_request', { task: t, epoch: 1, ref: `refs/agency/${me}/${t}`, commit })).id
      }
      // The crash: the batch's push landed (through the repo layer), its integration entries were never appended.
      const pushed = await integrateBatch({
        workspace: d.repo().workspace,
        requests: d
          .repo()
          .pendingRequests()
          .map(({ id: _id, ...r }) => r),
        verify: 'true'
      })
      expect(pushed.landed.map(l => l.request.task)).toEqual(['one', 'two'])
      const tip = await shared.tip()
      expect(d.repo().pendingRequests()).toHaveLength(2)

      const next = await d.repo().runIntegrator(16)
      expect(next).toMatchObject({ landed: ['one', 'two'], failed: [], conflicts: [], commit: '' })
      expect(await shared.tip()).toBe(tip)
      const answers = d.logService.state
        .ordered()
        .filter(e => e.entry.kind === 'integration')
        .map(e => decodeBody('integration', e.entry.body))
      expect(answers).toEqual(
        pushed.landed.map(l =>
          expect.objectContaining({
            task: l.request.task,
            epoch: 1,
            commit: l.commit,
            result: 'merged',
            paths: [`${l.request.task}.txt`],
            request: ids[l.request.task]
          })
        )
      )
      expect(d.boardService.board.integratedAt('one', 1)).toBe(pushed.landed[0].commit)

      // Answered once: the run after has nothing to do.
      expect(await d.repo().runIntegrator(16)).toMatchObject({ landed: [], failed: [], pending: 0 })
      expect(d.logService.state.ordered().filter(e => e.entry.kind === 'integration')).toHaveLength(2)
    } finally {
      await shared.cleanup()
    }
  }, 120_000)
})
