// A malformed integration request, written by a peer, is refused with its
// reason in the log, and the integrator goes on: the good request in the same
// batch lands, and the next run does not trip over the bad one again.
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { decodeBody } from '../../src/core/log/kinds.js'
import { InProcessDaemons } from '../helpers/in-process-daemons.js'
import { commitFiles, makeSharedRepo, setIdentity, sh, type SharedRepo } from '../repo/git-fixtures.js'

const daemons = new InProcessDaemons()
let repo: SharedRepo | undefined
afterAll(async () => {
  await daemons.stopAll()
  await repo?.cleanup()
})

describe('the integrator and a malformed request', () => {
  it('records the refusal with its reason and lands the rest of the batch', async () => {
    repo = await makeSharedRepo()
    const d = await daemons.start({ repo: { remote: repo.bare, branch: 'main', workdir: join(repo.root, 'integrator'), verify: 'true', mirrorDir: join(repo.root, 'mirrors') } })
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
    const refusal = entries.filter(e => e.entry.kind === 'integration').map(e => decodeBody('integration', e.entry.body)).find(i => i.task === 'bad')
    expect(refusal).toMatchObject({ result: 'refused', commit: '' })
    const why = entries.filter(e => e.entry.kind === 'finding').map(e => decodeBody('finding', e.entry.body)).find(f => f.tags.includes('task:bad'))
    expect(why?.text).toMatch(/is refused: ref "refs\/heads\/main" is not the author's request ref/)
    expect(why?.tags).toContain('refused')

    // Answered: the next run has nothing to do and throws nothing.
    expect(await d.repo().runIntegrator(16)).toMatchObject({ landed: [], failed: [], pending: 0 })
  }, 120_000)
})
