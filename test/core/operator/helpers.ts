// Operator keys and carried actions for tests of operator authority.
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { createSigner, type Signer } from '../../../src/core/log/crypto.js'
import { signOperatorAction } from '../../../src/core/operator/index.js'
import type { DeepPartial, OperatorAction, OperatorEnvelope } from '../../../src/gen/agency/v1/log.js'
import type { BoardEntry } from '../../../src/core/board/types.js'
import type { EntryWriter } from '../board/helpers.js'

export async function newSigner(): Promise<Signer> {
  const key = await generateKeyPair('Ed25519')
  return createSigner(peerIdFromPrivateKey(key).toString(), key.raw)
}

let ids = 0

/** An action signed by `signer`, with a fresh id; `time` is the operator's clock. */
export function signed(signer: Signer, time: number, action: DeepPartial<OperatorAction>): OperatorEnvelope {
  return signOperatorAction(signer, { id: `a${++ids}`, time, ...action })
}

/** An entry of `carrier` carrying `env`. */
export function carry(w: EntryWriter, carrier: string, env: OperatorEnvelope, lamport?: number): BoardEntry {
  return w.entry(carrier, 'operator', env, lamport)
}
