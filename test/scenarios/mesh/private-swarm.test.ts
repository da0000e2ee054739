// A private swarm: daemons that share a swarm key connect and replicate; a
// daemon without the key, or with another key, never gets a connection, so it
// sees no peer and no entry. An allow-list admits only the peer ids it names.
import { join } from 'node:path'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { multiaddr } from '@multiformats/multiaddr'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { readFile, writeFile } from 'node:fs/promises'
import { PROCESS_TEST_TIMEOUT_MS, ProcessCluster, runAgency, type AgentdProcess } from '../../helpers/agentd-process.js'
import { waitFor } from '../../helpers/wait-for.js'
import { createMeshNode, type MeshLibp2p } from '../../../src/mesh/node.js'
import { loadOrCreateIdentity } from '../../../src/daemon/identity.js'
import type { AgencyClient } from '../../../src/gen/agency/v1/api.js'
import { rejection, writeSwarmKey } from '../../helpers/trust.js'

const cluster = new ProcessCluster()
const meshNodes: MeshLibp2p[] = []

afterAll(async () => {
  await Promise.allSettled(
    meshNodes.map(async n => {
      await n.stop()
    })
  )
  await cluster.cleanup()
}, PROCESS_TEST_TIMEOUT_MS)

async function note(d: AgentdProcess, text: string): Promise<string> {
  const reply = await d.api.call((c: AgencyClient) => c.recordFinding, {
    kind: 'note',
    text,
    paths: [],
    tags: [],
    refs: [],
    supersedes: ''
  })
  return reply.entry?.id as string
}

async function hasEntry(d: AgentdProcess, id: string): Promise<boolean> {
  return await d.api
    .call((c: AgencyClient) => c.getEntry, { id })
    .then(
      () => true,
      () => false
    )
}

async function connectedPeers(d: AgentdProcess): Promise<number> {
  return (await d.status()).peersConnected
}

/** A bare mesh node in this process over TCP, optionally holding a swarm key. */
async function meshNode(swarmKey?: Uint8Array): Promise<MeshLibp2p> {
  const node = await createMeshNode({ privateKey: await generateKeyPair('Ed25519'), listen: ['/ip4/127.0.0.1/tcp/0'], swarmKey })
  await node.start()
  meshNodes.push(node)
  return node
}

/** Dials `addr`; true when a connection opened (and then closes it). */
async function canConnect(node: MeshLibp2p, addr: string): Promise<boolean> {
  try {
    const conn = await node.dial(multiaddr(addr), { signal: AbortSignal.timeout(10_000) })
    // A connection the far side gates away is closed right after the upgrade: give it a moment to say so.
    await node.services.ping.ping(multiaddr(addr), { signal: AbortSignal.timeout(5000) })
    await conn.close()
    return true
  } catch {
    return false
  }
}

describe('a private swarm (--swarm-key)', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  let keyFile: string
  let otherKeyFile: string
  let a: AgentdProcess
  let b: AgentdProcess
  let keyless: AgentdProcess
  let wrongKey: AgentdProcess

  beforeAll(async () => {
    const dir = await cluster.tempDir('agency-keys-')
    keyFile = await writeSwarmKey(join(dir, 'swarm.key'))
    // The CLI's own key generator makes the other key, so `agency keygen` is covered too.
    otherKeyFile = join(dir, 'other.key')
    const gen = await runAgency(['keygen', '--out', otherKeyFile])
    expect(gen.code, gen.stderr).toBe(0)
    a = await cluster.start({ name: 'a', extraArgs: ['--swarm-key', keyFile] })
    b = await cluster.start({ name: 'b', peers: [a.listenAddr], extraArgs: ['--swarm-key', keyFile] })
    keyless = await cluster.start({ name: 'keyless', peers: [a.listenAddr, b.listenAddr] })
    wrongKey = await cluster.start({ name: 'wrong-key', peers: [a.listenAddr, b.listenAddr], extraArgs: ['--swarm-key', otherKeyFile] })
  }, PROCESS_TEST_TIMEOUT_MS)

  it('lets two daemons with the same key connect and replicate both ways', async () => {
    await waitFor(async () => (await a.peers()).some(p => p.peerId === b.peerId && p.live), { what: 'a to see b live', timeoutMs: 60_000 })
    await waitFor(async () => (await b.peers()).some(p => p.peerId === a.peerId && p.live), { what: 'b to see a live', timeoutMs: 60_000 })
    const fromA = await note(a, 'written on a, inside the private swarm')
    const fromB = await note(b, 'written on b, inside the private swarm')
    await waitFor(async () => await hasEntry(b, fromA), { what: "b to hold a's entry", timeoutMs: 60_000 })
    await waitFor(async () => await hasEntry(a, fromB), { what: "a to hold b's entry", timeoutMs: 60_000 })
  })

  it('gives a daemon without the key, or with another key, no peer and no entry', async () => {
    // Both outsiders have been dialling a and b since they started. A fresh
    // entry that b receives from a is the sync point: the swarm is working.
    const secret = await note(a, 'a private finding the outsiders must not read')
    await waitFor(async () => await hasEntry(b, secret), { what: 'b to hold the newest entry', timeoutMs: 60_000 })
    for (const outsider of [keyless, wrongKey]) {
      expect(await connectedPeers(outsider), `${outsider.name} has a connection`).toBe(0)
      expect(
        (await outsider.peers()).map(p => p.name),
        `${outsider.name} knows peers`
      ).toEqual([])
      const err = await rejection(outsider.api.call((c: AgencyClient) => c.getEntry, { id: secret }))
      expect(err.code).toBe('NOT_FOUND')
      expect((await outsider.status()).logEntries).toBe(0)
    }
    // And the members never counted the outsiders as peers.
    for (const member of [a, b]) {
      const names = (await member.peers()).map(p => p.name).sort()
      expect(names).toEqual([member === a ? 'b' : 'a'])
    }
  })

  it('refuses the handshake itself: a node without the key or with another key cannot open a connection', async () => {
    const key = await readFile(keyFile)
    const other = await readFile(otherKeyFile)
    expect(await canConnect(await meshNode(), a.listenAddr)).toBe(false)
    expect(await canConnect(await meshNode(other), a.listenAddr)).toBe(false)
    // The same dial with the right key works, so the refusals above are the key's doing.
    expect(await canConnect(await meshNode(key), a.listenAddr)).toBe(true)
  })

  it('refuses to start with a file that is not a swarm key, in one line', async () => {
    const bogus = join(await cluster.tempDir('agency-bogus-'), 'not-a-key')
    await writeFile(bogus, 'hello\n')
    const d = cluster.onDataDir(await cluster.tempDir(), { name: 'bogus-key', extraArgs: ['--swarm-key', bogus] })
    const err = await d.start().then(
      () => undefined,
      (e: Error) => e
    )
    expect(err?.message).toMatch(/exited \(1\) before ready/)
    expect(
      d.stderr
        .trim()
        .split('\n')
        .filter(l => l.startsWith('agentd:'))
    ).toEqual([`agentd: ${bogus} is not a swarm key (make one with \`agency keygen\`)`])
  })
})

describe('an allow-list (--allow-peers)', { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  let gate: AgentdProcess
  let allowed: AgentdProcess
  let stranger: AgentdProcess

  beforeAll(async () => {
    // The allowed peer's identity exists before the gate starts, so the gate can name it.
    const allowedDir = await cluster.tempDir()
    const allowedId = await loadOrCreateIdentity(allowedDir)
    gate = await cluster.start({ name: 'gate', extraArgs: ['--allow-peers', allowedId.peerId] })
    allowed = cluster.onDataDir(allowedDir, { name: 'allowed', peers: [gate.listenAddr] })
    await allowed.start()
    expect(allowed.peerId).toBe(allowedId.peerId)
    stranger = await cluster.start({ name: 'stranger', peers: [gate.listenAddr] })
  }, PROCESS_TEST_TIMEOUT_MS)

  it('admits the listed peer and replicates with it', async () => {
    await waitFor(async () => (await gate.peers()).some(p => p.peerId === allowed.peerId && p.live), {
      what: 'the gate to see the allowed peer',
      timeoutMs: 60_000
    })
    const id = await note(gate, 'for the allowed peer')
    await waitFor(async () => await hasEntry(allowed, id), { what: "the allowed peer to hold the gate's entry", timeoutMs: 60_000 })
  })

  it('refuses a peer it does not list: no connection, no entries', async () => {
    const id = await note(gate, 'not for strangers')
    await waitFor(async () => await hasEntry(allowed, id), { what: 'the allowed peer to hold the newest entry', timeoutMs: 60_000 })
    // The stranger's dialer keeps retrying the gate with backoff, and each try's connection is cut by the
    // gate's gater right after the handshake: none lasts (sampled at one instant, a try was sometimes seen).
    await waitFor(async () => (await connectedPeers(stranger)) === 0, { what: 'the stranger to hold no connection', timeoutMs: 60_000 })
    expect(await rejection(stranger.api.call((c: AgencyClient) => c.getEntry, { id })).then(e => e.code)).toBe('NOT_FOUND')
    expect((await gate.peers()).map(p => p.name)).toEqual(['allowed'])
    // Inbound, directly: an unlisted node's connection does not survive the gater.
    expect(await canConnect(await meshNode(), gate.listenAddr)).toBe(false)
  })
})
