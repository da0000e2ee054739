// Hand-off by the holder's own speed between real in-process daemons
// (core/board/handoff-choice.ts, slowByRecord): bob finishes three tasks in 10
// minutes each and amy two in an hour each (their clocks are moved on before
// each done), so the board's median claim-to-done time is 10 minutes and amy's
// own is an hour. Slow by her record, amy's daemon hands core off once she has
// held it for the median alone, not for 2 x it: refused at 9 minutes, handed to
// an idle peer at 15.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { decodeBody } from '../../../src/core/log/kinds.js'
import { commitFiles } from '../../repo/git-fixtures.js'
import { waitFor } from '../../helpers/wait-for.js'
import { startAssistSwarm, type AssistSwarm } from './assist-swarm.js'
import type { Daemon } from '../../../src/daemon/daemon.js'

const MIN = 60_000
let swarm: AssistSwarm
let amy: Daemon
let bob: Daemon
let cat: Daemon
const ahead: Record<string, number> = { amy: 0, bob: 0 }

beforeAll(async () => {
  swarm = await startAssistSwarm(['amy', 'bob', 'cat'], 'test -f README.md', {
    options: { handoff: { factor: 2, floorMs: MIN, checkMs: 60 * 60_000 } },
    parts: name => (name in ahead ? { wallClock: () => Date.now() + ahead[name] } : {})
  })
  ;[amy, bob, cat] = swarm.daemons
}, 120_000)

afterAll(async () => {
  await swarm?.cleanup()
})

/** `d` (named `name`) claims `task`, lands a file for it, and writes its done `minutes` later on its clock. */
async function finish(d: Daemon, name: string, task: string, minutes: number): Promise<void> {
  await waitFor(() => d.boardService.board.task(task, d.boardService.now()) !== undefined, { what: `${name} to see ${task}` })
  expect((await d.claimTask(task, [], false)).outcome).toBe('HELD')
  await commitFiles(d.workspacePath(), { [`${task}/done.txt`]: `${task}\n` })
  expect((await d.repo().integrate(task, '')).result).toBe('merged')
  ahead[name] += minutes * MIN
  await d.doneTask(task, '', [], '')
}

describe("hand-off by the holder's own speed", () => {
  it('hands a holder slow by its record off past the usual time, not 2 x it', async () => {
    const quick = ['q1', 'q2', 'q3', 'q4', 'q5']
    await amy.addTasks(quick.map(id => ({ id, title: id, description: '', deps: [], scope: [`${id}/**`], priority: 5 })))
    for (const t of ['q1', 'q2', 'q3']) await finish(bob, 'bob', t, 10)
    for (const t of ['q4', 'q5']) await finish(amy, 'amy', t, 60)
    await waitFor(() => quick.every(t => amy.boardService.board.doneRecord(t) !== undefined), { what: 'amy to see every quick task done' })
    expect(amy.boardService.board.doneTimesByAgent().get(amy.peerId)?.length).toBe(2)

    const since = amy.boardService.board.claimTime('core') as number
    ahead.amy = since + 9 * MIN - Date.now()
    expect(amy.handoffs.decide('core')).toMatchObject({
      refusal: expect.stringMatching(/past 10 min \(1 x the median claim-to-done time 10 min; \S+'s own median 60 min over 2 done tasks/)
    })
    ahead.amy = since + 15 * MIN - Date.now()
    const d = amy.handoffs.decide('core')
    expect(d).toMatchObject({ text: expect.stringContaining('own median 60 min') })
    // the median alone (its tasks took 10 minutes and the seconds of their integrations), not 2 x it
    const limit = d.receiver !== undefined ? d.limitMs : 0
    expect(limit).toBeGreaterThanOrEqual(10 * MIN)
    expect(limit).toBeLessThan(11 * MIN)
    expect([bob.peerId, cat.peerId]).toContain(d.receiver?.agent)

    await amy.handoffs.check()
    const released = amy.logService.state
      .ordered()
      .filter(e => e.entry.kind === 'release')
      .map(e => decodeBody('release', e.entry.body))
    expect(released).toEqual([expect.objectContaining({ task: 'core', epoch: 1 })])
    expect(amy.boardService.held()).toEqual([])
  })
})
