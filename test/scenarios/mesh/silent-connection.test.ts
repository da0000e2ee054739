// Gossipsub uses a connection only after identify has said the peer speaks
// gossipsub, and libp2p runs identify once per connection. On a busy host
// identify can time out on both ends; the daemons must still come to see each
// other over that connection, rather than stay connected and silent for ever.
// (Found when twenty in-process daemons on an overloaded machine left one
// node connected to its two bootstrap peers with no gossip at all.)
import { multiaddr } from '@multiformats/multiaddr'
import { afterAll, describe, expect, it } from 'vitest'
import { InProcessDaemons } from '../../helpers/in-process-daemons.js'
import { waitFor } from '../../helpers/wait-for.js'
import type { Daemon } from '../../../src/daemon/daemon.js'

const fleet = new InProcessDaemons()

afterAll(async () => {
  await fleet.stopAll()
})

/** Makes the daemon's next `count` identify runs fail, as a timeout would. */
function failNextIdentify(d: Daemon, count: number): void {
  const identify = d.node.services.identify as unknown as { identify: (...args: unknown[]) => Promise<unknown> }
  const real = identify.identify.bind(identify)
  let failures = count
  identify.identify = async (...args: unknown[]) => {
    if (failures-- > 0) throw new Error('simulated identify timeout')
    return await real(...args)
  }
}

describe('a connection whose identify failed at both ends', () => {
  it('still comes to carry presence both ways', async () => {
    // No bootstrap peers: the one connection is the one made below.
    const a = await fleet.start({ name: 'a' })
    const b = await fleet.start({ name: 'b' })
    failNextIdentify(a, 1)
    failNextIdentify(b, 1)
    await b.node.dial(multiaddr(a.listenAddrs()[0]))
    expect(a.node.getConnections()).toHaveLength(1)

    await waitFor(() => a.peers(false).some(p => p.peerId === b.peerId) && b.peers(false).some(p => p.peerId === a.peerId), {
      timeoutMs: 30_000,
      what: 'a and b to see each other live'
    }).catch(err => {
      const gossip = (d: Daemon): number => d.node.services.pubsub.getPeers().length
      throw new Error(
        `${(err as Error).message}; connections ${a.node.getConnections().length}, gossip peers a=${gossip(a)} b=${gossip(b)}`
      )
    })
  })
})
