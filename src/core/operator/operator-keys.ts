// Operator keys are Ed25519 public keys written as libp2p peer ids (the form
// a daemon's own key has), so one verifier serves entries and actions alike.
import { InvalidArgumentError } from '../errors.js'
import { authorKey } from '../log/crypto.js'

export function isOperatorKey(key: string): boolean {
  return key !== '' && authorKey(key) !== null
}

/** The keys, trimmed, deduplicated and sorted; InvalidArgumentError for one that is not an Ed25519 public key. */
export function parseOperatorKeys(keys: readonly string[]): string[] {
  const out = new Set<string>()
  for (const raw of keys) {
    const key = raw.trim()
    if (key === '') continue
    if (!isOperatorKey(key))
      throw new InvalidArgumentError(
        `${JSON.stringify(key.slice(0, 80))} is not an operator key (the last line \`agency operator keygen\` prints, an Ed25519 public key such as 12D3KooW...)`
      )
    out.add(key)
  }
  return [...out].sort()
}
