// Two background integrates in a row while the agent already edits its next
// task: the second waits for the first's verify (the clone's merges go one at
// a time), and by the time it runs the agent's working tree holds uncommitted
// work of a third task. It still lands what its request named: a background
// integrate merges the commit the request was made for, and never looks at the
// agent's tree (before, it asserted the tree clean when it started and so was
// refused as soon as the agent had begun the next task).
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { commitFiles, sh } from '../../repo/git-fixtures.js'
import { waitFor } from '../../helpers/wait-for.js'
import { startAssistSwarm, type AssistSwarm } from './assist-swarm.js'
import { VerifyGate } from './verify-gate.js'
import type { Daemon } from '../../../src/daemon/daemon.js'

let swarm: AssistSwarm
let amy: Daemon
let gate: VerifyGate

beforeAll(async () => {
  gate = await VerifyGate.make()
  swarm = await startAssistSwarm(['amy'], gate.command())
  amy = swarm.daemons[0]
  await amy.addTasks(['docs', 'lint'].map(id => ({ id, title: id, description: '', deps: [], scope: [`${id}/**`], priority: 0 })))
}, 120_000)
afterAll(async () => {
  await gate?.teardown([amy], async () => {
    await swarm?.cleanup()
  })
})

describe('background integrates queued while the agent works on', () => {
  it("lands each request's commit, whatever the agent's working tree holds by then", async () => {
    await commitFiles(amy.workspacePath(), { 'core/core.txt': 'core\n' })
    expect((await amy.repo().integrateInBackground('core', '')).result).toBe('accepted')
    const second = await amy.claimNextTask([])
    expect(second.outcome).toBe('HELD')
    await amy.repo().workspaceInfo(second.task)
    await commitFiles(amy.workspacePath(), { [`${second.task}/two.txt`]: 'two\n' })
    expect((await amy.repo().integrateInBackground(second.task, '')).result).toBe('accepted')
    const third = await amy.claimNextTask([])
    expect(third.outcome).toBe('HELD')
    expect([second.task, 'core']).not.toContain(third.task)
    await amy.repo().workspaceInfo(third.task)
    // The agent is at work on the third task: its tree is dirty when the second's integrate starts.
    await writeFile(join(amy.workspacePath(), 'draft.txt'), 'not committed yet\n')

    await gate.open()
    await amy.repo().backgroundSettled()
    expect(await sh(swarm.repo.bare, ['show', 'main:core/core.txt'])).toBe('core')
    expect(await sh(swarm.repo.bare, ['show', `main:${second.task}/two.txt`])).toBe('two')
    await waitFor(() => ['core', second.task].every(t => amy.boardService.board.doneRecord(t)?.by === amy.peerId), {
      what: 'both tasks done by amy'
    })
    // The agent's own work is where it left it.
    expect((await sh(amy.workspacePath(), ['status', '--porcelain'])).split('\n')).toContain('?? draft.txt')
  }, 120_000)
})
