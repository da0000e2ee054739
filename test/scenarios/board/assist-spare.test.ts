// Spare assist places between real in-process daemons (core/board/assist-spare):
// with a budget of 1 and 1 spare place, amy holds core and bob, cat and dan have
// nothing to claim. Three free agents for one place: core has two places; bob and
// cat take them, each with an approach of his own; dan, the one free agent left,
// finds core full (no place is left to outnumber) and is refused with both figures.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { rejectionOf } from './helpers.js'
import { waitFor } from '../../helpers/wait-for.js'
import { startAssistSwarm, type AssistSwarm } from './assist-swarm.js'
import type { Daemon } from '../../../src/daemon/daemon.js'

let swarm: AssistSwarm
let bob: Daemon
let cat: Daemon
let dan: Daemon

beforeAll(async () => {
  swarm = await startAssistSwarm(['amy', 'bob', 'cat', 'dan'], 'test -f hello/hello.txt', {
    options: { assist: { budget: 1, floorMs: 0, spare: 1 } }
  })
  ;[, bob, cat, dan] = swarm.daemons
}, 120_000)

afterAll(async () => {
  await swarm?.cleanup()
})

describe('spare assist places while more agents are free than places are left', () => {
  it('opens a place beyond the budget for the free agents, and closes it when they are no longer more', async () => {
    const offer = (await bob.claimNextTask([])).assist
    expect(offer).toMatchObject({ outcome: 'OFFER', task: 'core', assistants: 0, budget: 2 })
    expect((await bob.assist({ task: 'core', approach: 'write the greeting with printf', stop: '' })).outcome).toBe('ASSISTING')

    await waitFor(() => cat.assists.look('core').assistants === 1, { what: "cat to see bob's approach" })
    // cat and dan free, no place left at the budget: the spare place is open
    expect(cat.assists.look('core')).toMatchObject({ assistants: 1, budget: 2 })
    expect((await cat.assist({ task: 'core', approach: 'generate the file from a node script', stop: '' })).outcome).toBe('ASSISTING')

    await waitFor(() => dan.assists.offer()?.outcome === 'NONE', { what: "dan to see cat's approach" })
    const full = await rejectionOf(async () => await dan.assist({ task: 'core', approach: 'copy it from a template', stop: '' }))
    expect(full.code).toBe('FAILED_PRECONDITION')
    expect(full.message).toContain('2 assistant(s) already, the budget per task (1, 2 while more agents are free than places are left)')
  })
})
