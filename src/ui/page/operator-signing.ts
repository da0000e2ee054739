// The operator's key in the page: read from the key file `agency operator
// keygen` wrote, kept in memory only (never stored, never sent), and used to
// sign actions with WebCrypto's Ed25519. An action is encoded here as the
// protobuf OperatorAction (proto/agency/v1/log.proto), field by field.

export interface ActionFields {
  kind: string
  goal?: { text: string; files?: string[]; testCommand?: string }
  task?: { id: string; title?: string; description?: string; deps?: string[]; scope?: string[]; priority?: number }
  text?: string
  to?: string
  operators?: string[]
  leaseKeepMs?: number
  request?: string
  allow?: boolean
  always?: boolean
}

// (the type of the key as importKey gives it: CryptoKey in the page, webcrypto.CryptoKey under node)
export interface OperatorKey {
  operator: string
  key: Awaited<ReturnType<typeof crypto.subtle.importKey>>
}

const DOMAIN_OPERATOR = 'agency/operator/v1'
export const DOMAIN_UI_LOGIN = 'agency/ui-login/v1'
const PKCS8_ED25519_PREFIX = [0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20]

// ---- protobuf, as much as an OperatorAction needs ----

class Writer {
  readonly bytes: number[] = []
  varint(n: number): void {
    if (n < 0) {
      this.negative(n)
      return
    }
    while (n >= 0x80) {
      this.bytes.push((n % 0x80) | 0x80)
      n = Math.floor(n / 0x80)
    }
    this.bytes.push(n)
  }

  /** a negative int32 as protobuf has it: ten bytes of two's complement */
  private negative(n: number): void {
    let v = BigInt.asUintN(64, BigInt(n))
    for (let i = 0; i < 9; i++) {
      this.bytes.push(Number(v & 0x7fn) | 0x80)
      v >>= 7n
    }
    this.bytes.push(Number(v))
  }

  tag(field: number, wire: number): void {
    this.varint(field * 8 + wire)
  }
  string(field: number, s: string | undefined): void {
    if (s === undefined || s === '') return
    this.lengthDelimited(field, new TextEncoder().encode(s))
  }

  strings(field: number, list: string[] | undefined): void {
    for (const s of list ?? []) this.lengthDelimited(field, new TextEncoder().encode(s))
  }

  number(field: number, n: number | undefined): void {
    if (n === undefined || n === 0) return
    this.tag(field, 0)
    this.varint(n)
  }

  bool(field: number, b: boolean | undefined): void {
    if (b !== true) return
    this.tag(field, 0)
    this.varint(1)
  }

  lengthDelimited(field: number, bytes: ArrayLike<number>): void {
    this.tag(field, 2)
    this.varint(bytes.length)
    for (let i = 0; i < bytes.length; i++) this.bytes.push(bytes[i])
  }
}

/** The OperatorAction's protobuf bytes. */
export function encodeAction(a: ActionFields & { operator: string; id: string; time: number }): Uint8Array {
  const w = new Writer()
  w.string(1, a.operator)
  w.string(2, a.id)
  w.number(3, a.time)
  w.string(4, a.kind)
  if (a.goal !== undefined) {
    const g = new Writer()
    g.string(1, a.goal.text)
    g.strings(2, a.goal.files)
    g.string(3, a.goal.testCommand)
    w.lengthDelimited(5, g.bytes)
  }
  if (a.task !== undefined) {
    const t = new Writer()
    t.string(1, a.task.id)
    t.string(2, a.task.title)
    t.string(3, a.task.description)
    t.strings(4, a.task.deps)
    t.strings(5, a.task.scope)
    t.number(6, a.task.priority)
    w.lengthDelimited(6, t.bytes)
  }
  w.string(7, a.text)
  w.string(8, a.to)
  w.strings(9, a.operators)
  w.number(10, a.leaseKeepMs)
  w.string(11, a.request)
  w.bool(12, a.allow)
  w.bool(13, a.always)
  return Uint8Array.from(w.bytes)
}

// ---- the key file and signing ----

function fromBase64(s: string): Uint8Array {
  return Uint8Array.from(atob(s), c => c.charCodeAt(0))
}

export function toBase64(bytes: Uint8Array): string {
  let s = ''
  for (const b of bytes) s += String.fromCharCode(b)
  return btoa(s)
}

/** Reads the key file's text; throws an Error saying what is wrong with it. */
export async function readKeyFile(text: string): Promise<OperatorKey> {
  let doc: { kind?: unknown; operator?: unknown; privateKey?: unknown }
  try {
    doc = JSON.parse(text) as typeof doc
  } catch {
    throw new Error('not an operator key file (not JSON)')
  }
  if (doc?.kind !== 'agency operator key' || typeof doc.operator !== 'string' || typeof doc.privateKey !== 'string')
    throw new Error('not an operator key file (make one with agency operator keygen)')
  // libp2p's protobuf form: type Ed25519 (08 01), data of 64 bytes (12 40): the seed, then the public key
  const raw = fromBase64(doc.privateKey)
  if (raw.length !== 68 || raw[0] !== 0x08 || raw[1] !== 0x01 || raw[2] !== 0x12 || raw[3] !== 0x40)
    throw new Error("the key file's private key is not an Ed25519 key")
  const pkcs8 = Uint8Array.from([...PKCS8_ED25519_PREFIX, ...raw.subarray(4, 36)])
  const key = await crypto.subtle.importKey('pkcs8', pkcs8, { name: 'Ed25519' }, false, ['sign'])
  return { operator: doc.operator, key }
}

async function signFramed(k: OperatorKey, domain: string, message: Uint8Array): Promise<Uint8Array> {
  const framed = Uint8Array.from([...new TextEncoder().encode(domain), 0, ...message])
  return new Uint8Array(await crypto.subtle.sign({ name: 'Ed25519' }, k.key, framed))
}

/** An action signed now, with a fresh id, as the dashboard's POST body. */
export async function signAction(k: OperatorKey, fields: ActionFields): Promise<{ action: string; sig: string }> {
  const id = Array.from(crypto.getRandomValues(new Uint8Array(16)), b => b.toString(16).padStart(2, '0')).join('')
  const bytes = encodeAction({ ...fields, operator: k.operator, id, time: Date.now() })
  return { action: toBase64(bytes), sig: toBase64(await signFramed(k, DOMAIN_OPERATOR, bytes)) }
}

/** The sign-in challenge signed. */
export async function signChallenge(k: OperatorKey, nonce: string): Promise<string> {
  return toBase64(await signFramed(k, DOMAIN_UI_LOGIN, new TextEncoder().encode(nonce)))
}
