// The daemon's Ed25519 identity, created once and kept in the data dir, so a
// restarted daemon has the same peer id (and the same log author).
import { mkdir, readFile, writeFile, rename } from 'node:fs/promises'
import { join } from 'node:path'
import { generateKeyPair, privateKeyFromProtobuf, privateKeyToProtobuf } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import type { PrivateKey } from '@libp2p/interface'
import { AgencyError } from '../core/errors.js'

export const IDENTITY_FILE = 'identity.key'

export interface Identity {
  privateKey: PrivateKey
  peerId: string
  /** made just now: no peer can hold anything this identity signed */
  created: boolean
}

export async function loadOrCreateIdentity (dataDir: string): Promise<Identity> {
  const path = join(dataDir, IDENTITY_FILE)
  let privateKey: PrivateKey
  let created = false
  try {
    privateKey = privateKeyFromProtobuf(await readFile(path))
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new AgencyError('FAILED_PRECONDITION', `cannot read the identity at ${path}: ${(err as Error).message}`, { cause: err })
    }
    privateKey = await generateKeyPair('Ed25519')
    created = true
    await mkdir(dataDir, { recursive: true, mode: 0o700 })
    // Write then rename, so a crash never leaves a half-written identity.
    await writeFile(`${path}.tmp`, privateKeyToProtobuf(privateKey), { mode: 0o600 })
    await rename(`${path}.tmp`, path)
  }
  if (privateKey.type !== 'Ed25519') {
    throw new AgencyError('FAILED_PRECONDITION', `the identity at ${path} is ${privateKey.type}; agency needs Ed25519`)
  }
  return { privateKey, peerId: peerIdFromPrivateKey(privateKey).toString(), created }
}
