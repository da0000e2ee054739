import { describe, expect, it, beforeAll } from 'vitest'
import fc from 'fast-check'
import { Board } from '../../../src/core/board/board.js'
import type { BoardEntry } from '../../../src/core/board/types.js'
import type { Signer } from '../../../src/core/log/crypto.js'
import { createRandom } from '../../../src/sim/engine/random.js'
import { EntryWriter, snapshot } from './helpers.js'
import { carry, newSigner, signed } from '../operator/helpers.js'

// Replicas holding the same entries, operator actions among them (good,
// forged, replayed, concurrent), answer the same whatever order they arrived
// in, removals of members among them; a checkpoint and a fork found later
// give the same board again.

let ops: Signer[]
/** the members: real peer ids, so that a removal may name them */
let carriers: string[]

beforeAll(async () => {
  ops = [await newSigner(), await newSigner(), await newSigner()]
  carriers = [(await newSigner()).author, (await newSigner()).author, (await newSigner()).author]
})

function randomEntries(seed: number, n: number): BoardEntry[] {
  const rng = createRandom(seed)
  const w = new EntryWriter()
  const made: BoardEntry[] = []
  const envelopes = []
  for (let i = 0; i < n; i++) {
    const carrier = carriers[rng.int(carriers.length)]
    const signer = ops[rng.int(ops.length)]
    const time = 1 + rng.int(20)
    const lamport = rng.chance(0.3) ? 1 + rng.int(made.length + 1) : undefined
    const pick = rng.int(11)
    if (pick === 0) made.push(w.goal(carrier, `plain ${i}`, lamport))
    else if (pick === 1 && envelopes.length > 0) made.push(carry(w, carrier, envelopes[rng.int(envelopes.length)], lamport))
    else if (pick === 2) made.push(w.task(carrier, { id: `t${rng.int(4)}`, priority: rng.int(5) }, lamport))
    else if (pick === 3) made.push(w.claim(carrier, `t${rng.int(4)}`, 1 + rng.int(2), {}, lamport))
    else {
      const kinds = [
        { kind: 'goal', goal: { text: `goal ${i}`, testCommand: 't' }, operators: [ops[0].author, ops[1].author] },
        { kind: 'pause', text: `p${i}` },
        { kind: 'resume' },
        { kind: 'task', task: { id: `t${rng.int(4)}`, title: `by op ${i}` } },
        { kind: 'task_cancel', task: { id: `t${rng.int(4)}` } },
        { kind: 'task_priority', task: { id: `t${rng.int(4)}`, priority: rng.int(9) } },
        { kind: 'message', text: `m${i}`, to: rng.chance(0.5) ? '' : carriers[rng.int(3)] },
        { kind: 'member_remove', peers: [carriers[rng.int(3)]], afterSeq: rng.int(4) },
        { kind: 'member_allow', peers: [carriers[rng.int(3)]] }
      ]
      const env = signed(signer, time, kinds[rng.int(kinds.length)])
      envelopes.push(env)
      made.push(carry(w, carrier, env, lamport))
    }
  }
  return made
}

function view(b: Board): unknown {
  return {
    ...(snapshot(b, 0) as object),
    operators: b.operators(),
    paused: b.paused(),
    messages: b.operatorMessages(),
    audit: b.operatorActions(),
    refusals: b.operatorRefusals(),
    members: b.membership()
  }
}

function fold(entries: readonly BoardEntry[], operators?: string[]): Board {
  const b = new Board({ operators })
  for (const e of entries) b.apply(e)
  return b
}

describe('operator actions converge', () => {
  it('any delivery order gives the same board, with configured keys and with keys from the first goal', () => {
    fc.assert(
      fc.property(fc.integer(), fc.integer(), fc.integer({ min: 1, max: 25 }), fc.boolean(), (seed, shuffle, n, configured) => {
        const entries = randomEntries(seed, n)
        const keys = configured ? [ops[0].author] : undefined
        const expected = view(fold(entries, keys))
        const rng = createRandom(shuffle)
        const again = rng.shuffle([...entries, ...entries.filter(() => rng.chance(0.3))])
        expect(view(fold(again, keys))).toEqual(expected)
      }),
      { numRuns: 300 }
    )
  })

  it('a board taken from a checkpoint answers as the one that folded the log, with what arrives after it too', () => {
    for (const seed of [7, 8, 9, 10]) {
      const entries = randomEntries(seed, 40)
      const b = fold(entries, [ops[0].author])
      const cut = fold(entries.slice(0, 25), [ops[0].author])
      const restored = new Board({ operators: [ops[0].author] })
      restored.takeFoldState(structuredClone(cut.foldState()), () => entries.slice(0, 25))
      for (const e of entries.slice(25)) restored.apply(e)
      expect(view(restored)).toEqual(view(b))
    }
  })

  it('a carrier found faulty loses only what it carried past its fork; the same action carried by another still counts', () => {
    const w = new EntryWriter()
    const pause = signed(ops[0], 5, { kind: 'pause' })
    const [m1, m2, m3] = carriers
    const entries = [carry(w, m1, signed(ops[0], 1, { kind: 'goal', goal: { text: 'g' } })), carry(w, m2, pause), carry(w, m3, pause)]
    const b = fold(entries, [ops[0].author])
    expect(b.paused().paused).toBe(true)
    b.markFaulty(m2, 1)
    expect(b.paused().paused).toBe(true)
    b.markFaulty(m3, 1)
    expect(b.paused().paused).toBe(false)
    expect(b.goal()?.text).toBe('g')
  })
})
