// The done of an assist that landed survives a daemon stopping between the
// landing and the done: real in-process daemons and a real shared git
// repository. amy holds core, dan holds side, ivy integrates, bob and cat
// assist. bob's daemon stops writing dones (its assist service stops, as when
// the daemon shuts down) right before his work lands, directly (side) or
// through ivy's batch (core); restarted on its data dir, it writes the done
// once, the holders are told once and bob's own notices are not repeated.
// Then cat, restarted cut off from the swarm, is handed bob's feed (with his
// done) before ivy's (with the integration that makes it count): she is told
// core was done when the integration arrives, once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { commitFiles, sh } from '../../repo/git-fixtures.js'
import { rejectionOf } from './helpers.js'
import { waitFor } from '../../helpers/wait-for.js'
import { notices, startAssistSwarm, type AssistSwarm } from './assist-swarm.js'
import { decodeBody } from '../../../src/core/log/kinds.js'
import type { Daemon } from '../../../src/daemon/daemon.js'
import { REMEMBERED_PEERS_KEY } from '../../../src/daemon/remembered-peers.js'
import { openStore } from '../../../src/store/open-store.js'

let swarm: AssistSwarm
let amy: Daemon
let ivy: Daemon
let bob: Daemon
let cat: Daemon
let dan: Daemon

beforeAll(async () => {
  swarm = await startAssistSwarm(['amy', 'ivy', 'bob', 'cat', 'dan'], 'true')
  ;[amy, ivy, bob, cat, dan] = swarm.daemons
  await ivy.announce('integrating: use agency request-integration')
  await amy.addTasks([{ id: 'side', title: 'side', description: '', deps: [], scope: ['side/**'], priority: 0 }])
  await waitFor(() => dan.boardService.board.task('side', dan.boardService.now()) !== undefined, { what: 'dan to see side' })
  expect((await dan.claimTask('side', [], false)).outcome).toBe('HELD')
  await waitFor(() => swarm.daemons.every(d => d.boardService.board.task('side', d.boardService.now())?.state === 'claimed'), {
    what: 'everyone to see side held'
  })
}, 120_000)

afterAll(async () => {
  await swarm?.cleanup()
})

/** The done entries `by` wrote for `task`, in `d`'s log. */
function donesOf(d: Daemon, by: Daemon, task: string): string[] {
  return d.logService.state
    .ordered(new Set(['done']))
    .filter(e => e.entry.author === by.peerId && decodeBody('done', e.entry.body).task === task)
    .map(e => e.id)
}

/** `author`'s feed as `from` holds it, in seq order, as bytes. */
function feedOf(from: Daemon, author: string): Uint8Array[] {
  const out: Uint8Array[] = []
  for (let seq = 1; ; seq++) {
    const e = from.logService.state.byAuthorSeq(author, seq)
    if (e === undefined) return out
    out.push(e.bytes)
  }
}

/** Waits until `d` has a notice of `kind` whose text contains `part`; returns all such. */
async function toldOf(d: Daemon, kind: string, part: string): Promise<string[]> {
  return await waitFor(
    async () => {
      const found = (await notices(d, kind)).filter(t => t.includes(part))
      return found.length > 0 ? found : undefined
    },
    { what: `${d.name} to get a ${kind} notice on ${part}` }
  )
}

/** Restarts bob on his data dir (bootstrapping from amy, as before) and waits until the dones it writes at start are on its log. */
async function restartBob(): Promise<void> {
  bob = await swarm.cluster.restart(bob)
  await waitFor(() => bob.presence.isLive(amy.peerId), { what: 'bob to see amy again' })
  await bob.assists.settled()
}

/**
 * Restarts bob: his done of `task` is written once, everyone sees the task
 * done by him, its holder is told once; a second restart changes nothing.
 */
async function expectDoneOnceAfterRestarts(task: string, holder: Daemon, commit?: string): Promise<void> {
  await restartBob()
  expect(bob.boardService.board.doneRecord(task)).toMatchObject({ by: bob.peerId, epoch: 1, ...(commit !== undefined ? { commit } : {}) })
  expect(donesOf(bob, bob, task)).toHaveLength(1)
  for (const d of [amy, ivy, dan]) {
    await waitFor(() => d.boardService.board.task(task, d.boardService.now())?.doneBy === bob.peerId, {
      what: `${d.name} to see ${task} done by bob`
    })
  }
  const told = await toldOf(holder, 'claim_lost', task)
  expect(told).toHaveLength(1)
  expect(told[0]).toContain(`done by ${bob.peerId} (an assistant)`)

  await restartBob()
  expect(donesOf(bob, bob, task)).toHaveLength(1)
  expect((await notices(holder, 'claim_lost')).filter(t => t.includes(task))).toHaveLength(1)
}

describe('an assist that landed while its daemon stopped', () => {
  it('writes the done of a direct integration at the next start, once, and the holder is told once', async () => {
    await bob.assist({ task: 'side', approach: 'write the side file from a heredoc', stop: '' })
    await commitFiles(bob.workspacePath(), { 'side/side.txt': 'side by bob\n' })
    // The daemon stops writing dones: its work lands, its done does not.
    bob.assists.stop()
    const r = await rejectionOf(async () => await bob.repo().integrate('', ''))
    expect(r.code).toBe('FAILED_PRECONDITION')
    expect(r.message).toContain('your assist of side landed, but its done is not written yet')
    expect(await sh(swarm.repo.bare, ['log', '-1', '--format=%B', 'main'])).toContain('Agency-Task: side@1')
    expect(bob.boardService.board.landedBy('side', 1, bob.peerId)).toBe(true)
    expect(bob.boardService.board.doneRecord('side')).toBeUndefined()
    expect(donesOf(bob, bob, 'side')).toEqual([])

    await expectDoneOnceAfterRestarts('side', dan)
  })

  it('writes the done of a request an integrator landed at the next start, once; nobody is told twice', async () => {
    // cat assists core too, and is gone before anything lands (the last test brings her back).
    await cat.assist({ task: 'core', approach: 'generate the greeting from a node script', stop: '' })
    await cat.stop()

    await bob.assist({ task: 'core', approach: 'write the greeting with printf from a shell script', stop: '' })
    await commitFiles(bob.workspacePath(), { 'hello/hello.txt': 'hello from bob\n' })
    bob.assists.stop()
    const asked = await bob.repo().requestIntegration('')
    await waitFor(() => ivy.repo().pendingRequests().length === 1, { what: "ivy to see bob's request" })
    const batch = await ivy.repo().runIntegrator(32)
    expect(batch).toMatchObject({ landed: ['core'], failed: [] })
    await waitFor(() => bob.boardService.board.landedBy('core', 1, bob.peerId), { what: "bob to hold ivy's integration" })
    const landed = await toldOf(bob, 'integration', 'core@1')
    expect(landed).toHaveLength(1)
    expect(bob.boardService.board.doneRecord('core')).toBeUndefined()
    expect(donesOf(bob, bob, 'core')).toEqual([])
    expect(asked.entryId).not.toBe('')

    await expectDoneOnceAfterRestarts('core', amy, batch.commit)
    // bob's own notice of the landing is not told again by the restarts.
    expect((await notices(bob, 'integration')).filter(t => t.includes('core@1'))).toHaveLength(1)
  })

  it('tells another assistant core is done when the integration that makes the done count arrives after the done, once', async () => {
    // alone: without the peers of her last run, which a restart redials (remembered-peers), ivy's feed
    // could reach her by sync before the test hands it over
    await cat.stop()
    const store = await openStore(cat.config.dataDir)
    try {
      await store.state.del(REMEMBERED_PEERS_KEY)
    } finally {
      await store.close()
    }
    cat = await swarm.cluster.restart(cat, { peers: [] })
    expect(cat.assists.current()?.task).toBe('core')
    // bob's feed first: his request and his done, which does not count yet (nothing landed his work on cat's board).
    await cat.logService.ingestBatchBytes(feedOf(bob, bob.peerId), bob.peerId)
    expect(donesOf(cat, bob, 'core')).toHaveLength(1)
    expect(cat.boardService.board.doneRecord('core')).toBeUndefined()
    expect((await notices(cat, 'assist')).filter(t => t.includes('was done by'))).toEqual([])

    // Then ivy's, with the merged integration answering bob's request.
    await cat.logService.ingestBatchBytes(feedOf(ivy, ivy.peerId), ivy.peerId)
    expect(cat.boardService.board.doneRecord('core')).toMatchObject({ by: bob.peerId, epoch: 1 })
    const told = await toldOf(cat, 'assist', 'was done by')
    expect(told).toEqual([expect.stringContaining(`task core, which you assist, was done by ${bob.peerId}`)])
    // Everything again (duplicates): nobody is told twice.
    await cat.logService.ingestBatchBytes([...feedOf(bob, bob.peerId), ...feedOf(ivy, ivy.peerId)], bob.peerId)
    expect((await notices(cat, 'assist')).filter(t => t.includes('was done by'))).toHaveLength(1)
  })
})
