import { describe, expect, it } from 'vitest'
import { generateKeyPair, privateKeyToProtobuf } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { OperatorAction } from '../../src/gen/agency/v1/log.js'
import { openEnvelope } from '../../src/core/operator/index.js'
import { encodeAction, readKeyFile, signAction } from '../../src/ui/page/operator-signing.js'

// The page's own protobuf writer and WebCrypto signing, checked against the
// generated codec and the daemon's verifier (Node's WebCrypto has Ed25519 too).

describe("the page's operator signing", () => {
  it('encodes every field of an action as the generated codec decodes it', () => {
    const a = {
      operator: 'op',
      id: 'abc',
      time: 1_765_000_000_123,
      kind: 'task',
      goal: { text: 'g ✓', files: ['a', 'b'], testCommand: 'npm test' },
      task: { id: 't1', title: 'T', description: 'd', deps: ['x'], scope: ['src/**'], priority: -3 },
      text: 'hello',
      to: 'peer',
      operators: ['k1', 'k2'],
      leaseKeepMs: 3_600_000,
      request: 'r1',
      allow: true,
      always: true
    }
    expect(OperatorAction.decode(encodeAction(a))).toEqual(OperatorAction.fromPartial(a))
    expect(OperatorAction.decode(encodeAction({ operator: 'op', id: 'i', time: 5, kind: 'resume' }))).toEqual(
      OperatorAction.fromPartial({ operator: 'op', id: 'i', time: 5, kind: 'resume' })
    )
  })

  it("signs with the key file's key so that the daemon's verifier accepts it", async () => {
    const key = await generateKeyPair('Ed25519')
    const operator = peerIdFromPrivateKey(key).toString()
    const file = JSON.stringify({
      kind: 'agency operator key',
      operator,
      privateKey: Buffer.from(privateKeyToProtobuf(key)).toString('base64')
    })
    const k = await readKeyFile(file)
    const signed = await signAction(k, { kind: 'pause', text: 'lunch' })
    const opened = openEnvelope({ action: Buffer.from(signed.action, 'base64'), sig: Buffer.from(signed.sig, 'base64') })
    expect(opened.fault).toBeUndefined()
    expect(opened.action).toMatchObject({ operator, kind: 'pause', text: 'lunch' })
    await expect(readKeyFile('{"kind":"agency operator key"}')).rejects.toThrow(/not an operator key file/)
  })
})
