// One entry of the shared record: its canonical bytes, its id, its signature.
// The canonical encoding is ts-proto's (fields in number order, defaults
// omitted); decodeEntry refuses any other encoding of the same message, so an
// entry has exactly one byte string and therefore exactly one id.
import { Entry } from '../../gen/agency/v1/log.js'
import { InvalidArgumentError, TooLargeError } from '../errors.js'
import { DOMAIN_ENTRY, sha256, sha256Hex, toHex, verifySignature, type Signer } from './crypto.js'
import { ENTRY_ID_BYTES, MAX_ENTRY_BYTES } from './limits.js'

/** What an author fills in; `author` comes from the signer and `sig` from signing. */
export type EntryFields = Omit<Entry, 'author' | 'sig' | 'prev' | 'body'> & { prev: Uint8Array; body: Uint8Array }

/** Bytes that are not a canonically encoded Entry. */
export class MalformedEntryError extends InvalidArgumentError {
  constructor(message: string, cause?: unknown) {
    super(message)
    this.name = 'MalformedEntryError'
    if (cause !== undefined) this.cause = cause
  }
}

const EMPTY = Buffer.alloc(0)

export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

/** The canonical encoding of a whole entry, signature included. */
export function encodeEntry(e: Entry): Uint8Array {
  return Entry.encode(e).finish()
}

/** The bytes the signature covers: the canonical encoding with `sig` empty. */
export function unsignedBytes(e: Entry): Uint8Array {
  return encodeEntry({ ...e, sig: EMPTY })
}

/** sha256 of the canonical encoding, signature included. */
export function entryId(e: Entry): Uint8Array {
  return sha256(encodeEntry(e))
}

export function entryIdHex(e: Entry): string {
  return toHex(entryId(e))
}

/** The id of an entry from its canonical bytes. */
export function idOfBytes(bytes: Uint8Array): string {
  return sha256Hex(bytes)
}

const ID_HEX = /^[0-9a-f]{64}$/

/** True for a well-formed entry id in hex (lower case, 64 digits). */
export function isEntryIdHex(s: string): boolean {
  return s.length === ENTRY_ID_BYTES * 2 && ID_HEX.test(s)
}

export { toHex }

/** Signs `fields` as `signer.author`. */
export function signEntry(signer: Signer, fields: EntryFields): Entry {
  const unsigned: Entry = {
    author: signer.author,
    seq: fields.seq,
    prev: asBuffer(fields.prev),
    lamport: fields.lamport,
    time: fields.time,
    kind: fields.kind,
    body: asBuffer(fields.body),
    sig: EMPTY
  }
  const sig = signer.sign(DOMAIN_ENTRY, unsignedBytes(unsigned))
  return { ...unsigned, sig: asBuffer(sig) }
}

/** True when `sig` is the signature of the key that `author` names over every other field. Never throws. */
export function verifyEntry(e: Entry): boolean {
  let message: Uint8Array
  try {
    message = unsignedBytes(e)
  } catch {
    return false
  }
  return verifySignature(DOMAIN_ENTRY, e.author, message, e.sig)
}

/**
 * Decodes an entry from the wire or disk. Throws TooLargeError over `maxBytes`
 * and MalformedEntryError for bytes that do not decode, or that decode but are
 * not the canonical encoding (unknown fields, repeated or unordered fields).
 */
export function decodeEntry(bytes: Uint8Array, maxBytes: number = MAX_ENTRY_BYTES): Entry {
  if (bytes.byteLength > maxBytes) throw new TooLargeError('entry', bytes.byteLength, maxBytes)
  let entry: Entry
  try {
    entry = Entry.decode(bytes)
  } catch (err) {
    throw new MalformedEntryError(`entry does not decode: ${(err as Error).message}`, err)
  }
  let again: Uint8Array
  try {
    again = encodeEntry(entry)
  } catch (err) {
    throw new MalformedEntryError('entry does not re-encode', err)
  }
  if (Buffer.compare(again, bytes) !== 0) throw new MalformedEntryError('entry is not canonically encoded')
  return entry
}
