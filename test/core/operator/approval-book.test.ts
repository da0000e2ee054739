import { describe, expect, it, beforeAll } from 'vitest'
import { Board } from '../../../src/core/board/board.js'
import type { Signer } from '../../../src/core/log/crypto.js'
import { createRandom } from '../../../src/sim/engine/random.js'
import { EntryWriter } from '../board/helpers.js'
import { carry, newSigner, signed } from './helpers.js'

let op: Signer
let member: Signer

beforeAll(async () => {
  op = await newSigner()
  member = await newSigner()
})

const ask = (w: EntryWriter, agent: string, id: string, closed = ''): ReturnType<EntryWriter['entry']> =>
  w.entry(agent, 'approval_request', {
    id,
    title: closed === '' ? `run ${id}` : '',
    grant: 'shell',
    detail: 'curl example.org',
    expiresAt: 5000,
    closed,
    task: 't'
  })

describe('approval requests', () => {
  it("wait for an operator; an operator's answer settles them, a member's counts for nothing", () => {
    const w = new EntryWriter()
    const b = new Board({ operators: [op.author] })
    b.apply(ask(w, 'm1', 'r1'))
    b.apply(ask(w, 'm1', 'r2'))
    b.apply(ask(w, 'm2', 'r3'))
    b.apply(carry(w, 'm1', signed(member, 5, { kind: 'approval', request: 'r1', allow: true })))
    expect(b.approvalRequests().map(a => a.state)).toEqual(['pending', 'pending', 'pending'])
    b.apply(carry(w, 'm3', signed(op, 6, { kind: 'approval', request: 'r1', allow: true, always: true })))
    b.apply(carry(w, 'm3', signed(op, 7, { kind: 'approval', request: 'r2', allow: false })))
    // a later answer to an answered request changes nothing
    b.apply(carry(w, 'm3', signed(op, 8, { kind: 'approval', request: 'r2', allow: true })))
    expect(b.approvalRequests().map(a => [a.id, a.agent, a.state, a.always, a.answeredBy])).toEqual([
      ['r1', 'm1', 'approved', true, op.author],
      ['r2', 'm1', 'denied', false, op.author],
      ['r3', 'm2', 'pending', false, undefined]
    ])
    expect(b.operatorRefusals()).toEqual([{ author: 'm1', count: 1 }])
  })

  it('a request its asker closed shows why, and only the asker can close it', () => {
    const w = new EntryWriter()
    const b = new Board({ operators: [op.author] })
    b.apply(ask(w, 'm1', 'r1'))
    b.apply(ask(w, 'm2', 'r1', 'withdrawn'))
    expect(b.approvalRequests()[0].state).toBe('pending')
    b.apply(ask(w, 'm1', 'r1', 'timed_out'))
    expect(b.approvalRequests()[0].state).toBe('timed_out')
  })

  it('any delivery order gives the same requests', () => {
    const w = new EntryWriter()
    const entries = [
      ask(w, 'm1', 'r1'),
      ask(w, 'm2', 'r1'),
      ask(w, 'm1', 'r2'),
      ask(w, 'm1', 'r2', 'timed_out'),
      ask(w, 'm2', 'r3'),
      carry(w, 'm3', signed(op, 6, { kind: 'approval', request: 'r3', allow: true })),
      carry(w, 'm3', signed(op, 7, { kind: 'approval', request: 'r1', allow: false }))
    ]
    const fold = (list: typeof entries): unknown => {
      const b = new Board({ operators: [op.author] })
      for (const e of list) b.apply(e)
      return b.approvalRequests()
    }
    const expected = fold(entries)
    for (let seed = 0; seed < 50; seed++) expect(fold(createRandom(seed).shuffle([...entries]))).toEqual(expected)
  })
})
