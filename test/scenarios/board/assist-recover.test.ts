// An assistant's integration whose push landed but whose integration entry a
// crash lost: the retried integrate finds the branch already on main, the
// remote's task fence names the assistant at the holder's epoch, so the
// landing is recorded then, with a test run of what is known of its verify,
// and the task is done by the assistant, as if the entry had been written. Real in-process daemons and a real shared repository.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { decodeBody } from '../../../src/core/log/kinds.js'
import { integrate } from '../../../src/repo/integrate.js'
import { commitFiles } from '../../repo/git-fixtures.js'
import { waitFor } from '../../helpers/wait-for.js'
import { startAssistSwarm, type AssistSwarm } from './assist-swarm.js'

let swarm: AssistSwarm
beforeAll(async () => {
  swarm = await startAssistSwarm(['amy', 'bob'], 'test -f hello/hello.txt')
}, 120_000)
afterAll(async () => {
  await swarm?.cleanup()
})

describe('an assist whose landing the log lost', () => {
  it('is recorded by the retried integrate from the fence, and the task is done by the assistant', async () => {
    const [amy, bob] = swarm.daemons
    const joined = await bob.assist({ task: 'core', approach: 'write the greeting by hand', stop: '' })
    expect(joined.outcome).toBe('ASSISTING')
    await commitFiles(bob.workspacePath(), { 'hello/hello.txt': 'hello\n' })
    const epoch = bob.boardService.board.holder('core')?.epoch ?? -1
    // The crash: pushed through the repo layer, nothing appended.
    const pushed = await integrate({
      workspace: bob.repo().workspace,
      task: 'core',
      epoch,
      agentId: bob.peerId,
      branch: joined.taskBranch,
      verify: 'true',
      checkFence: async () => {}
    })
    if (pushed.result !== 'merged') throw new Error(`the landing did not land: ${JSON.stringify(pushed)}`)
    expect(bob.boardService.board.task('core', bob.boardService.now())?.state).toBe('claimed')

    const retried = await bob.repo().integrate('', '')
    expect(retried).toMatchObject({ result: 'merged', commit: pushed.commit, epoch })
    expect(retried.summary).toContain('recovered')
    expect(retried.summary).toContain('core is done by you')
    const entries = bob.logService.state
      .ordered()
      .filter(e => e.entry.kind === 'integration')
      .map(e => decodeBody('integration', e.entry.body))
    expect(entries).toEqual([expect.objectContaining({ task: 'core', epoch, commit: pushed.commit, result: 'merged' })])
    // What is known of its verify: it passed (the push follows a green verify only); the counts died with the daemon.
    expect(bob.boardService.board.testRuns()).toEqual([
      expect.objectContaining({ commit: pushed.commit, passed: 1, failed: 0, summary: 'recovered' })
    ])
    for (const d of [amy, bob]) {
      await waitFor(() => d.boardService.board.task('core', d.boardService.now())?.doneBy === bob.peerId, {
        what: `${d.name} to see core done by bob`
      })
    }
  })
})
