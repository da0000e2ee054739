// Real Ed25519 identities for tests: a peer id string and a signer for it.
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { createSigner, type Signer } from '../../../src/core/log/crypto.js'

export interface TestIdentity {
  id: string
  raw: Uint8Array
  signer: Signer
}

export async function makeIdentity (): Promise<TestIdentity> {
  const key = await generateKeyPair('Ed25519')
  const id = peerIdFromPrivateKey(key).toString()
  return { id, raw: key.raw, signer: createSigner(id, key.raw) }
}

export async function makeIdentities (n: number): Promise<TestIdentity[]> {
  return await Promise.all(Array.from({ length: n }, async () => await makeIdentity()))
}

/** A signer that claims `claimed`'s identity but holds `actual`'s key. */
export function impostor (claimed: TestIdentity, actual: TestIdentity): Signer {
  return createSigner(claimed.id, actual.raw)
}
