// How long an agent held at the budget keeps its claims: the count starts at
// the first held start, a free start ends it, and at the stated time the held
// tasks are given back once (only if the budget still holds the agent).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { BudgetLeaseKeeper } from '../../src/daemon/budget-lease-keeper.js'

const KEEP_MS = 60_000

function keeper(o: { keepMs?: number; stillHeld?: () => boolean } = {}): { k: BudgetLeaseKeeper; notes: string[] } {
  const notes: string[] = []
  const k = new BudgetLeaseKeeper({
    keepMs: o.keepMs ?? KEEP_MS,
    stillHeld: o.stillHeld ?? (() => true),
    releaseHeld: async note => {
      notes.push(note)
    },
    onError: err => {
      throw err
    }
  })
  return { k, notes }
}

describe('the claims of an agent held at the budget', () => {
  beforeEach(() => {
    vi.useFakeTimers()
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('are kept for the stated time from the first held start, then given back with a note saying why', async () => {
    const { k, notes } = keeper()
    k.observe(true)
    await vi.advanceTimersByTimeAsync(KEEP_MS / 2)
    // asked again while held: the count goes on from the first
    k.observe(true)
    await vi.advanceTimersByTimeAsync(KEEP_MS / 2 - 1)
    expect(notes).toEqual([])
    await vi.advanceTimersByTimeAsync(1)
    expect(notes).toEqual([
      "the budget held this agent longer than the 1 min its tasks are kept for; the work so far is on the task's wip ref"
    ])
  })

  it('are kept when the cap is raised before the time, and the count starts again at the next hold', async () => {
    const { k, notes } = keeper()
    k.observe(true)
    await vi.advanceTimersByTimeAsync(KEEP_MS - 1)
    k.observe(false)
    await vi.advanceTimersByTimeAsync(KEEP_MS * 2)
    expect(notes).toEqual([])
    k.observe(true)
    await vi.advanceTimersByTimeAsync(KEEP_MS - 1)
    expect(notes).toEqual([])
    await vi.advanceTimersByTimeAsync(1)
    expect(notes).toHaveLength(1)
  })

  it('are kept when the budget no longer holds the agent at the time (a run is going, or the cap rose unseen)', async () => {
    let held = true
    const { k, notes } = keeper({ stillHeld: () => held })
    k.observe(true)
    held = false
    await vi.advanceTimersByTimeAsync(KEEP_MS)
    expect(notes).toEqual([])
  })

  it('with a time of 0, are kept for as long as the budget holds', async () => {
    const { k, notes } = keeper({ keepMs: 0 })
    k.observe(true)
    await vi.advanceTimersByTimeAsync(KEEP_MS * 100)
    expect(notes).toEqual([])
  })

  it('are not given back after the keeper stops (the daemon stops: a restart carries on)', async () => {
    const { k, notes } = keeper()
    k.observe(true)
    k.stop()
    await vi.advanceTimersByTimeAsync(KEEP_MS * 2)
    expect(notes).toEqual([])
  })
})
