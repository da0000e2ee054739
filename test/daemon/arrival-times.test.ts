// accepted_at on the API's log entries: when this daemon took the entry in,
// whether it wrote it, synced it in from a peer at start, or had it gossiped.
import { afterAll, describe, expect, it } from 'vitest'
import { InProcessDaemons } from '../helpers/in-process-daemons.js'
import { waitFor } from '../helpers/wait-for.js'
import { logEntryView } from '../../src/api/log-entry-view.js'
import type { Daemon } from '../../src/daemon/daemon.js'

const fleet = new InProcessDaemons()
afterAll(async () => {
  await fleet.stopAll()
})

const view = (d: Daemon, id: string) => {
  const e = d.logService.state.get(id)
  if (e == null) throw new Error(`${id} is not in the log`)
  return logEntryView(e, d.logService.arrivals)
}

describe('accepted_at', () => {
  it('is the time this daemon took each entry in: own, synced in at start, and written later (gossiped, or synced if gossip missed it)', async () => {
    const a = await fleet.start({ name: 'writer' })
    const beforeOwn = Date.now()
    const own = await a.logService.append('finding', { kind: 'note', text: 'written before the peer came' })
    const ownView = view(a, own.id)
    expect(ownView.acceptedAt).toBeGreaterThanOrEqual(beforeOwn)
    expect(ownView.acceptedAt).toBeLessThanOrEqual(Date.now())

    const beforeJoin = Date.now()
    const b = await fleet.start({ name: 'joiner', peers: a.listenAddrs() })
    await waitFor(() => b.logService.state.get(own.id) != null, { what: 'the joiner to sync the earlier entry' })
    const synced = view(b, own.id)
    // the joiner's arrival, not the author's
    expect(synced.acceptedAt).toBeGreaterThanOrEqual(beforeJoin)
    expect(synced.acceptedAt).toBeGreaterThan(ownView.acceptedAt)

    const beforeGossip = Date.now()
    const next = await a.logService.append('finding', { kind: 'note', text: 'written with the peer there' })
    await waitFor(() => b.logService.state.get(next.id) != null, { what: 'the joiner to receive the new entry' })
    const gossiped = view(b, next.id)
    expect(gossiped.acceptedAt).toBeGreaterThanOrEqual(beforeGossip)
    expect(gossiped.acceptedAt).toBeLessThanOrEqual(Date.now())
  })
})
