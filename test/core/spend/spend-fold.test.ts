// The spend views are folds: the same entries in any delivery order give the
// same totals, budget and holds; a partition's halves agree once they hold
// each other's entries; absurd numbers from a peer never reach the fold.
import { beforeAll, describe, expect, it } from 'vitest'
import { LogState } from '../../../src/core/log/log-state.js'
import { entryId, entryIdHex, signEntry } from '../../../src/core/log/entry.js'
import { decodeBody, encodeBody, BadBodyError, type EntryKind } from '../../../src/core/log/kinds.js'
import { SpendFold, allTokens } from '../../../src/core/spend/index.js'
import { Usage, type Entry } from '../../../src/gen/agency/v1/log.js'
import type { Signer } from '../../../src/core/log/crypto.js'
import { makeIdentities, type TestIdentity } from '../../helpers/identity.js'

let ids: TestIdentity[]
beforeAll(async () => {
  ids = await makeIdentities(4)
})

/** A feed of one author: each item is a kind and a body, chained. */
function feed(signer: Signer, items: Array<[EntryKind, object]>, lamportBase = 0): Entry[] {
  let prev: Uint8Array = new Uint8Array(0)
  return items.map(([kind, body], i) => {
    const e = signEntry(signer, {
      seq: i + 1,
      prev,
      lamport: lamportBase + i + 1,
      time: 1_000_000 + i,
      kind,
      body: encodeBody(kind, body as never)
    })
    prev = entryId(e)
    return e
  })
}

const run = (model: string, input: number, output: number, microUsd: number, task = 't1', wallMs = 60_000): object => ({
  models: [{ model, inputTokens: input, cacheReadTokens: 0, cacheWriteTokens: 0, outputTokens: output, microUsd, estimated: false }],
  wallMs,
  task,
  harness: 'claude'
})

function fold(entries: Entry[]): SpendFold {
  const f = new SpendFold()
  for (const e of entries)
    f.apply({
      id: entryIdHex(e),
      author: e.author,
      seq: e.seq,
      lamport: e.lamport,
      time: e.time,
      kind: e.kind,
      body: decodeBody(e.kind as EntryKind, e.body)
    })
  return f
}

function shuffled<T>(items: T[], seed: number): T[] {
  const out = [...items]
  let s = seed
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) & 0x7fffffff
    const j = s % (i + 1)
    ;[out[i], out[j]] = [out[j], out[i]]
  }
  return out
}

function snapshot(f: SpendFold): unknown {
  return {
    total: f.book.totals(),
    agents: f.book.by('agent'),
    models: f.book.by('model'),
    tasks: f.book.by('task'),
    largest: f.book.largestRun(),
    budget: f.budgets.current(),
    holds: f.holds.all(0)
  }
}

describe('the spend fold', () => {
  it('sums per agent, model and task; input counts cache reads and writes too', () => {
    const [a, b] = ids
    const f = fold([
      ...feed(a.signer, [
        ['usage', run('m1', 100, 10, 5000)],
        [
          'usage',
          {
            models: [
              { model: 'm2', inputTokens: 5, cacheReadTokens: 7, cacheWriteTokens: 3, outputTokens: 1, microUsd: 10, estimated: true }
            ],
            wallMs: 1000,
            task: 't2',
            harness: 'x'
          }
        ]
      ]),
      ...feed(b.signer, [['usage', run('m1', 50, 5, 2000)]])
    ])
    const t = f.book.totals()
    expect(t).toMatchObject({
      inputTokens: 155,
      cacheReadTokens: 7,
      cacheWriteTokens: 3,
      outputTokens: 16,
      microUsd: 7010,
      estimated: true,
      runs: 3,
      wallMs: 121_000
    })
    expect(allTokens(t)).toBe(181)
    expect(f.book.agent(a.id)).toMatchObject({ microUsd: 5010, runs: 2 })
    expect(f.book.by('model').map(r => [r.key, r.totals.microUsd, r.totals.runs])).toEqual([
      ['m1', 7000, 2],
      ['m2', 10, 1]
    ])
    expect(f.book.by('task').map(r => [r.key, r.totals.runs])).toEqual([
      ['t1', 2],
      ['t2', 1]
    ])
    expect(f.book.largestRun()).toEqual({ microUsd: 5000, tokens: 110, wallMs: 60_000 })
  })

  it('two replicas given the same entries in different orders hold the same views', () => {
    const [a, b, c] = ids
    const entries = [
      ...feed(a.signer, [
        ['usage', run('m1', 100, 10, 5000)],
        ['budget', { microUsd: 1_000_000 }],
        ['usage', run('m2', 1, 1, 1, 't9')]
      ]),
      ...feed(
        b.signer,
        [
          ['budget', { tokens: 500 }],
          ['rate_limit', { provider: 'ab'.repeat(8), until: 2_000_000, kind: 'transient', message: '429' }],
          ['usage', run('m1', 3, 3, 3)]
        ],
        1
      ),
      ...feed(
        c.signer,
        [
          ['rate_limit', { provider: 'ab'.repeat(8), until: 3_000_000, kind: 'quota', message: 'quota' }],
          ['usage', run('m3', 9, 9, 9, '')]
        ],
        2
      )
    ]
    const first = snapshot(fold(entries))
    for (let seed = 1; seed <= 20; seed++) expect(snapshot(fold(shuffled(entries, seed)))).toEqual(first)
    // the latest budget entry in (lamport, author) order holds, and the latest hold
    const f = fold(entries)
    expect(f.budgets.current()?.tokens ?? -1).toBeGreaterThanOrEqual(0)
    expect(f.holds.current('ab'.repeat(8), 0)).toMatchObject({ until: 3_000_000, kind: 'quota' })
  })

  it('a partition: each half folds its own; after healing both hold the union and agree', () => {
    const [a, b, c, d] = ids
    const left = [
      ...feed(a.signer, [
        ['usage', run('m1', 10, 1, 100)],
        ['usage', run('m1', 10, 1, 100)]
      ]),
      ...feed(b.signer, [['usage', run('m1', 20, 2, 200)]])
    ]
    const right = [
      ...feed(c.signer, [['usage', run('m2', 30, 3, 300)]]),
      ...feed(d.signer, [
        ['usage', run('m2', 40, 4, 400)],
        ['budget', { microUsd: 900 }]
      ])
    ]
    const l = fold(left)
    const r = fold(right)
    expect(l.book.totals().microUsd).toBe(400)
    expect(r.book.totals().microUsd).toBe(700)
    // heal: each half receives the other's entries
    for (const e of right)
      l.apply({
        id: entryIdHex(e),
        author: e.author,
        seq: e.seq,
        lamport: e.lamport,
        time: e.time,
        kind: e.kind,
        body: decodeBody(e.kind as EntryKind, e.body)
      })
    for (const e of left)
      r.apply({
        id: entryIdHex(e),
        author: e.author,
        seq: e.seq,
        lamport: e.lamport,
        time: e.time,
        kind: e.kind,
        body: decodeBody(e.kind as EntryKind, e.body)
      })
    expect(snapshot(l)).toEqual(snapshot(r))
    expect(l.book.totals().microUsd).toBe(1100)
    // an entry delivered twice counts once
    l.apply({ id: entryIdHex(left[0]), author: a.id, seq: 1, lamport: 1, time: 0, kind: 'usage', body: Usage.decode(left[0].body) })
    expect(l.book.totals().microUsd).toBe(1100)
  })
})

describe('absurd spend entries', () => {
  it('are refused before signing, with a clear error', () => {
    expect(() => encodeBody('usage', run('m', -5, 1, 1) as never)).toThrow()
    expect(() => encodeBody('usage', run('m', 1e12, 1, 1) as never)).toThrow(BadBodyError)
    expect(() => encodeBody('usage', run('m', 1e12, 1, 1) as never)).toThrow(/input_tokens .* out of range/)
    expect(() => encodeBody('usage', { models: Array.from({ length: 17 }, () => ({ model: 'm' })), wallMs: 1 })).toThrow(
      /at most 16 models/
    )
    expect(() => encodeBody('budget', { microUsd: 1e20 })).toThrow(/out of range/)
    expect(() => encodeBody('rate_limit', { provider: 'sk-ant-secret', until: 1, kind: 'transient' })).toThrow(/not a hash/)
  })

  it('from a peer, are rejected by the log as a bad body and change nothing', () => {
    const [a] = ids
    // a hostile peer signs a body no honest daemon would encode: 1e12 input tokens
    const bytes = Usage.encode(Usage.fromPartial(run('m', 1e12, 1, 1) as never)).finish()
    const bad = signEntry(a.signer, { seq: 1, prev: new Uint8Array(0), lamport: 1, time: 1, kind: 'usage', body: bytes })
    const log = new LogState()
    expect(log.ingest(bad)).toMatchObject({ status: 'rejected', reason: 'bad_body' })
    expect(log.size).toBe(0)
    expect(log.rejected.bad_body).toBe(1)
    const good = feed(a.signer, [['usage', run('m', 5, 1, 1)]])[0]
    expect(log.ingest(good)).toMatchObject({ status: 'accepted' })
  })
})
