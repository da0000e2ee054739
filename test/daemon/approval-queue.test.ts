// The approval queue on a real board: the request and its close are entries
// the board folds; the operator's answer is a signed action. What the agent
// is told in each case, and what the log keeps.
import { beforeAll, describe, expect, it } from 'vitest'
import { Board } from '../../src/core/board/board.js'
import type { ApprovalRequest, DeepPartial } from '../../src/gen/agency/v1/log.js'
import { ApprovalQueue } from '../../src/daemon/approval-queue.js'
import { componentLogger } from '../../src/logger.js'
import type { Signer } from '../../src/core/log/crypto.js'
import { EntryWriter } from '../core/board/helpers.js'
import { carry, newSigner, signed } from '../core/operator/helpers.js'
import { waitFor } from '../helpers/wait-for.js'

let op: Signer
beforeAll(async () => {
  op = await newSigner()
})

function rig(o: { operators?: string[]; timeoutMs?: number } = {}): {
  board: Board
  queue: ApprovalQueue
  written: Array<DeepPartial<ApprovalRequest>>
  told: string[]
  answer: (allow: boolean) => void
} {
  const board = new Board({ operators: o.operators ?? [op.author] })
  const w = new EntryWriter()
  const listeners = new Set<() => void>()
  const written: Array<DeepPartial<ApprovalRequest>> = []
  const told: string[] = []
  const apply = (e: ReturnType<EntryWriter['entry']>): void => {
    board.apply(e)
    for (const l of [...listeners]) l()
  }
  const queue = new ApprovalQueue({
    board: () => board,
    append: async r => {
      written.push(r)
      apply(w.entry('me', 'approval_request', { id: '', title: '', grant: '', detail: '', expiresAt: 0, closed: '', task: '', ...r }))
    },
    onEntry: l => {
      listeners.add(l)
      return () => {
        listeners.delete(l)
      }
    },
    timeoutMs: o.timeoutMs ?? 60_000,
    wallClock: () => 1_000,
    task: () => 'greet',
    tell: text => {
      told.push(text)
    },
    logger: componentLogger('test')
  })
  const answer = (allow: boolean): void => {
    const id = written[0].id as string
    apply(carry(w, 'peer', signed(op, 5, { kind: 'approval', request: id, allow })))
  }
  return { board, queue, written, told, answer }
}

const q = {
  what: 'fetch https://example.org',
  category: 'fetch' as const,
  grant: 'fetch' as const,
  reason: 'the web is outside the workspace (grant fetch for it)'
}

describe('the approval queue', () => {
  it('waits for the operator and tells the agent so; an approval lets it go on', async () => {
    const r = rig()
    const asked = r.queue.ask(q, new AbortController().signal)
    await waitFor(() => r.told.length === 1, { what: 'the request to be written' })
    expect(r.written[0]).toMatchObject({ title: q.what, grant: 'fetch', task: 'greet', expiresAt: 61_000 })
    expect(r.told[0]).toMatch(/waits for the operator \(approval [0-9a-f]+\); it is denied if nobody answers within 1 min/)
    expect(r.board.approvalRequests()[0].state).toBe('pending')
    r.answer(true)
    expect(await asked).toEqual({ allow: true, always: false, reason: 'approved by the operator' })
  })

  it('says the operator denied it, and tells the agent so', async () => {
    const r = rig()
    const asked = r.queue.ask(q, new AbortController().signal)
    await waitFor(() => r.told.length === 1, { what: 'the request to be written' })
    r.answer(false)
    expect(await asked).toEqual({ allow: false, always: false, reason: 'denied by the operator' })
    expect(r.told[1]).toBe(`the operator denied your request (approval ${r.written[0].id as string}): ${q.what}`)
  })

  it('denies an unanswered request after the timeout, with the reason, and closes it in the log', async () => {
    const r = rig({ timeoutMs: 50 })
    const a = await r.queue.ask(q, new AbortController().signal)
    expect(a.allow).toBe(false)
    expect(a.reason).toMatch(/nobody answered within 1 min \(approval [0-9a-f]+\)/)
    expect(r.written[1]).toMatchObject({ id: r.written[0].id, closed: 'timed_out' })
    expect(r.board.approvalRequests()[0].state).toBe('timed_out')
    expect(r.told[1]).toBe(`nobody answered your request (approval ${r.written[0].id as string}) within 1 min, so it was denied: ${q.what}`)
  })

  it('closes a request whose turn was stopped as withdrawn', async () => {
    const r = rig()
    const stop = new AbortController()
    const asked = r.queue.ask(q, stop.signal)
    await waitFor(() => r.told.length === 1, { what: 'the request to be written' })
    stop.abort()
    expect((await asked).reason).toBe('the turn was stopped before the operator answered')
    expect(r.told).toHaveLength(1)
    expect(r.board.approvalRequests()[0].state).toBe('withdrawn')
  })

  it('denies at once on a swarm without an operator, asking nobody', async () => {
    const r = rig({ operators: [] })
    const a = await r.queue.ask(q, new AbortController().signal)
    expect(a).toEqual({ allow: false, always: false, reason: `${q.reason}; the swarm has no operator to ask` })
    expect(r.written).toEqual([])
  })
})
