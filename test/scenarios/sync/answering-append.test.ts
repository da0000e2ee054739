// A part of the daemon that appends an entry in answer to one it has just
// accepted (the board releasing a claim that a peer's claim outbid) must not
// get its entry written ahead of the one it answers: the store keeps the
// arrival order, and refuses (so the daemon would stop) anything out of it.
import { afterAll, describe, expect, it } from 'vitest'
import { REMEMBERED_PEERS_KEY } from '../../../src/daemon/remembered-peers.js'
import { openStore } from '../../../src/store/open-store.js'
import { Daemon } from '../../../src/daemon/daemon.js'
import { InProcessDaemons, addrsOf } from './helpers.js'
import { waitFor } from '../../helpers/wait-for.js'

describe("an entry appended while a peer's entries are being accepted", () => {
  const daemons = new InProcessDaemons()
  afterAll(async () => {
    await daemons.cleanup()
  }, 60_000)

  it('is stored after them, and the daemon keeps writing', async () => {
    const writer = await daemons.start({ name: 'writer' })
    const answerer = await daemons.start({ name: 'answerer', peers: addrsOf(writer) })
    const failures: Error[] = []
    answerer.onFatalError(err => {
      failures.push(err)
    })
    // The answerer notes each of the writer's findings the moment it accepts it.
    const answered: Array<Promise<unknown>> = []
    answerer.logService.onAccepted(e => {
      if (e.entry.author !== writer.peerId || e.entry.kind !== 'finding') return
      answered.push(answerer.logService.append('finding', { kind: 'note', text: `seen ${e.id}` }))
    })
    await waitFor(() => answerer.node.getConnections().length > 0, { what: 'the two to be connected' })
    for (let i = 0; i < 30; i++) await writer.logService.append('finding', { kind: 'note', text: `finding ${i}` })
    await waitFor(() => answered.length === 30, { what: 'an answer to every finding', timeoutMs: 30_000 })
    await Promise.all(answered)
    expect(failures).toEqual([])
    const after = await answerer.logService.append('finding', { kind: 'note', text: 'still writing' })
    expect(after.id).toMatch(/^[0-9a-f]{64}$/)

    // What is on disk is what was in memory: a restart restores the same log.
    const entries = answerer.logService.state.size
    const digest = Buffer.from(answerer.logService.digest()).toString('hex')
    const dataDir = answerer.config.dataDir
    await answerer.stop()
    // from its disk alone: not from the peers of its last run, which a restart redials (remembered-peers)
    const store = await openStore(dataDir)
    try {
      await store.state.del(REMEMBERED_PEERS_KEY)
    } finally {
      await store.close()
    }
    const again = new Daemon({ ...answerer.config, dataDir, peers: [], listen: [] })
    await again.start()
    try {
      expect(again.logService.state.size).toBe(entries)
      expect(Buffer.from(again.logService.digest()).toString('hex')).toBe(digest)
    } finally {
      await again.stop()
    }
  }, 90_000)
})
