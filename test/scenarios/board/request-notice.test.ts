// What became of an integration request is told to its author even when its
// daemon died between the integration arriving and the notice being stored:
// the notice is derived from the board at start, and written once. Real
// in-process daemons and a real shared repository: amy holds core and asks
// ivy, the integrator, to land it; amy's notice writer is stopped (the notice
// is lost) while ivy lands it; amy restarts and is told, once; a second
// restart tells her nothing new.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { commitFiles } from '../../repo/git-fixtures.js'
import { waitFor } from '../../helpers/wait-for.js'
import { notices, startAssistSwarm, type AssistSwarm } from './assist-swarm.js'
import type { Daemon } from '../../../src/daemon/daemon.js'

let swarm: AssistSwarm
beforeAll(async () => {
  swarm = await startAssistSwarm(['amy', 'ivy'], 'test -f hello/hello.txt')
}, 120_000)
afterAll(async () => {
  await swarm?.cleanup()
})

async function landedNotices(d: Daemon): Promise<string[]> {
  return (await notices(d, 'integration')).filter(t => t.includes('your integration request for core@1 landed'))
}

describe("a request's result whose notice a crash lost", () => {
  it('is told at the next start, once', async () => {
    let [amy] = swarm.daemons
    const ivy = swarm.daemons[1]
    await commitFiles(amy.workspacePath(), { 'hello/hello.txt': 'hello\n' })
    const asked = await amy.repo().requestIntegration('core')
    // The crash window: the integration arrives, no notice is stored.
    amy.notices.stop()
    await waitFor(() => ivy.repo().pendingRequests().length === 1, { what: "ivy to see amy's request" })
    expect((await ivy.repo().runIntegrator(32)).landed).toEqual(['core'])
    await waitFor(() => amy.boardService.board.integrationResults().some(i => i.request === asked.entryId && i.result === 'merged'), {
      what: 'amy to fold the integration'
    })
    expect(await landedNotices(amy)).toEqual([])

    amy = await swarm.cluster.restart(amy)
    await amy.notices.caughtUp()
    const told = await landedNotices(amy)
    expect(told).toHaveLength(1)
    expect(told[0]).toContain('your daemon marked core done')

    amy = await swarm.cluster.restart(amy)
    await amy.notices.caughtUp()
    expect(await landedNotices(amy)).toHaveLength(1)
  })
})
