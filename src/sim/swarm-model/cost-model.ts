// The size model for coordination traffic. agency's messages are sized by
// encoding the real protobufs (Entry, Presence, SyncRequest/SyncBatch,
// DirectMessage) with fields of realistic length; gossip is costed the way
// gossipsub floods a topic. The baselines' messages (git over HTTPS, requests
// to a manager) have no protobuf here and use the documented constants below.
// Code itself (commits of the work) is left out for every strategy alike.

import { Entry, type DeepPartial } from '../../gen/agency/v1/log.js'
import { DirectAck, DirectMessage, Presence, SyncBatch, SyncRequest, VersionVectorEntry } from '../../gen/agency/v1/wire.js'
import { encodeBody, type EntryKind, type KindBodies } from '../../core/log/kinds.js'

/** An Ed25519 libp2p peer id is 52 characters ("12D3KooW..."). */
export const PEER_ID_CHARS = 52
const FAKE_PEER_ID = '12D3KooW' + 'x'.repeat(PEER_ID_CHARS - 8)
const SIG = Buffer.alloc(64, 1)
const HASH = Buffer.alloc(32, 2)
/** a wall-clock time in ms since the epoch (varint length is what matters) */
const WALL_TIME = 1_750_000_000_000

/** gossipsub's mesh degree D: every receiver gets a message from about D mesh peers */
export const GOSSIP_MESH_DEGREE = 6
/** the swarm topic, `/agency/swarm/<name>/1` */
const TOPIC_BYTES = '/agency/swarm/default/1'.length
/** yamux frame header (12) + noise length (2) and tag (16) per frame */
export const TRANSPORT_OVERHEAD_BYTES = 30
/** gossipsub RPC around one message: RPC.publish, Message.data and Message.topic tags and lengths, the frame length prefix */
const RPC_OVERHEAD_BYTES = 10

/**
 * Transmissions for one message flooded on the topic among `n` nodes: each of the n−1 receivers gets it from min(D, n−1) peers. IHAVE/IWANT
 * control traffic is not counted.
 */
export function gossipTransmissions(n: number): number {
  return n <= 1 ? 0 : (n - 1) * Math.min(GOSSIP_MESH_DEGREE, n - 1)
}

/** Bytes on the wire for one transmission of a gossip payload (type byte + message). */
export function gossipFrameBytes(messageBytes: number): number {
  return 1 + messageBytes + TOPIC_BYTES + RPC_OVERHEAD_BYTES + TRANSPORT_OVERHEAD_BYTES
}

/** Size of a signed log entry of `kind` with this body. */
export function entryBytes<K extends EntryKind>(kind: K, body: DeepPartial<KindBodies[K]>, seq = 1000, lamport = 100_000): number {
  return Entry.encode(
    Entry.fromPartial({
      author: FAKE_PEER_ID,
      seq,
      prev: HASH,
      lamport,
      time: WALL_TIME,
      kind,
      body: Buffer.from(encodeBody(kind, body)),
      sig: SIG
    })
  ).finish().length
}

/** Size of a signed presence heartbeat listing `claims` held claims. */
export function presenceBytes(claims: number): number {
  return Presence.encode(
    Presence.fromPartial({
      peerId: FAKE_PEER_ID,
      name: 'agent-0001',
      status: 'working on task-00042',
      claims: Array.from({ length: claims }, () => ({ task: 'task-00042', epoch: 1 })),
      time: WALL_TIME,
      seq: 10_000,
      addrs: ['/ip4/10.0.0.17/tcp/4001'],
      sig: SIG
    })
  ).finish().length
}

// Each author's line carries its head id (32 bytes) since forks are compared by head.
// + 2: the field tag and length
const VECTOR_ENTRY_BYTES =
  VersionVectorEntry.encode({ author: FAKE_PEER_ID, seq: 100, head: HASH, forkSeq: 0, faulty: false }).finish().length + 2
const EMPTY_REQUEST_BYTES = SyncRequest.encode({ have: [], digest: HASH }).finish().length
const EMPTY_BATCH_BYTES = SyncBatch.encode({ entries: [], last: true, have: [], forks: [] }).finish().length
/** lp framing of one sync frame */
const FRAME_PREFIX_BYTES = 3

/** A sync request carrying a version vector of `authors` authors and a digest. */
export function syncRequestBytes(authors: number): number {
  return EMPTY_REQUEST_BYTES + authors * VECTOR_ENTRY_BYTES + FRAME_PREFIX_BYTES + TRANSPORT_OVERHEAD_BYTES
}

/** A sync batch of entries totalling `entryBytesTotal` (count `entries`), ending with a vector of `authors` authors. */
export function syncBatchBytes(entryBytesTotal: number, entries: number, authors: number): number {
  return EMPTY_BATCH_BYTES + entryBytesTotal + entries * 3 + authors * VECTOR_ENTRY_BYTES + FRAME_PREFIX_BYTES + TRANSPORT_OVERHEAD_BYTES
}

/** A direct message with `text` and its ack (the stream's own framing included). */
export function directMessageBytes(text: string): { message: number; ack: number } {
  const message = DirectMessage.encode({
    id: 'x'.repeat(36),
    from: FAKE_PEER_ID,
    to: FAKE_PEER_ID,
    thread: 'x'.repeat(36),
    replyTo: '',
    text,
    time: WALL_TIME,
    fromName: 'agent-0001'
  }).finish().length
  const ack = DirectAck.encode({ id: 'x'.repeat(36), status: 1, retryAfterMs: 0 }).finish().length
  return { message: message + FRAME_PREFIX_BYTES + TRANSPORT_OVERHEAD_BYTES, ack: ack + FRAME_PREFIX_BYTES + TRANSPORT_OVERHEAD_BYTES }
}

/**
 * One libp2p ping, each way: a new yamux stream, multistream-select naming
 * /ipfs/ping/1.0.0 (about 38 bytes with its length prefixes), the 32 random
 * bytes, and the frame that closes the stream.
 */
export const PING_BYTES = 38 + 32 + 2 * TRANSPORT_OVERHEAD_BYTES

// ---- baselines (documented constants, no protobuf to encode) ----

/** git smart HTTP over TLS: request line, headers and TLS records per request or response */
export const GIT_HTTP_OVERHEAD_BYTES = 600
/** a pull: the ref advertisement of one branch plus the negotiation lines */
export const GIT_PULL_REQUEST_BYTES = 250
/** one small commit in a thin pack (commit object, a tree delta, one small blob) */
export const GIT_COMMIT_PACK_BYTES = 400
/** a push: the ref-update command */
export const GIT_PUSH_COMMAND_BYTES = 150
/** the server's report-status answer to a push */
export const GIT_PUSH_REPORT_BYTES = 100

/** a request to the central manager (agent id, what happened) and its HTTP/gRPC framing */
export const MANAGER_REQUEST_BYTES = 300
/** the manager's answer: the task, its scope and hand-off, plus 40 bytes per known trap it passes on */
export const MANAGER_RESPONSE_BYTES = 400
export const MANAGER_TRAP_BYTES = 40
