// The libp2p node: TCP (or the in-process memory transport), noise, yamux,
// identify, ping and gossipsub. Gossip runs StrictNoSign because every payload
// carries its own Ed25519 signature; the message id is derived from content.
import { createLibp2p, type Libp2p } from 'libp2p'
import { tcp } from '@libp2p/tcp'
import { memory } from '@libp2p/memory'
import { noise } from '@chainsafe/libp2p-noise'
import { yamux } from '@chainsafe/libp2p-yamux'
import { identify } from '@libp2p/identify'
import { ping } from '@libp2p/ping'
import { gossipsub, type GossipSub } from '@libp2p/gossipsub'
import type { PrivateKey } from '@libp2p/interface'
import { gossipMessageId } from './gossip-codec.js'
import { DEFAULT_MAX_CONNECTIONS, MAX_GOSSIP_BYTES } from './constants.js'
import { preSharedKey } from '@libp2p/pnet'
import type { PeerGuard } from './peer-guard.js'
import { coalesceYamuxWindowUpdates } from './yamux-window-updates.js'
import type { Libp2pMetricsComponent } from '../metrics/libp2p-metrics.js'

export interface MeshNodeInit {
  privateKey: PrivateKey
  /** multiaddrs to listen on, e.g. /ip4/0.0.0.0/tcp/0 or /memory/<name> */
  listen: string[]
  /** multiaddrs to advertise instead of the listen addresses */
  announce?: string[]
  /** IPs exempt from gossipsub's IP-colocation penalty (many daemons on one host) */
  colocationWhitelist?: string[]
  /** how many connections the node holds at most: libp2p refuses inbound ones beyond it (the dialer trims well below) */
  maxConnections?: number
  /** a libp2p pre-shared key (the swarm key file's bytes): only holders can connect */
  swarmKey?: Uint8Array
  /** who may connect: the allow-list and temporary bans */
  guard?: PeerGuard
  /** where libp2p reports its own metrics (createLibp2pMetrics); none: libp2p keeps none */
  metrics?: Libp2pMetricsComponent
  /**
   * libp2p's connection monitor: a ping on a new stream over every connection
   * every 10 s from both ends, closing a connection whose ping fails (libp2p's
   * default, kept by the raw nodes of the mesh benchmark). agentd turns it off:
   * its round-trip probe (mesh/round-trips) checks every connection with the
   * muxer's ping frame instead, one ping system rather than two.
   */
  connectionMonitor?: boolean
  /**
   * yamux window updates once half a stream's receive window is used rather
   * than after every data frame (mesh/yamux-window-updates; for every node of
   * the process). agentd sets it; the raw nodes of the mesh benchmark keep
   * yamux's default.
   */
  halfWindowUpdates?: boolean
}

export type MeshLibp2p = Libp2p<{
  pubsub: GossipSub
  identify: ReturnType<ReturnType<typeof identify>>
  ping: ReturnType<ReturnType<typeof ping>>
}>

export async function createMeshNode(init: MeshNodeInit): Promise<MeshLibp2p> {
  const usesMemory = init.listen.some(a => a.startsWith('/memory'))
  if (init.halfWindowUpdates === true) coalesceYamuxWindowUpdates()
  const node = await createLibp2p({
    privateKey: init.privateKey,
    addresses: {
      listen: init.listen,
      announce: init.announce ?? []
    },
    transports: usesMemory ? [memory(), tcp()] : [tcp()],
    connectionEncrypters: [noise()],
    streamMuxers: [yamux()],
    connectionManager: {
      maxConnections: init.maxConnections ?? 2 * DEFAULT_MAX_CONNECTIONS
    },
    connectionMonitor: { enabled: init.connectionMonitor ?? true },
    ...(init.swarmKey != null ? { connectionProtector: preSharedKey({ psk: init.swarmKey }) } : {}),
    ...(init.metrics != null ? { metrics: init.metrics } : {}),
    connectionGater: {
      // Loopback and private addresses are how a swarm on one host or a LAN
      // reaches itself; libp2p must not filter them out.
      denyDialMultiaddr: () => false,
      denyDialPeer: peer => init.guard != null && !init.guard.admits(peer),
      denyInboundEncryptedConnection: peer => init.guard != null && !init.guard.admits(peer),
      denyOutboundEncryptedConnection: peer => init.guard != null && !init.guard.admits(peer)
    },
    services: {
      identify: identify(),
      ping: ping(),
      pubsub: gossipsub({
        globalSignaturePolicy: 'StrictNoSign',
        msgIdFn: msg => gossipMessageId(msg.data),
        allowPublishToZeroTopicPeers: true,
        emitSelf: false,
        maxInboundDataLength: MAX_GOSSIP_BYTES,
        scoreParams: {
          IPColocationFactorWhitelist: new Set(init.colocationWhitelist ?? ['127.0.0.1', '::1'])
        }
      })
    }
  })
  return node
}
