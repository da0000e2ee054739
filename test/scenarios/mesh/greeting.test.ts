// A daemon greets a peer with a heartbeat as soon as gossipsub knows the peer
// subscribes to the swarm's topic, so two daemons that connect see each other
// live at once, not at their next regular beat (here a minute away). A beat
// sent at the connection itself reached nobody: gossipsub learns a peer's
// topics only after identify and its first RPC.
import { afterAll, describe, expect, it } from 'vitest'
import { multiaddr } from '@multiformats/multiaddr'
import { InProcessDaemons } from '../../helpers/in-process-daemons.js'
import { waitFor } from '../../helpers/wait-for.js'

const SLOW = { heartbeatMs: 60_000, liveTimeoutMs: 600_000, syncIntervalMs: 60_000 }

describe('greeting a peer that joins the topic', () => {
  const fleet = new InProcessDaemons()
  afterAll(async () => {
    await fleet.stopAll()
  }, 30_000)

  it('has two daemons that connect see each other live well before their next heartbeat', async () => {
    const a = await fleet.start({ name: 'greet-a', ...SLOW })
    const b = await fleet.start({ name: 'greet-b', ...SLOW })
    // Both have beaten once at start, to nobody; the next regular beats are a minute away.
    await new Promise(resolve => setTimeout(resolve, 500))
    expect(a.peers(false)).toEqual([])
    await b.node.dial(multiaddr(a.listenAddrs()[0]))
    await waitFor(() => a.peers(false).some(p => p.peerId === b.peerId) && b.peers(false).some(p => p.peerId === a.peerId), {
      what: 'each daemon to see the other live from its greeting',
      timeoutMs: 20_000
    })
  }, 40_000)
})
