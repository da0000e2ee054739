// agentd's board service passes the claim protocol's compliance suite: three
// daemons in one process, meshed over the libp2p memory transport, on real
// timers.
import { multiaddr } from '@multiformats/multiaddr'
import type { Daemon } from '../../../src/daemon/daemon.js'
import { claimProtocolCompliance, type ClaimCluster, type ClaimNode } from '../../core/board/claim-protocol.compliance.js'
import { InProcessDaemons } from '../../helpers/in-process-daemons.js'
import { waitFor } from '../../helpers/wait-for.js'

// A fixed settle window, so that two claims made at once meet inside it
// whatever the machine's load; leases far longer than any test.
const TIMING = { heartbeatMs: 300, liveTimeoutMs: 60_000, syncIntervalMs: 1000, dmRetryMs: 300, settle: { fixedMs: 1000 } }

async function startDaemons(n: number): Promise<ClaimCluster> {
  const daemons = new InProcessDaemons()
  const nodes: Daemon[] = []
  for (let i = 0; i < n; i++) nodes.push(await daemons.start(TIMING))
  for (let i = 1; i < n; i++) await nodes[i].node.dial(multiaddr(nodes[0].listenAddrs()[0]))
  await waitFor(() => nodes.every(d => d.peers(false).length >= n - 1), { what: 'every daemon to see the others live' })

  const claimNode = (d: Daemon): ClaimNode => ({
    id: d.peerId,
    claim: async task => await d.boardService.claim(task, []),
    release: async (task, note) => {
      await d.boardService.release(task, note, '')
    },
    view: task => d.boardService.board.task(task, d.boardService.now())
  })

  return {
    nodes: nodes.map(claimNode),
    addTask: async id => {
      await nodes[0].boardService.addTask({ id, title: id, description: '', deps: [], scope: [], priority: 0 })
      await waitFor(() => nodes.every(d => d.boardService.board.task(id, d.boardService.now()) !== undefined), {
        what: `task ${id} on every daemon`
      })
    },
    until: async (what, check) => {
      await waitFor(check, { what })
    },
    stop: async () => {
      await daemons.stopAll()
    }
  }
}

claimProtocolCompliance("agentd's board service", startDaemons)
