// Bad input is refused with a named error and changes nothing; garbage on the
// direct-message protocol closes that stream, is counted, and the daemon
// serves on; a CLI with no daemon behind it says so in one line.
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey, peerIdFromString } from '@libp2p/peer-id'
import { lpStream } from '@libp2p/utils'
import type { Libp2p } from 'libp2p'
import { PROCESS_TEST_TIMEOUT_MS, ProcessCluster, runAgency, unusedPort, type AgentdProcess } from '../../helpers/agentd-process.js'
import { InProcessDaemons } from '../../helpers/in-process-daemons.js'
import { createRawNode, openStream, streamEnded } from '../../helpers/raw-node.js'
import { waitFor } from '../../helpers/wait-for.js'
import { connectAgency, type Agency } from '../../../src/client/agency.js'
import { AgencyError } from '../../../src/core/errors.js'
import { DM_PROTOCOL, MAX_DM_TEXT_BYTES } from '../../../src/mesh/constants.js'
import { AckStatus, DirectAck, DirectMessage } from '../../../src/gen/agency/v1/wire.js'
import type { AgencyClient } from '../../../src/gen/agency/v1/api.js'
import type { Daemon } from '../../../src/daemon/daemon.js'

const REJECTED = 'agentd_direct_message_streams_rejected_total'

const cluster = new ProcessCluster()
const inProcess = new InProcessDaemons()
let target: AgentdProcess
let sender: Daemon
let client: Agency
let raw: Libp2p

beforeAll(async () => {
  target = await cluster.start({ name: 'target', metrics: true })
  // The sender lives in this process, over TCP, so that the test can drive it directly.
  sender = await inProcess.start({
    name: 'sender',
    listen: ['/ip4/127.0.0.1/tcp/0'],
    peers: [target.listenAddr],
    heartbeatMs: 400,
    liveTimeoutMs: 4000
  })
  client = connectAgency(target.grpcAddr)
  raw = await createRawNode()
  await waitFor(async () => (await listPeers()).some(p => p.peerId === sender.peerId && p.live), { what: 'the target to see the sender' })
  await waitFor(() => sender.peers(false).some(p => p.peerId === target.peerId), { what: 'the sender to see the target' })
}, PROCESS_TEST_TIMEOUT_MS)

afterAll(async () => {
  client?.close()
  await raw?.stop()
  await inProcess.stopAll()
  await cluster.cleanup()
})

async function listPeers() {
  return (await client.call((c: AgencyClient) => c.listPeers, { includeOffline: true })).peers
}

async function status() {
  return await client.call((c: AgencyClient) => c.getStatus, {})
}

async function sendVia(to: string, text: string) {
  return await client.call((c: AgencyClient) => c.sendMessage, { to, text, thread: '', replyTo: '' })
}

async function refusal(p: Promise<unknown>): Promise<AgencyError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e
  )
  expect(err).toBeInstanceOf(AgencyError)
  return err as AgencyError
}

async function inboxOf(d: Daemon, id: string) {
  return (await d.readInbox(0, 1000)).filter(r => r.message.id === id)
}

describe('SendMessage over gRPC', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('refuses a text over 64 KiB with INVALID_ARGUMENT and queues nothing', async () => {
    const tooLong = await refusal(sendVia(sender.peerId, 'x'.repeat(MAX_DM_TEXT_BYTES + 1)))
    expect(tooLong.code).toBe('INVALID_ARGUMENT')
    expect(tooLong.message).toMatch(/over the limit/)
    // The limit is in bytes, not characters: 32769 two-byte characters are too many.
    const tooManyBytes = await refusal(sendVia(sender.peerId, 'é'.repeat(MAX_DM_TEXT_BYTES / 2 + 1)))
    expect(tooManyBytes.code).toBe('INVALID_ARGUMENT')
    expect((await status()).outboxPending).toBe(0)
  })

  it('accepts and delivers a text of exactly 64 KiB', async () => {
    const text = 'y'.repeat(MAX_DM_TEXT_BYTES)
    const sent = await sendVia(sender.peerId, text)
    const [got] = await waitFor(
      async () => {
        const c = await inboxOf(sender, sent.id)
        return c.length > 0 ? c : undefined
      },
      { what: 'the 64 KiB message at the sender' }
    )
    expect(got.message.text).toBe(text)
    expect(got.message.from).toBe(target.peerId)
  })

  it('gives NOT_FOUND for a peer never seen, by id or by name', async () => {
    const stranger = peerIdFromPrivateKey(await generateKeyPair('Ed25519')).toString()
    const byId = await refusal(sendVia(stranger, 'hello?'))
    expect(byId.code).toBe('NOT_FOUND')
    const byName = await refusal(sendVia('nobody-by-this-name', 'hello?'))
    expect(byName.code).toBe('NOT_FOUND')
    expect((await status()).outboxPending).toBe(0)
  })
})

describe('garbage on /agency/dm/1.0.0', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('closes a stream whose frame is random bytes, counts it, and serves on', async () => {
    const before = await target.metric(REJECTED)
    expect(before).toBeGreaterThanOrEqual(0)

    // A well-formed length prefix around random bytes: the daemon reads a whole
    // frame, cannot use it, and must close the stream itself (ours stays open).
    const stream = await openStream(raw, target.listenAddr, DM_PROTOCOL)
    const ended = streamEnded(stream)
    lpStream(stream)
      .write(randomBytes(512))
      .catch(() => {})
    const end = await ended
    expect(end.status).not.toBe('open')
    await waitFor(async () => (await target.metric(REJECTED)) === before + 1, { what: `${REJECTED} to count the stream` })

    // Unframed random bytes, then our end closes.
    const second = await openStream(raw, target.listenAddr, DM_PROTOCOL)
    second.send(randomBytes(2048))
    await second.close().catch(() => {})
    await waitFor(async () => (await target.metric(REJECTED)) === before + 2, { what: `${REJECTED} to count the second stream` })

    // The daemon serves on: status answers and a real message still arrives.
    expect((await status()).self?.peerId).toBe(target.peerId)
    const sent = await sender.sendMessage({ to: target.peerId, text: 'still there?' })
    await waitFor(
      async () =>
        (await client.call((c: AgencyClient) => c.readInbox, { after: 0, limit: 100, all: true, peek: false })).messages.some(
          m => m.id === sent.id && m.text === 'still there?'
        ),
      { what: 'a message after the garbage' }
    )
  })

  it("refuses a frame over the size limit from a peer that skips the sender's check", async () => {
    const stream = await openStream(raw, target.listenAddr, DM_PROTOCOL)
    const lp = lpStream(stream)
    const id = `too-big-${Date.now()}`
    await lp.write(
      DirectMessage.encode(
        DirectMessage.fromPartial({
          id,
          fromName: 'raw',
          to: target.peerId,
          thread: id,
          text: 'z'.repeat(MAX_DM_TEXT_BYTES + 1),
          time: Date.now()
        })
      ).finish()
    )
    const ack = DirectAck.decode((await lp.read({ signal: AbortSignal.timeout(10_000) })).subarray())
    expect(ack).toEqual({ id, status: AckStatus.ACK_TOO_LARGE, retryAfterMs: 0 })
    await stream.close().catch(() => {})
    const inbox = (await client.call((c: AgencyClient) => c.readInbox, { after: 0, limit: 100, all: true, peek: false })).messages
    expect(inbox.filter(m => m.id === id)).toEqual([])
  })

  it('does not count a well-formed exchange as a rejected stream', async () => {
    const before = await target.metric(REJECTED)
    const { id } = await sender.sendMessage({ to: target.peerId, text: 'a perfectly good message' })
    await waitFor(
      async () =>
        (await sender.store.messages.outboxCount()) === 0 &&
        (await client.call((c: AgencyClient) => c.readInbox, { after: 0, limit: 100, all: true, peek: false })).messages.some(
          m => m.id === id
        ),
      { what: 'the message to be delivered and acked' }
    )
    // The sender has closed its stream: the target has seen all of the exchange.
    await waitFor(
      () => sender.node.getConnections(peerIdFromString(target.peerId)).every(c => c.streams.every(st => st.protocol !== DM_PROTOCOL)),
      { what: 'the sender to close its direct-message stream' }
    )
    expect(await target.metric(REJECTED)).toBe(before)
  })
})

describe('the agency CLI with no daemon', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  it('exits non-zero with one line saying no daemon answers', async () => {
    const port = await unusedPort()
    const res = await runAgency(['status', '--addr', `127.0.0.1:${port}`])
    expect(res.code).not.toBe(0)
    expect(res.stdout).toBe('')
    const lines = res.stderr.trim().split('\n')
    expect(lines).toHaveLength(1)
    expect(lines[0]).toContain(`no daemon answers at 127.0.0.1:${port}`)
  })
})
