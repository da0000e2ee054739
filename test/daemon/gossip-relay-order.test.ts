// A relay forwards a peer's entry before its own listeners (the board's fold,
// the findings index, the API's streams) hear of it: gossipsub forwards once
// the verdict resolves, so the listeners run after it, still in log order and
// before anything accepted later. A fresh entry from gossip (not from sync)
// tells who is alive. One real daemon; the entries come in as a peer's
// gossip and sync would hand them over.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { setImmediate as nextTurn } from 'node:timers/promises'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { createSigner, type Signer } from '../../src/core/log/crypto.js'
import { encodeEntry, idOfBytes, signEntry } from '../../src/core/log/entry.js'
import { encodeBody } from '../../src/core/log/kinds.js'
import type { Entry } from '../../src/gen/agency/v1/log.js'
import type { Daemon } from '../../src/daemon/daemon.js'
import { InProcessDaemons } from '../helpers/in-process-daemons.js'

async function makeSigner (): Promise<Signer> {
  const key = await generateKeyPair('Ed25519')
  return createSigner(peerIdFromPrivateKey(key).toString(), key.raw)
}

function feed (signer: Signer, n: number): Entry[] {
  const out: Entry[] = []
  let prev: Uint8Array = new Uint8Array(0)
  for (let i = 1; i <= n; i++) {
    const e = signEntry(signer, { seq: i, prev, lamport: i, time: 1_700_000_000_000 + i, kind: 'finding', body: encodeBody('finding', { kind: 'note', text: `entry ${i}` }) })
    out.push(e)
    prev = Buffer.from(idOfBytes(encodeEntry(e)), 'hex')
  }
  return out
}

const daemons = new InProcessDaemons()
let d: Daemon

beforeAll(async () => { d = await daemons.start({ name: 'relay' }) }, 60_000)
afterAll(async () => { await daemons.stopAll() }, 60_000)

describe('a peer\'s entry on gossip', () => {
  it('is judged before the listeners hear of it; they hear every entry once, in log order, own entries after those before them', async () => {
    const other = await makeSigner()
    const [a, b] = feed(other, 2).map(encodeEntry)
    const heard: string[] = []
    const fresh: string[] = []
    const off = d.logService.onAccepted(e => { heard.push(e.entry.kind === 'finding' && e.entry.author === other.author ? `peer ${e.entry.seq}` : `own ${e.entry.kind}`) })
    const offFresh = d.logService.onFreshEntry(author => { fresh.push(author) })
    try {
      expect(await d.logService.receiveGossip(a, 'x')).toBe('accept')
      expect(heard).toEqual([]) // the verdict first: gossipsub forwards on it
      expect(fresh).toEqual([other.author])
      expect(d.logService.state.get(idOfBytes(a))).toBeDefined() // in the log already (a duplicate from another peer is ignored)
      expect(await d.logService.receiveGossip(a, 'y')).toBe('ignore')

      expect(await d.logService.receiveGossip(b, 'x')).toBe('accept')
      // an own entry accepted meanwhile is told after the gossiped ones before it
      await d.logService.append('finding', { kind: 'note', text: 'mine', paths: [], tags: [], refs: [], supersedes: '' })
      expect(heard).toEqual(['peer 1', 'peer 2', 'own finding'])
      await nextTurn()
      expect(heard).toEqual(['peer 1', 'peer 2', 'own finding']) // not told twice
      expect(fresh).toEqual([other.author, other.author])
    } finally { off(); offFresh() }
  })

  it('is told to the listeners on the next turn when nothing else is accepted', async () => {
    const other = await makeSigner()
    const [a] = feed(other, 1).map(encodeEntry)
    const heard: number[] = []
    const off = d.logService.onAccepted(e => { if (e.entry.author === other.author) heard.push(e.entry.seq) })
    try {
      expect(await d.logService.receiveGossip(a, 'x')).toBe('accept')
      expect(heard).toEqual([])
      await nextTurn()
      expect(heard).toEqual([1])
    } finally { off() }
  })

  it('from sync, or held back for a gap, says nothing about who is alive', async () => {
    const other = await makeSigner()
    const entries = feed(other, 3).map(encodeEntry)
    const fresh: string[] = []
    const offFresh = d.logService.onFreshEntry(author => { fresh.push(author) })
    try {
      expect(await d.logService.receiveGossip(entries[1], 'x')).toBe('ignore') // seq 2 waits for seq 1
      await d.logService.ingestBatchBytes([entries[0], entries[2]], 'x')
      expect(d.logService.state.get(idOfBytes(entries[2]))).toBeDefined()
      expect(fresh).toEqual([])
    } finally { offFresh() }
  })
})
