// A partition over the memory transport: two halves of a six-daemon swarm,
// which cannot reach each other, write independently; once one connection
// heals the split, every daemon converges on the same log: the same entries,
// the same version vector, the same total order and the same search results.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Daemon } from '../../../src/daemon/daemon.js'
import { addrsOf, InProcessDaemons } from './helpers.js'
import { waitFor } from '../../helpers/wait-for.js'

const WRITES_PER_DAEMON = 3

/** The ids of every entry a daemon holds, in the log's total order. */
function orderedIds(d: Daemon): string[] {
  return d.logService.state.ordered().map(e => e.id)
}

function digestOf(d: Daemon): string {
  return Buffer.from(d.logService.digest()).toString('hex')
}

function connected(a: Daemon, b: Daemon): boolean {
  return a.node.getConnections(b.node.peerId).length > 0
}

async function startHalf(daemons: InProcessDaemons, label: string): Promise<Daemon[]> {
  const first = await daemons.start({ name: `${label}1` })
  const rest = await Promise.all([2, 3].map(async i => await daemons.start({ name: `${label}${i}`, peers: addrsOf(first) })))
  return [first, ...rest]
}

/** Every daemon of `half` holds exactly the entries in `ids`. */
function holdsExactly(half: Daemon[], ids: Set<string>): boolean {
  return half.every(d => d.logService.state.size === ids.size && [...ids].every(id => d.logService.state.get(id) != null))
}

describe('a partitioned swarm heals', () => {
  const daemons = new InProcessDaemons()
  let left: Daemon[] = []
  let right: Daemon[] = []
  const written = { left: new Set<string>(), right: new Set<string>() }

  beforeAll(async () => {
    // Each half bootstraps only within itself, so neither learns an address of the other.
    left = await startHalf(daemons, 'left')
    right = await startHalf(daemons, 'right')
  }, 60_000)

  afterAll(async () => {
    await daemons.cleanup()
  }, 60_000)

  it('lets each half write and converge on its own while split', async () => {
    for (const [side, half] of [
      ['left', left],
      ['right', right]
    ] as const) {
      for (const d of half) {
        for (let i = 0; i < WRITES_PER_DAEMON; i++) {
          // the same words on both sides, so that search results must merge
          const stored = await d.logService.append('finding', {
            kind: 'failure',
            text: `tried the retry loop, attempt ${i} by ${d.name}`,
            tags: ['partition']
          })
          written[side].add(stored.id)
        }
      }
    }
    await waitFor(() => holdsExactly(left, written.left) && holdsExactly(right, written.right), {
      what: 'each half to hold its own entries'
    })
    for (const a of left) for (const b of right) expect(connected(a, b)).toBe(false)
    expect(digestOf(left[0])).not.toBe(digestOf(right[0]))
  }, 60_000)

  it('converges both halves on one log after a single connection heals the split', async () => {
    await left[1].node.dial(right[2].node.getMultiaddrs())
    const all = new Set([...written.left, ...written.right])
    expect(all.size).toBe(2 * 3 * WRITES_PER_DAEMON)
    const everyone = [...left, ...right]
    await waitFor(() => holdsExactly(everyone, all), { what: 'all six daemons to hold every entry', timeoutMs: 60_000 })

    const digest = digestOf(everyone[0])
    const order = orderedIds(everyone[0])
    const query = { query: 'retry loop attempt', limit: 100 }
    const hits = everyone[0].logService.findings.search(query).map(h => [h.id, h.score])
    expect(order).toHaveLength(all.size)
    expect(hits).toHaveLength(all.size)
    for (const d of everyone) {
      expect(digestOf(d)).toBe(digest)
      expect(orderedIds(d)).toEqual(order)
      expect(d.logService.findings.search(query).map(h => [h.id, h.score])).toEqual(hits)
      expect(d.logService.state.pendingCount).toBe(0)
      expect(d.logService.state.forks).toHaveLength(0)
    }
  }, 90_000)

  it('keeps replicating across the healed split', async () => {
    const late = await right[0].logService.append('finding', { kind: 'decision', text: 'after the heal', tags: ['partition'] })
    await waitFor(() => left.every(d => d.logService.state.get(late.id) != null), {
      what: 'an entry written after the heal to reach the other half',
      timeoutMs: 30_000
    })
    const digest = digestOf(right[0])
    await waitFor(() => [...left, ...right].every(d => digestOf(d) === digest), {
      what: 'all six daemons to agree again',
      timeoutMs: 30_000
    })
  }, 60_000)
})
