// Two daemons hold claims whose scopes share paths: both holders get an
// 'overlap' event and each gets a direct message from the other naming the
// tasks and the shared paths, so the agents talk. Disjoint scopes stay quiet.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Daemon } from '../../../src/daemon/daemon.js'
import type { InboxRecord } from '../../../src/store/index.js'
import { EventRecorder, MemoryCluster, addrsOf, detailOf, livePeerIds, waitForTaskEverywhere } from './helpers.js'
import { waitFor } from '../../helpers/wait-for.js'

const TASKS = [
  { id: 'wide', scope: ['src/a/**'] },
  { id: 'narrow', scope: ['src/a/x.ts'] },
  { id: 'left', scope: ['src/a/**'] },
  { id: 'right', scope: ['src/b/**'] }
]

async function inboxFrom(d: Daemon, from: string): Promise<InboxRecord[]> {
  return (await d.readInbox(0, 1000)).filter(r => r.message.from === from)
}

const isOverlapNotice = (r: InboxRecord): boolean => r.message.text.includes('scope overlap')

describe('overlap alerts between live claims', () => {
  const cluster = new MemoryCluster()
  let a: Daemon
  let b: Daemon
  let eventsA: EventRecorder
  let eventsB: EventRecorder

  beforeAll(async () => {
    a = await cluster.start()
    b = await cluster.start({ peers: addrsOf(a) })
    eventsA = new EventRecorder(a)
    eventsB = new EventRecorder(b)
    await waitFor(() => livePeerIds(a).includes(b.peerId) && livePeerIds(b).includes(a.peerId), { what: 'a and b to see each other live' })
    for (const t of TASKS) await a.boardService.addTask({ id: t.id, title: t.id, description: '', deps: [], scope: t.scope, priority: 0 })
    for (const t of TASKS) await waitForTaskEverywhere([a, b], t.id)
  }, 60_000)

  afterAll(async () => {
    eventsA?.stop()
    eventsB?.stop()
    await cluster.cleanup()
  }, 30_000)

  it('tells both holders when src/a/** and src/a/x.ts are claimed', async () => {
    const wide = await a.boardService.claim('wide', ['src/a/**'])
    expect(wide.outcome).toBe('HELD')
    const narrow = await b.boardService.claim('narrow', ['src/a/x.ts'])
    expect(narrow.outcome).toBe('HELD')
    // The later claimant learns of the overlap in its answer too.
    expect(narrow.overlaps).toEqual([a.peerId])

    const onA = await waitFor(() => eventsA.ofType('overlap')[0], { what: 'an overlap event on a' })
    const onB = await waitFor(() => eventsB.ofType('overlap')[0], { what: 'an overlap event on b' })
    expect(onA).toMatchObject({ task: 'wide', peerId: b.peerId })
    expect(detailOf(onA)).toMatchObject({ myTask: 'wide', otherTask: 'narrow', other: b.peerId })
    expect(onB).toMatchObject({ task: 'narrow', peerId: a.peerId })
    expect(detailOf(onB)).toMatchObject({ myTask: 'narrow', otherTask: 'wide', other: a.peerId })
    // The shared paths: the pair of globs that intersect (the other's first).
    for (const e of [onA, onB]) {
      expect(detailOf(e).paths).toHaveLength(1)
      expect(detailOf(e).paths[0]).toMatch(/^src\/a\/(\*\*|x\.ts) ~ src\/a\/(\*\*|x\.ts)$/)
      expect(detailOf(e).paths[0]).toContain('src/a/x.ts')
      expect(detailOf(e).paths[0]).toContain('src/a/**')
    }

    // Each holder gets a direct message from the other, naming both tasks and the paths.
    const toA = await waitFor(async () => (await inboxFrom(a, b.peerId)).find(isOverlapNotice), {
      what: "an overlap notice from b in a's inbox"
    })
    const toB = await waitFor(async () => (await inboxFrom(b, a.peerId)).find(isOverlapNotice), {
      what: "an overlap notice from a in b's inbox"
    })
    for (const notice of [toA, toB]) {
      expect(notice.message.text).toContain('wide')
      expect(notice.message.text).toContain('narrow')
      expect(notice.message.text).toContain('src/a/x.ts')
    }
    expect(toA.message.text).toContain('my task narrow')
    expect(toB.message.text).toContain('my task wide')

    // Once per pair: the events are not repeated.
    expect(eventsA.ofType('overlap')).toHaveLength(1)
    expect(eventsB.ofType('overlap')).toHaveLength(1)
  }, 60_000)

  it('stays quiet for src/a/** and src/b/**', async () => {
    await a.boardService.release('wide', '', '')
    await b.boardService.release('narrow', '', '')
    await waitFor(() => [a, b].every(d => d.boardService.board.holder('wide') == null && d.boardService.board.holder('narrow') == null), {
      what: 'both releases on both boards'
    })
    const before = { a: eventsA.ofType('overlap').length, b: eventsB.ofType('overlap').length }

    const left = await a.boardService.claim('left', ['src/a/**'])
    const right = await b.boardService.claim('right', ['src/b/**'])
    expect(left.outcome).toBe('HELD')
    expect(right.outcome).toBe('HELD')
    expect(right.overlaps).toEqual([])
    // Both claims are on both boards: any overlap would have been raised by now.
    await waitFor(
      () =>
        [a, b].every(
          d => d.boardService.board.holder('left')?.holder === a.peerId && d.boardService.board.holder('right')?.holder === b.peerId
        ),
      { what: 'both claims on both boards' }
    )
    expect(eventsA.ofType('overlap')).toHaveLength(before.a)
    expect(eventsB.ofType('overlap')).toHaveLength(before.b)

    // A probe sent after the claims arrives after any notice sent before it.
    await a.sendMessage({ to: b.peerId, text: 'probe from a' })
    await b.sendMessage({ to: a.peerId, text: 'probe from b' })
    await waitFor(
      async () =>
        (await inboxFrom(b, a.peerId)).some(r => r.message.text === 'probe from a') &&
        (await inboxFrom(a, b.peerId)).some(r => r.message.text === 'probe from b'),
      { what: 'the probes' }
    )
    expect((await inboxFrom(a, b.peerId)).filter(isOverlapNotice)).toHaveLength(1)
    expect((await inboxFrom(b, a.peerId)).filter(isOverlapNotice)).toHaveLength(1)
  }, 60_000)
})
