// Fewer yamux window updates. @chainsafe/libp2p-yamux (8.0.1) answers every
// data frame it receives with a window update, so each gossip message of a
// few hundred bytes costs its receiver a second frame (a noise encryption and
// a socket write) and its sender a second decryption and decode: about half
// the frames on an idle or busy daemon's connections. As go-yamux and the
// yamux spec's reference implementation do, a stream here sends its update
// once less than half of its receive window is left; until then the sender
// still has at least half a window (128 KiB at first) to send into, so
// nothing waits. Updates that carry a flag (the ACK of a new inbound stream)
// and those of a paused stream go out as before.
import { YamuxStream, StreamState } from '@chainsafe/libp2p-yamux/stream'

interface WindowFields {
  state: StreamState
  recvWindow: number
  recvWindowCapacity: number
  sendWindowUpdate: () => void
}

let installed = false

/** Installs the half-window rule on every yamux stream of this process (idempotent). */
export function coalesceYamuxWindowUpdates(): void {
  if (installed) return
  const proto = YamuxStream.prototype as unknown as WindowFields
  const original = proto.sendWindowUpdate
  if (typeof original !== 'function') return
  installed = true
  proto.sendWindowUpdate = function (this: WindowFields): void {
    if (this.state === StreamState.Established && this.recvWindowCapacity * 2 >= this.recvWindow) return
    original.call(this)
  }
}
