// The operator's key file: made by `agency operator keygen`, read by every
// `agency` command that signs as the operator (--operator-key FILE or
// AGENCY_OPERATOR_KEY). JSON, mode 0600, refused when others may read it, as
// ssh refuses an unprotected private key: whoever reads it steers the swarm.
import { randomBytes } from 'node:crypto'
import { readFile, stat, writeFile } from 'node:fs/promises'
import { generateKeyPair, privateKeyFromProtobuf, privateKeyToProtobuf } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { InvalidArgumentError } from '../core/errors.js'
import { createSigner, type Signer } from '../core/log/crypto.js'
import { signOperatorAction } from '../core/operator/index.js'
import type { DeepPartial, OperatorAction, OperatorEnvelope } from '../gen/agency/v1/log.js'

const FILE_KIND = 'agency operator key'

/** A malformed, unreadable or unprotected operator key file. */
export class OperatorKeyError extends InvalidArgumentError {
  constructor(message: string) {
    super(message)
    this.name = 'OperatorKeyError'
  }
}

/** Writes a new key pair to `file` (mode 0600; an existing file only with `force`) and returns the public key. */
export async function writeOperatorKey(file: string, force = false): Promise<string> {
  const key = await generateKeyPair('Ed25519')
  const operator = peerIdFromPrivateKey(key).toString()
  const text =
    JSON.stringify({ kind: FILE_KIND, operator, privateKey: Buffer.from(privateKeyToProtobuf(key)).toString('base64') }, null, 2) + '\n'
  await writeFile(file, text, { mode: 0o600, flag: force ? 'w' : 'wx' }).catch((err: NodeJS.ErrnoException) => {
    throw new OperatorKeyError(
      err.code === 'EEXIST'
        ? `${file} exists; pass --force to replace it (the swarm's daemons then need the new public key)`
        : `cannot write ${file}: ${err.message}`
    )
  })
  return operator
}

/** Reads an operator key file; OperatorKeyError says what is wrong with it. */
export async function readOperatorKey(file: string): Promise<Signer> {
  let text: string
  try {
    const s = await stat(file)
    if ((s.mode & 0o077) !== 0)
      throw new OperatorKeyError(`the operator key ${file} may be read by others (mode ${(s.mode & 0o777).toString(8)}): chmod 600 ${file}`)
    text = await readFile(file, 'utf8')
  } catch (err) {
    if (err instanceof OperatorKeyError) throw err
    throw new OperatorKeyError(`cannot read the operator key ${file}: ${(err as Error).message}`)
  }
  const bad = (why: string): never => {
    throw new OperatorKeyError(`${file} is not an operator key (${why}); make one with \`agency operator keygen --out FILE\``)
  }
  let doc: { kind?: unknown; operator?: unknown; privateKey?: unknown }
  try {
    doc = JSON.parse(text) as typeof doc
  } catch {
    return bad('not JSON')
  }
  if (typeof doc !== 'object' || doc === null || doc.kind !== FILE_KIND) return bad(`no "kind": "${FILE_KIND}"`)
  if (typeof doc.privateKey !== 'string' || typeof doc.operator !== 'string') return bad('no private key')
  let key
  try {
    key = privateKeyFromProtobuf(Buffer.from(doc.privateKey, 'base64'))
  } catch {
    return bad('the private key does not decode')
  }
  if (key.type !== 'Ed25519') return bad(`a ${key.type} key; operators use Ed25519`)
  const operator = peerIdFromPrivateKey(key).toString()
  if (operator !== doc.operator) return bad("its public key is not the private key's")
  return createSigner(operator, key.raw)
}

/** The key file to sign with: --operator-key, else AGENCY_OPERATOR_KEY; undefined for neither. */
export function operatorKeyFile(flag?: string): string | undefined {
  if (flag != null && flag !== '') return flag
  const env = process.env.AGENCY_OPERATOR_KEY
  return env != null && env !== '' ? env : undefined
}

/** An action signed now, with a fresh random id. */
export function signNow(signer: Signer, action: DeepPartial<OperatorAction>): OperatorEnvelope {
  return signOperatorAction(signer, { id: randomBytes(16).toString('hex'), time: Date.now(), ...action })
}
