// A budget across a partition, on real daemons (in process, over the memory
// transport): four agents, each a `cmd:` program that states a known spend per
// run in agency-usage lines, so every run writes a real usage entry. The swarm
// is whole when the cap is set, then cut in two halves that spend apart: each
// agent keeps to its share of what was left when it last saw the whole swarm,
// so every harness is held by its share, and the swarm's total passes the cap
// by no more than the bound docs/spend.md states (2 N R). Once the halves are
// joined again, every daemon holds the same usage entries and reports the
// same total.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { peerIdFromString } from '@libp2p/peer-id'
import type { Daemon } from '../../../src/daemon/daemon.js'
import { allTokens } from '../../../src/core/spend/index.js'
import { MemoryCluster, connected, keepLinked, link, livePeerIds } from '../board/helpers.js'
import { waitFor } from '../../helpers/wait-for.js'

const N = 4
/** What each run spends: 150 tokens in, 50 out. */
const RUN = { model: 'scripted', input_tokens: 150, output_tokens: 50 }
const R = RUN.input_tokens + RUN.output_tokens
/** What is left to spend when the swarm is cut: ten runs. */
const REMAINDER = 10 * R
const HARNESS = `cmd:echo 'agency-usage ${JSON.stringify(RUN)}'; sleep 0.2`

const spent = (d: Daemon): number => allTokens(d.spend.fold.book.totals())
const entries = (d: Daemon): number => d.spend.fold.book.entries
const state = (d: Daemon): { state: string; note: string } => {
  const s = d.harness?.info()
  return { state: s?.state ?? '', note: s?.note ?? '' }
}

describe('a budget across a partition', () => {
  const cluster = new MemoryCluster()
  const all: Daemon[] = []
  let left: Daemon[] = []
  let right: Daemon[] = []
  const links: Array<[Daemon, Daemon]> = []
  let cap = 0

  beforeAll(async () => {
    // Leases of a few seconds: a busy event loop does not lapse a live peer's, and the halves soon see each other gone.
    for (let i = 0; i < N; i++) all.push(await cluster.start({ name: `spender-${i + 1}`, liveTimeoutMs: 4000, harness: HARNESS }))
    for (const d of all) d.dialer.stop()
    left = all.slice(0, 2)
    right = all.slice(2)
    links.push([left[1], left[0]], [right[1], right[0]])
    await keepLinked(links)
    await link(right[0], left[0])
    await waitFor(() => all.every(d => livePeerIds(d).length === N - 1), { what: 'all four live on each' })
  }, 60_000)

  afterAll(async () => {
    await cluster.cleanup()
  }, 60_000)

  it('sets a cap the whole swarm hears of, while whole, with ten runs left to spend', async () => {
    // the harnesses start here (agentd's serve() starts them once the API is up); the cmd: program calls no API
    for (const d of all) await d.harness?.start('127.0.0.1:1')
    await waitFor(() => all.every(d => entries(d) >= N), { what: 'a run of every agent recorded everywhere', timeoutMs: 60_000 })
    cap = spent(all[0]) + REMAINDER
    await all[0].spend.setBudget({ tokens: cap })
    await waitFor(() => all.every(d => d.spend.fold.budgets.current()?.tokens === cap), { what: 'every daemon to hold the cap' })
  }, 90_000)

  it('cuts the swarm in two; each agent keeps to its share, and every harness is held', async () => {
    await left[0].node.hangUp(peerIdFromString(right[0].peerId))
    await waitFor(
      async () => {
        await keepLinked(links)
        return all.every(d => livePeerIds(d).length === 1) && left.every(l => right.every(r => !connected(l, r)))
      },
      { what: 'each half to see only itself live', timeoutMs: 60_000 }
    )
    await waitFor(
      async () => {
        await keepLinked(links)
        return all.every(d => state(d).state === 'held')
      },
      { what: 'every harness to be held by the budget', timeoutMs: 180_000, intervalMs: 200 }
    )
    // held by its share: the halves cannot both spend the remainder
    for (const d of all) expect(state(d).note).toMatch(/^budget reached: .*this agent's share while the swarm is split/)
  }, 240_000)

  it('agrees on the total after the halves are joined, passed the cap by no more than the bound', async () => {
    links.push([right[1], left[1]])
    await waitFor(
      async () => {
        await keepLinked(links)
        const n = entries(all[0])
        // the same count is not yet the same entries (each half may hold one the other lacks): the sums must agree too
        const sums = JSON.stringify(all[0].spend.fold.book.totals())
        return all.every(
          d =>
            livePeerIds(d).length === N - 1 &&
            entries(d) === n &&
            d.spend.fold.book.totals().runs === n &&
            JSON.stringify(d.spend.fold.book.totals()) === sums
        )
      },
      { what: 'every daemon to hold the same usage entries', timeoutMs: 60_000 }
    )
    const total = all[0].spend.fold.book.totals()
    for (const d of all) expect(d.spend.fold.book.totals()).toEqual(total)
    // each run stated RUN exactly: the total is the runs times R, per agent as on every daemon
    expect(allTokens(total)).toBe(total.runs * R)
    for (const d of all) expect(allTokens(all[0].spend.fold.book.agent(d.peerId))).toBe(allTokens(d.spend.fold.book.agent(d.peerId)))
    const overshoot = allTokens(total) - cap
    expect(overshoot).toBeLessThanOrEqual(2 * N * R)
    console.log(`budget partition: cap ${cap}, total ${allTokens(total)}, overshoot ${overshoot} tokens (bound 2 N R = ${2 * N * R})`)
  }, 90_000)
})
