// The daemon's Ed25519 identity, created once and kept in the data dir, so a
// restarted daemon has the same peer id (and the same log author).
import { mkdir, readFile, writeFile, rename } from 'node:fs/promises'
import { join } from 'node:path'
import { generateKeyPair, privateKeyFromProtobuf, privateKeyToProtobuf } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import type { PrivateKey } from '@libp2p/interface'
import { sign as edSign } from 'node:crypto'
import { AgencyError } from '../core/errors.js'
import { ed25519PrivateKeyObject } from '../core/log/crypto.js'

export const IDENTITY_FILE = 'identity.key'

export interface Identity {
  privateKey: PrivateKey
  peerId: string
  /** made just now: no peer can hold anything this identity signed */
  created: boolean
}

export async function loadOrCreateIdentity(dataDir: string): Promise<Identity> {
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
  return { privateKey: signingOnce(privateKey), peerId: peerIdFromPrivateKey(privateKey).toString(), created }
}

/**
 * The same key, signing through one node:crypto key object made once.
 * libp2p's Ed25519 key imports itself from a JWK at every signature (each
 * connection's handshake, each signed peer record), and a host of dozens of
 * daemons opens hundreds of connections as it starts. Ed25519 signatures are
 * deterministic: the bytes are the ones libp2p's own signing makes.
 */
export function signingOnce(key: PrivateKey): PrivateKey {
  if (key.type !== 'Ed25519') return key
  const native = ed25519PrivateKeyObject(key.raw)
  const sign: PrivateKey['sign'] = (message, options) => {
    options?.signal?.throwIfAborted()
    return edSign(null, message instanceof Uint8Array ? message : message.subarray(), native)
  }
  return Object.assign(Object.create(Object.getPrototypeOf(key) as object) as PrivateKey, key, { sign })
}
