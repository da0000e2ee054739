// A daemon remembers the peers it was connected to in its data dir and
// redials them when it starts again: A and B meet through a bootstrap C; with
// C gone, B restarted without --peers (on a new port, so A cannot redial it)
// finds A again; with --remembered-peers off it stays alone, and forget
// clears the list. The list kept is bounded and a bad record is dropped.
import { afterAll, describe, expect, it } from 'vitest'
import { PROCESS_TEST_TIMEOUT_MS, ProcessCluster, type AgentdProcess } from '../../helpers/agentd-process.js'
import { waitFor } from '../../helpers/wait-for.js'
import { MAX_REMEMBERED, mergeRemembered } from '../../../src/daemon/remembered-peers.js'
import { DEFAULT_DIAL_TICK_MS, DIAL_ATTEMPT_TIMEOUT_MS } from '../../../src/mesh/peer-dialer.js'

const cluster = new ProcessCluster()
afterAll(async () => {
  await cluster.cleanup()
}, PROCESS_TEST_TIMEOUT_MS)

async function connectedTo(from: AgentdProcess, to: AgentdProcess): Promise<boolean> {
  return (await from.peers()).some(p => p.peerId === to.peerId && p.connected)
}

describe('remembered peers', () => {
  it(
    'a daemon restarted without --peers redials the peers of its last run',
    async () => {
      const c = await cluster.start({ name: 'boot-c' })
      const a = await cluster.start({ name: 'peer-a', peers: [c.listenAddr] })
      const b = await cluster.start({ name: 'peer-b', peers: [c.listenAddr] })
      // B learns A from its heartbeats and dials it while short of connections
      await waitFor(async () => await connectedTo(b, a), { what: 'B connected to A through C', timeoutMs: 60_000 })

      await c.stop()
      await b.stop()
      b.options.peers = []
      await b.restart()
      await waitFor(async () => await connectedTo(b, a), { what: 'B, restarted without --peers, connected to A again', timeoutMs: 60_000 })
      expect(await connectedTo(a, b)).toBe(true)
    },
    PROCESS_TEST_TIMEOUT_MS
  )

  it(
    'with --remembered-peers off a restart without --peers stays alone and keeps the list; forget clears it',
    async () => {
      const c = await cluster.start({ name: 'boot-c2' })
      const a = await cluster.start({ name: 'peer-a2', peers: [c.listenAddr] })
      const b = await cluster.start({ name: 'peer-b2', peers: [c.listenAddr] })
      await waitFor(async () => await connectedTo(b, a), { what: 'B connected to A through C', timeoutMs: 60_000 })
      await c.stop()
      await b.stop()
      b.options.peers = []
      // alone: A cannot redial B, which listens on a new port, so only B's own
      // dialer could connect them. A remembered peer is handed to it before
      // ready and dialled at its next round, and that dial ends within its
      // timeout: no connection by then.
      const staysAlone = async (): Promise<void> => {
        await new Promise(resolve => setTimeout(resolve, DEFAULT_DIAL_TICK_MS + DIAL_ATTEMPT_TIMEOUT_MS))
        expect((await b.peers()).filter(p => p.connected)).toEqual([])
      }

      b.options.extraArgs = ['--remembered-peers', 'off']
      await b.restart()
      await staysAlone()
      await b.stop()

      // the list was kept: on redials A
      b.options.extraArgs = ['--remembered-peers', 'on']
      await b.restart()
      await waitFor(async () => await connectedTo(b, a), {
        what: 'B, restarted with remembered peers on, connected to A again',
        timeoutMs: 60_000
      })
      await b.stop()

      // forget: alone, and the next start with on has nothing to redial
      b.options.extraArgs = ['--remembered-peers', 'forget']
      await b.restart()
      await staysAlone()
      await b.stop()
      b.options.extraArgs = []
      await b.restart()
      await staysAlone()
    },
    2 * PROCESS_TEST_TIMEOUT_MS
  )

  it('keeps the most recent peers first, bounded, without duplicates or bad records', () => {
    const peer = (i: number): { peer: string; addrs: string[] } => ({ peer: `p${i}`, addrs: [`/ip4/127.0.0.1/tcp/${1000 + i}`] })
    const earlier = [
      peer(1),
      { peer: 'bad' },
      { peer: 'no-addrs', addrs: [] },
      'junk',
      null,
      peer(2),
      ...Array.from({ length: 30 }, (_, i) => peer(10 + i))
    ]
    const merged = mergeRemembered([peer(2), peer(3), peer(3)], earlier)
    expect(merged).toHaveLength(MAX_REMEMBERED)
    expect(merged.slice(0, 3).map(p => p.peer)).toEqual(['p2', 'p3', 'p1'])
    expect(new Set(merged.map(p => p.peer)).size).toBe(merged.length)
    expect(merged.some(p => p.peer === 'bad' || p.peer === 'no-addrs')).toBe(false)
    const long = mergeRemembered(
      [{ peer: 'x', addrs: [...Array.from({ length: 20 }, (_, i) => `/ip4/10.0.0.${i}/tcp/1`), 'y'.repeat(1000)] }],
      []
    )
    expect(long[0].addrs).toHaveLength(8)
    expect(long[0].addrs.every(a => a.length <= 256)).toBe(true)
  })
})
