// Hand-built feeds for tests that need entries a LogState would never append.
import type { Entry } from '../../../src/gen/agency/v1/log.js'
import type { Signer } from '../../../src/core/log/crypto.js'
import { entryId, signEntry } from '../../../src/core/log/entry.js'
import { encodeBody } from '../../../src/core/log/kinds.js'

export function findingBody(text: string): Uint8Array {
  return encodeBody('finding', { kind: 'note', text })
}

/**
 * Entries start..start+n-1 of one author, chained by prev, lamport = seq.
 * `edit` may change an entry before it is chained into the next one.
 */
export function chain(signer: Signer, n: number, opts: { start?: number; prev?: Uint8Array; edit?: (e: Entry) => Entry } = {}): Entry[] {
  const out: Entry[] = []
  let prev = opts.prev ?? new Uint8Array(0)
  const start = opts.start ?? 1
  for (let seq = start; seq < start + n; seq++) {
    let e = signEntry(signer, { seq, prev, lamport: seq, time: 1000 * seq, kind: 'finding', body: findingBody(`entry ${seq}`) })
    if (opts.edit != null) e = opts.edit(e)
    out.push(e)
    prev = entryId(e)
  }
  return out
}
