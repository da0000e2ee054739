// An own entry goes out on gossip while its synced write runs, so the swarm
// does not wait for the author's disk; the author still answers only once the
// entry is on disk, and places it once even when a peer hands it back first.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { InProcessDaemons } from '../helpers/in-process-daemons.js'
import { waitFor } from '../helpers/wait-for.js'
import type { Daemon } from '../../src/daemon/daemon.js'
import type { StoredEntry } from '../../src/core/log/ingest-result.js'

const fleet = new InProcessDaemons()
let author: Daemon
let peer: Daemon

beforeAll(async () => {
  peer = await fleet.start({ name: 'peer' })
  author = await fleet.start({ name: 'author', peers: peer.listenAddrs() })
  await waitFor(() => author.gossip.subscribers() > 0 && peer.gossip.subscribers() > 0, { timeoutMs: 30_000, what: 'both on the swarm topic' })
}, 60_000)

afterAll(async () => { await fleet.stopAll() }, 60_000)

/** Holds the author's synced writes (its own entries' pending records) until `open()`. */
function holdSyncedWrites (d: Daemon): { open: () => void, held: () => number } {
  const log = d.store.log
  const original = log.putPending.bind(log)
  let release!: () => void
  const gate = new Promise<void>(resolve => { release = resolve })
  let held = 0
  log.putPending = async (records, opts) => {
    if (opts?.sync === true) { held++; await gate }
    await original(records, opts)
  }
  return { open: () => { log.putPending = original; release() }, held: () => held }
}

describe('an own entry on gossip', { timeout: 60_000 }, () => {
  it('reaches a peer before its synced write is done, and is answered only after it', async () => {
    const seen: StoredEntry[] = []
    const off = peer.logService.onAccepted(e => { if (e.entry.author === author.peerId && e.entry.kind === 'finding') seen.push(e) })
    const disk = holdSyncedWrites(author)
    let answered = false
    const appending = author.logService.append('finding', { kind: 'note', text: 'out before the disk is done', paths: [], tags: [], refs: [], supersedes: '' })
      .then(e => { answered = true; return e })
    try {
      const [got] = await waitFor(() => seen.length > 0 && seen, { timeoutMs: 30_000, what: 'the peer to accept the entry' })
      expect(disk.held()).toBe(1)
      expect(answered).toBe(false)
      disk.open()
      const entry = await appending
      expect(entry.id).toBe(got.id)
      expect(author.logService.state.get(got.id)?.entry.seq).toBe(got.entry.seq)
    } finally {
      disk.open()
      off()
    }
  })

  it('is placed once when a peer hands it back before its write is done', async () => {
    const disk = holdSyncedWrites(author)
    const before = author.logService.state.size
    const appending = author.logService.append('finding', { kind: 'note', text: 'handed back by the peer', paths: [], tags: [], refs: [], supersedes: '' })
    try {
      const got = await waitFor(() => peer.logService.state.entriesAfter(author.logService.state.vector()).find(e => e.entry.author === author.peerId), { timeoutMs: 30_000, what: 'the peer to hold the entry' })
      // An anti-entropy exchange brings it back to the author while its write
      // is held (the exchange's own write waits behind it, so it is not awaited).
      const exchange = author.logService.syncWith(peer.node.peerId)
      await waitFor(() => author.logService.state.get(got.id) !== undefined, { timeoutMs: 30_000, what: 'the exchange to bring the entry back' })
      disk.open()
      await exchange
      const entry = await appending
      expect(entry.id).toBe(got.id)
      expect(author.logService.state.size).toBe(before + 1)
      expect(author.logService.state.forks).toEqual([])
      expect(author.logService.state.isFaulty(author.peerId)).toBe(false)
    } finally {
      disk.open()
    }
  })
})
