// A bare libp2p node (TCP, noise, yamux, nothing else) for writing arbitrary
// bytes to a daemon's protocols, the way a broken or hostile peer would.
import { createLibp2p, type Libp2p } from 'libp2p'
import { tcp } from '@libp2p/tcp'
import { noise } from '@chainsafe/libp2p-noise'
import { yamux } from '@chainsafe/libp2p-yamux'
import { multiaddr } from '@multiformats/multiaddr'
import type { Stream } from '@libp2p/interface'

export async function createRawNode(): Promise<Libp2p> {
  return await createLibp2p({
    addresses: { listen: [] },
    transports: [tcp()],
    connectionEncrypters: [noise()],
    streamMuxers: [yamux()],
    // Dialling 127.0.0.1 must not be filtered out.
    connectionGater: { denyDialMultiaddr: () => false },
    // Patient on a busy machine.
    connectionManager: { dialTimeout: 30_000, addressDialTimeout: 30_000 }
  })
}

/**
 * Opens a stream for `protocol` to the peer at `addr` (a multiaddr with /p2p/),
 * retrying a dial that fails (on a busy machine a handshake can time out).
 */
export async function openStream(node: Libp2p, addr: string, protocol: string): Promise<Stream> {
  let lastError: unknown
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await node.dialProtocol(multiaddr(addr), protocol, { signal: AbortSignal.timeout(30_000) })
    } catch (err) {
      lastError = err
    }
  }
  throw lastError
}

/** Resolves when the stream is finished (both ends closed, reset or aborted), with how it ended. */
export async function streamEnded(stream: Stream): Promise<{ status: string; error?: Error }> {
  if (stream.status !== 'open') return { status: stream.status }
  return await new Promise(resolve => {
    stream.addEventListener(
      'close',
      evt => {
        resolve({ status: stream.status, error: (evt as Event & { error?: Error }).error })
      },
      { once: true }
    )
  })
}
