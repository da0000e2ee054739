import { describe, expect, it } from 'vitest'
import { ClaimProtocol, type ProtocolOutput } from '../../../src/core/board/claim-protocol.js'
import { FailedPreconditionError } from '../../../src/core/errors.js'
import { EntryWriter } from './helpers.js'

// The claim protocol is driven here by hand, as its runners drive it: what it
// asks to append is written (by the test's EntryWriter, as "me") and folded
// back in; the time moves only when the test says so.

const ME = 'me'
const WINDOW = 500

function setup(opts: { leaseMs?: number } = {}) {
  const w = new EntryWriter()
  const p = new ClaimProtocol({ me: ME, startedAt: 0, fixedSettleMs: WINDOW, leaseMs: opts.leaseMs ?? 10_000 })
  p.apply(w.task('planner', { id: 'parser' }), 0)
  p.apply(w.task('planner', { id: 'lexer' }), 0)
  /** Writes what the protocol asked for, as agentd's log would, and folds it back in. */
  const run = (out: ProtocolOutput, now: number): ProtocolOutput[] => {
    const more: ProtocolOutput[] = []
    for (const a of out.append) more.push(p.apply(w.entry(ME, a.kind, a.body), now))
    return more
  }
  return { w, p, run }
}

describe('the claim protocol, sans-IO', () => {
  it('writes a claim, waits the settle window from the moment the entry is in the log, then answers HELD', () => {
    const { p, run } = setup()
    const ticket = p.claim('parser', ['src/parser/**'], 100)
    expect(ticket).toMatchObject({ task: 'parser', epoch: 1 })
    expect(ticket.output.append).toEqual([
      { kind: 'claim', body: expect.objectContaining({ task: 'parser', epoch: 1, scope: ['src/parser/**'] }) }
    ])
    expect(ticket.output.answers).toEqual([])
    expect(p.nextWake()).toBeUndefined() // the entry is not written yet
    run(ticket.output, 150)
    expect(p.nextWake()).toBe(150 + WINDOW)
    expect(p.tick(150 + WINDOW - 1).answers).toEqual([])
    const out = p.tick(150 + WINDOW)
    expect(out.answers).toEqual([{ outcome: 'HELD', task: 'parser', epoch: 1, winner: ME, settleMs: WINDOW, handoff: '', branch: '' }])
    expect(out.mineChanged).toBe(true)
    expect(p.mine()).toEqual([{ task: 'parser', epoch: 1, settled: true }])
    expect(p.nextWake()).toBeUndefined()
  })

  it('a smaller competing claim that arrives in the window: LOST naming the winner, and the losing claim is released', () => {
    const { w, p, run } = setup()
    const ticket = p.claim('parser', [], 0)
    run(ticket.output, 0)
    // amy's claim at the same epoch sorts first: a lower lamport
    p.apply(w.claim('amy', 'parser', 1, {}, 1), 100)
    const out = p.tick(WINDOW)
    expect(out.answers).toEqual([expect.objectContaining({ outcome: 'LOST', task: 'parser', epoch: 1, winner: 'amy', reason: 'outbid' })])
    expect(out.notices).toEqual([]) // the answer tells the agent
    expect(out.append).toEqual([{ kind: 'release', body: expect.objectContaining({ task: 'parser', epoch: 1, note: '' }) }])
    run(out, WINDOW)
    expect(p.board.claimStatus('parser', ME, 1)).toBe('released')
    expect(p.mine()).toEqual([])
  })

  it('watches a held claim: outbid for a settle window is a notice and a release; superseded is a notice', () => {
    const { w, p, run } = setup()
    for (const task of ['parser', 'lexer']) run(p.claim(task, [], 0).output, 0)
    p.tick(WINDOW)
    expect(p.mine().map(c => c.settled)).toEqual([true, true])

    // a healed partition brings a smaller claim on parser: a loss, told once it has lasted a window
    const outbid = p.apply(w.claim('amy', 'parser', 1, {}, 1), 2_000)
    expect(outbid).toMatchObject({ notices: [], append: [] })
    expect(p.nextWake()).toBe(2_000 + WINDOW)
    const told = p.tick(2_000 + WINDOW)
    expect(told.notices).toEqual([{ type: 'claim_lost', task: 'parser', epoch: 1, reason: 'outbid', winner: 'amy' }])
    expect(told.append).toEqual([{ kind: 'release', body: expect.objectContaining({ task: 'parser', epoch: 1 }) }])
    // a takeover at a higher epoch on lexer
    p.apply(w.claim('bob', 'lexer', 2), 3_000)
    const superseded = p.tick(3_000 + WINDOW)
    expect(superseded.notices).toEqual([{ type: 'claim_superseded', task: 'lexer', epoch: 1, reason: 'superseded', winner: 'bob' }])
    expect(superseded.append).toEqual([])
    expect(p.mine()).toEqual([])
  })

  it('a loss the next entries take back is never told: a smaller claim whose release follows it', () => {
    const { w, p, run } = setup()
    run(p.claim('parser', [], 0).output, 0)
    p.tick(WINDOW)
    // amy claimed and released on the other side of a partition; her claim arrives first
    p.apply(w.claim('amy', 'parser', 1, {}, 1), 2_000)
    p.apply(w.release('amy', 'parser', 1), 2_100)
    expect(p.tick(2_000 + WINDOW)).toMatchObject({ notices: [], append: [] })
    expect(p.nextWake()).toBeUndefined()
    expect(p.mine()).toEqual([{ task: 'parser', epoch: 1, settled: true }])
    expect(p.board.holder('parser')?.holder).toBe(ME)
  })

  it('a finished task stays watched: its done stops counting when a smaller claim at its epoch arrives, and the agent is told', () => {
    const { w, p, run } = setup()
    run(p.claim('parser', [], 0).output, 0)
    p.tick(WINDOW)
    p.apply(w.done(ME, 'parser', 1), 1_000)
    expect(p.forget('parser').mineChanged).toBe(true)
    expect(p.mine()).toEqual([{ task: 'parser', epoch: 1, settled: true, done: true }])
    expect(p.board.task('parser', 1_000)?.state).toBe('done')
    // the other side of a healed partition claimed it first: amy's claim is the holder rule's, the done does not count
    p.apply(w.claim('amy', 'parser', 1, {}, 1), 5_000)
    expect(p.board.task('parser', 5_000)).toMatchObject({ state: 'claimed', holder: 'amy' })
    const out = p.tick(5_000 + WINDOW)
    expect(out.notices).toEqual([{ type: 'claim_lost', task: 'parser', epoch: 1, reason: 'outbid', winner: 'amy' }])
    expect(out.append).toEqual([]) // the claim stays: it carries the done
    expect(p.mine()).toEqual([])
  })

  it('a claim answered with no one waiting (no_wait) tells its loss as a notice', () => {
    const { w, p, run } = setup()
    run(p.claim('parser', [], 0, { wait: false }).output, 0)
    p.apply(w.claim('amy', 'parser', 1, {}, 1), 10)
    const out = p.tick(WINDOW)
    expect(out.answers).toMatchObject([{ outcome: 'LOST', winner: 'amy' }])
    expect(out.notices).toEqual([{ type: 'claim_lost', task: 'parser', epoch: 1, reason: 'outbid', winner: 'amy' }])
  })

  it('after a restart: a held claim is checked against the board, one still settling waits a whole window from the restart', () => {
    const { w, p } = setup()
    const history = [w.claim(ME, 'parser', 1), w.claim(ME, 'lexer', 1), w.claim('bob', 'parser', 2)]
    const again = new ClaimProtocol({ me: ME, startedAt: 60_000, fixedSettleMs: WINDOW })
    for (const e of [...p.board.tasks(0).map(t => w.task('planner', { id: t.id })), ...history]) again.apply(e, 60_000)
    expect(
      again.restore(
        [
          { task: 'parser', epoch: 1, settled: true },
          { task: 'lexer', epoch: 1, settled: false }
        ],
        60_000
      ).notices
    ).toEqual([])
    expect(again.nextWake()).toBe(60_000 + WINDOW)
    const out = again.tick(60_000 + WINDOW)
    expect(out.notices).toEqual([{ type: 'claim_superseded', task: 'parser', epoch: 1, reason: 'superseded', winner: 'bob' }])
    expect(out.answers).toMatchObject([{ outcome: 'HELD', task: 'lexer', epoch: 1 }])
  })

  it('bad claims throw and change nothing; a task held by a live peer is refused, an expired one is taken over', () => {
    const { w, p } = setup({ leaseMs: 1_000 })
    expect(() => p.claim('nope', [], 0)).toThrow('no task')
    p.apply(w.claim('amy', 'parser', 1), 0)
    p.heard('amy', 100)
    expect(() => p.claim('parser', [], 500)).toThrow(FailedPreconditionError)
    expect(p.mine()).toEqual([])
    const ticket = p.claim('parser', [], 1_200)
    expect(ticket).toMatchObject({ epoch: 2, takeover: { previousHolder: 'amy', expired: true } })
  })

  it('a release ends the watch without a notice; a claim still settling is answered at the end of its window', () => {
    const { w, p, run } = setup()
    run(p.claim('parser', [], 0).output, 0)
    p.tick(WINDOW)
    // the release entry itself ends the watch, quietly; forgetting after it changes nothing
    const released = p.apply(w.release(ME, 'parser', 1), 600)
    expect(released).toMatchObject({ mineChanged: true, notices: [], append: [] })
    expect(p.forget('parser').mineChanged).toBe(false)
    expect(p.mine()).toEqual([])

    run(p.claim('lexer', [], 1_000).output, 1_000)
    p.apply(w.release(ME, 'lexer', 1), 1_100)
    expect(p.forget('lexer').mineChanged).toBe(false)
    expect(p.tick(1_000 + WINDOW).answers).toMatchObject([{ outcome: 'LOST', task: 'lexer', reason: 'released' }])
  })

  it('a retry in the settle window writes nothing and gets the same answer, at the end of the same window', () => {
    const { w, p, run } = setup()
    run(p.claim('parser', [], 0, { wait: false }).output, 0)
    const retry = p.claim('parser', [], 200)
    expect(retry).toMatchObject({ task: 'parser', epoch: 1, output: { append: [], answers: [] } })
    expect(p.tick(WINDOW - 1).answers).toEqual([])
    // a competitor arrives after the retry: the retry is answered LOST, never HELD first
    p.apply(w.claim('amy', 'parser', 1, {}, 1), 300)
    const out = p.tick(WINDOW)
    expect(out.answers).toMatchObject([{ outcome: 'LOST', task: 'parser', epoch: 1, winner: 'amy', settleMs: WINDOW }])
    expect(out.notices).toEqual([]) // the retry waits for the answer: it is not a notice
    // bad input on a retry is still bad input
    run(p.claim('lexer', [], 1_000).output, 1_000)
    expect(() => p.claim('lexer', ['src/[oops'], 1_100)).toThrow('glob')
  })

  it('once settled, a retry is answered HELD at once; a claim held without a record of its window waits one', () => {
    const { w, p, run } = setup()
    run(p.claim('parser', [], 0).output, 0)
    p.tick(WINDOW)
    expect(p.claim('parser', [], WINDOW + 1).output.answers).toMatchObject([{ outcome: 'HELD', task: 'parser', epoch: 1, settleMs: 0 }])

    // this daemon's claim on lexer is on the board, but it has no record of it (its state was lost)
    p.apply(w.claim(ME, 'lexer', 1), 1_000)
    const ticket = p.claim('lexer', [], 2_000)
    expect(ticket.output).toMatchObject({ append: [], answers: [] })
    expect(p.nextWake()).toBe(2_000 + WINDOW)
    expect(p.tick(2_000 + WINDOW).answers).toMatchObject([{ outcome: 'HELD', task: 'lexer', epoch: 1 }])
  })
})

describe('the claim protocol after a stall of its own daemon (a SIGSTOP, a frozen VM)', () => {
  // Pinned from the real-process campaign (seed 402): host3 claimed t3 at
  // epoch 2, was stopped for 14.8 s in its settle window, and, resumed while
  // still cut off, was told HELD 43 ms later, although host1 had taken t3 over
  // at epoch 3 meanwhile (its lease had run out while it was stopped).
  it('a window the daemon slept through does not count: no answer until it has caught up with a peer, then the whole window again', () => {
    const { w, p, run } = setup({ leaseMs: 3_000 })
    p.heard('host1', 6_000)
    run(p.claim('parser', [], 6_398).output, 6_398)
    // stopped at 7_111, resumed at 21_933: the settle timer is long overdue
    p.stalled(21_933 - 7_111, 21_933)
    expect(p.isRejoining()).toBe(true)
    expect(p.tick(21_933).answers).toEqual([])
    // host1's lease moved on by the stall: still live, so it waits for the exchange (or the lease)
    expect(p.nextWake(21_933)).toBeGreaterThanOrEqual(21_933 + WINDOW)
    expect(p.tick(22_500).answers).toEqual([])
    // the exchange with host1 brings its takeover at epoch 2
    p.apply(w.claim('host1', 'parser', 2, {}, 5), 23_000)
    p.rejoined(23_000)
    expect(p.isRejoining()).toBe(false)
    expect(p.tick(23_000 + WINDOW - 1).answers).toEqual([])
    expect(p.tick(23_000 + WINDOW).answers).toMatchObject([
      { outcome: 'LOST', task: 'parser', epoch: 1, winner: 'host1', reason: 'superseded' }
    ])
  })

  it('without the stall taken in, the same history is answered HELD from the stale view', () => {
    const { p, run } = setup({ leaseMs: 3_000 })
    p.heard('host1', 6_000)
    run(p.claim('parser', [], 6_398).output, 6_398)
    expect(p.tick(21_933).answers).toMatchObject([{ outcome: 'HELD', task: 'parser', epoch: 1 }])
  })

  it("no lease runs out on a silence the daemon could not hear: a live holder's task is not taken over on waking", () => {
    const { w, p } = setup({ leaseMs: 3_000 })
    p.apply(w.claim('amy', 'parser', 1), 2_000)
    p.heard('amy', 2_700)
    p.stalled(13_600, 16_300)
    expect(() => p.claim('parser', [], 16_400)).toThrow(FailedPreconditionError)
    // amy stays silent for a whole lease after the stall: expired, taken over at epoch 2
    expect(p.claim('parser', [], 16_300 + 3_001)).toMatchObject({ epoch: 2, takeover: { previousHolder: 'amy', expired: true } })
  })

  it('with nobody left to catch up with (every lease ran out since), claims are answered a window later', () => {
    const { p, run } = setup({ leaseMs: 3_000 })
    p.heard('host1', 6_000)
    run(p.claim('parser', [], 6_398).output, 6_398)
    p.stalled(14_822, 21_933)
    // host1's lease, moved on by the stall, keeps what it had left when the stall began (1.9 s of 3 s)
    const wake = p.nextWake(21_933) ?? 0
    expect(wake).toBe(6_000 + 14_822 + 3_000 + 1)
    expect(p.tick(wake).answers).toEqual([])
    expect(p.isRejoining()).toBe(false)
    expect(p.tick(wake + WINDOW).answers).toMatchObject([{ outcome: 'HELD', task: 'parser', epoch: 1 }])
  })

  it('a stall shorter than a lease restarts the windows it overlapped, with no catch-up to wait for', () => {
    const { p, run } = setup({ leaseMs: 3_000 })
    p.heard('host1', 0)
    run(p.claim('parser', [], 0).output, 0)
    p.stalled(1_500, 1_600)
    expect(p.isRejoining()).toBe(false)
    expect(p.tick(WINDOW).answers).toEqual([])
    expect(p.tick(1_600 + WINDOW).answers).toMatchObject([{ outcome: 'HELD', task: 'parser', epoch: 1 }])
  })

  it('a loss is not told from the stale view either: it waits for the catch-up and a window', () => {
    const { w, p, run } = setup({ leaseMs: 3_000 })
    p.heard('amy', 0)
    run(p.claim('parser', [], 0).output, 0)
    p.tick(WINDOW)
    p.apply(w.claim('amy', 'parser', 1, {}, 1), 1_000)
    p.stalled(5_000, 6_000)
    expect(p.tick(6_000).notices).toEqual([])
    p.rejoined(6_100)
    expect(p.tick(6_100 + WINDOW - 1).notices).toEqual([])
    expect(p.tick(6_100 + WINDOW).notices).toMatchObject([{ type: 'claim_lost', task: 'parser', reason: 'outbid', winner: 'amy' }])
  })
})
