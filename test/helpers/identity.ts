// Real Ed25519 identities for tests: a peer id string, the key (for a libp2p
// node of that identity) and a signer for it. The one makeIdentity of the suite.
import { generateKeyPair } from '@libp2p/crypto/keys'
import type { PrivateKey } from '@libp2p/interface'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { createSigner, type Signer } from '../../src/core/log/crypto.js'

export interface TestIdentity {
  /** the peer id string */
  id: string
  privateKey: PrivateKey
  /** the raw Ed25519 key (seed + public key) */
  raw: Uint8Array
  signer: Signer
}

export async function makeIdentity(): Promise<TestIdentity> {
  const privateKey = await generateKeyPair('Ed25519')
  const id = peerIdFromPrivateKey(privateKey).toString()
  return { id, privateKey, raw: privateKey.raw, signer: createSigner(id, privateKey.raw) }
}

export async function makeIdentities(n: number): Promise<TestIdentity[]> {
  return await Promise.all(Array.from({ length: n }, async () => await makeIdentity()))
}

/** A signer that claims `claimed`'s identity but holds `actual`'s key. */
export function impostor(claimed: TestIdentity, actual: TestIdentity): Signer {
  return createSigner(claimed.id, actual.raw)
}
