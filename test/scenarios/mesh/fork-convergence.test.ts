// Two daemons that hold different branches of a forked author's feed find the
// fork over the real sync protocol (head ids differ where seqs agree), agree
// on its fork point, and show the same board: nothing the author wrote from
// the fork point on counts.
import { multiaddr } from '@multiformats/multiaddr'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { entryId, signEntry } from '../../../src/core/log/entry.js'
import { encodeBody, type EntryKind } from '../../../src/core/log/kinds.js'
import type { Daemon } from '../../../src/daemon/daemon.js'
import type { Entry } from '../../../src/gen/agency/v1/log.js'
import { InProcessDaemons } from '../../helpers/in-process-daemons.js'
import { waitFor } from '../../helpers/wait-for.js'
import { makeIdentity, type TestIdentity } from '../../helpers/identity.js'

const daemons = new InProcessDaemons()
afterAll(async () => {
  await daemons.stopAll()
})

let x: TestIdentity
beforeAll(async () => {
  x = await makeIdentity()
})

function feed(from: number, prev: Uint8Array, bodies: Array<[EntryKind, object]>): Entry[] {
  return bodies.map(([kind, body], i) => {
    const e = signEntry(x.signer, { seq: from + i, prev, lamport: from + i, time: Date.now(), kind, body: encodeBody(kind, body as never) })
    prev = entryId(e)
    return e
  })
}

/** What a board says about the tasks: who holds each at which epoch, and who is faulty from where. */
function boardView(d: Daemon): unknown {
  const b = d.boardService.board
  return {
    tasks: b.tasks(0).map(t => ({ id: t.id, holder: t.holder ?? null, epoch: t.epoch, done: t.doneBy ?? null })),
    faulty: b.faultyAuthors()
  }
}

describe('a forked author between two daemons', () => {
  it('is found over sync, and both boards show the same holders', async () => {
    const common = feed(1, new Uint8Array(0), [
      ['task', { id: 't1', title: 't1' }],
      ['task', { id: 't2', title: 't2' }],
      ['claim', { task: 't1', epoch: 1 }]
    ])
    const tip = entryId(common[2])
    const branchA = feed(4, tip, [
      ['claim', { task: 't2', epoch: 1 }],
      ['finding', { kind: 'note', text: 'a' }]
    ])
    const branchB = feed(4, tip, [
      ['release', { task: 't1', epoch: 1, note: '', branch: '' }],
      ['finding', { kind: 'note', text: 'b' }]
    ])
    const [one, two] = [await daemons.start(), await daemons.start()]
    await one.logService.ingestBatch([...common, ...branchA], 'test')
    await two.logService.ingestBatch([...common, ...branchB], 'test')
    // Same seqs on both: only the heads tell them apart.
    expect(one.logService.state.vector()).toEqual(two.logService.state.vector())
    expect(boardView(one)).not.toEqual(boardView(two))

    await one.node.dial(multiaddr(two.listenAddrs()[0]))
    for (const d of [one, two]) {
      await waitFor(() => d.logService.state.forkPoint(x.id)?.exact === true, {
        what: `${d.name} to find the fork point`,
        timeoutMs: 60_000
      })
    }
    expect(one.logService.state.forkPoint(x.id)).toEqual({ seq: 4, exact: true })
    expect(two.logService.state.forkPoint(x.id)).toEqual({ seq: 4, exact: true })
    await waitFor(() => JSON.stringify(boardView(one)) === JSON.stringify(boardView(two)), {
      what: 'the two boards to agree',
      timeoutMs: 30_000
    })
    expect(boardView(one)).toEqual({
      tasks: [
        { id: 't1', holder: x.id, epoch: 1, done: null },
        { id: 't2', holder: null, epoch: 0, done: null }
      ],
      faulty: [{ author: x.id, fromSeq: 4 }]
    })
    // The fork is reported, and neither daemon took the other's branch.
    expect(one.logService.state.byAuthorSeq(x.id, 4)?.id).toBe(Buffer.from(entryId(branchA[0])).toString('hex'))
    expect(two.logService.state.byAuthorSeq(x.id, 4)?.id).toBe(Buffer.from(entryId(branchB[0])).toString('hex'))
  }, 120_000)
})
