// Presence in a swarm that outgrows its heartbeat budget: every daemon beats
// less often, says so in each heartbeat, and its peers wait that much longer
// before they call it gone. Five peers and a budget of 2 heartbeats a second
// stand in for a thousand peers and the default of 16. A daemon that holds
// nothing and has nothing new to say beats less often still, and at the
// swarm's interval again from its first claim on (that beat brought forward to
// within the interval); a change of its status goes out at once,
// a report of a change that changed nothing does not.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { InProcessDaemons, memoryAddr } from '../../helpers/in-process-daemons.js'
import { waitFor } from '../../helpers/wait-for.js'
import type { Daemon } from '../../../src/daemon/daemon.js'
import type { Presence } from '../../../src/gen/agency/v1/wire.js'

const COUNT = 6
const timing = { heartbeatMs: 200, liveTimeoutMs: 1500, heartbeatMaxRate: 2 }

describe('heartbeats in a swarm bigger than the heartbeat budget', () => {
  const fleet = new InProcessDaemons()
  let nodes: Daemon[] = []
  const received = new Map<Daemon, Presence[]>()
  /** when each heartbeat reached its receiver (performance.now()), in the order of `received` */
  const arrivals = new Map<Daemon, number[]>()
  const left: string[] = []

  beforeAll(async () => {
    const addrs = Array.from({ length: COUNT }, () => memoryAddr('beat'))
    nodes = await Promise.all(
      addrs.map(
        async (listen, i) => await fleet.start({ name: `beat-${i}`, listen: [listen], peers: i === 0 ? [] : [addrs[0]], ...timing })
      )
    )
    for (const d of nodes) {
      const seen: Presence[] = []
      const at: number[] = []
      received.set(d, seen)
      arrivals.set(d, at)
      const receive = d.presence.receive.bind(d.presence)
      d.presence.receive = (p, from) => {
        seen.push(p)
        at.push(performance.now())
        return receive(p, from)
      }
      d.events.subscribe(e => {
        if (e.type === 'peer_left') left.push(`${d.name} lost ${e.peerId}`)
      })
    }
    await waitFor(() => nodes.every(n => n.peers(false).length === COUNT - 1), {
      timeoutMs: 60_000,
      what: 'every node to see every other live'
    })
  }, 90_000)

  afterAll(async () => {
    await fleet.stopAll()
  }, 60_000)

  it('beats at the interval that keeps each daemon within the budget', async () => {
    // 5 live peers at 2 a second: one heartbeat every 2.5 s.
    for (const d of nodes) expect(d.presence.intervalMs()).toBe(2500)
    // The interval rides in each heartbeat, for the receivers' timeouts
    // (doubled per quiet beat while a daemon holds nothing: see below).
    // A daemon quiet since the fleet came up beats at up to 8 x 2.5 s = 20 s:
    // the wait covers two of those beats.
    await waitFor(() => nodes.every(d => received.get(d)?.some(p => p.intervalMs >= 2500 && [1, 2, 4, 8].includes(p.intervalMs / 2500))), {
      timeoutMs: 45_000,
      what: 'heartbeats announcing 2.5 s or a quiet multiple of it'
    })
  }, 60_000)

  it('keeps every peer live though its heartbeats are far beyond the base timeout apart', async () => {
    const before = nodes.map(d => received.get(d)?.length ?? 0)
    // Counted from here: while the fleet starts, heartbeats are at the 200 ms
    // base with its 1.5 s timeout, which a loaded machine's event loop can miss.
    const leftBefore = left.length
    const started = performance.now()
    // A peer timed out at the base would be marked gone by the first expiry
    // sweep (every quarter of the timeout) more than the timeout after its
    // last heartbeat: wait until every node has heard every peer again after
    // a silence longer than that.
    const silenceMs = timing.liveTimeoutMs * 1.25
    const heardAfterSilence = (d: Daemon): boolean => {
      const beats = received.get(d) ?? []
      const at = arrivals.get(d) ?? []
      const last = new Map<string, number>()
      const done = new Set<string>()
      const from = before[nodes.indexOf(d)]
      for (let i = 0; i < beats.length; i++) {
        const previous = last.get(beats[i].peerId)
        if (i >= from && previous !== undefined && at[i] - previous > silenceMs) done.add(beats[i].peerId)
        last.set(beats[i].peerId, at[i])
      }
      return done.size === COUNT - 1
    }
    // An idle peer beats up to every 8 x 2.5 s = 20 s (see below).
    await waitFor(() => nodes.every(heardAfterSilence), {
      timeoutMs: 45_000,
      what: 'every node to hear every peer after a silence longer than the base timeout'
    })
    const elapsedMs = performance.now() - started
    expect(left.slice(leftBefore)).toEqual([])
    for (const d of nodes) expect(d.peers(false)).toHaveLength(COUNT - 1)
    // At the base interval each node would have received 5 peers' beats every
    // 200 ms; within the budget it is about 5 every 2.5 s (and a few extra
    // beats when a status changes).
    const atBase = ((COUNT - 1) * elapsedMs) / timing.heartbeatMs
    nodes.forEach((d, i) => {
      expect((received.get(d)?.length ?? 0) - before[i]).toBeLessThan(atBase / 2)
    })
  }, 60_000)

  it("beats less often while a daemon holds nothing, and at the swarm's interval once it claims", async () => {
    const [planner, claimer] = nodes
    await waitFor(() => nodes.every(d => d.presence.announcedIntervalMs > d.presence.intervalMs()), {
      timeoutMs: 30_000,
      what: "every idle daemon to announce a longer interval than the swarm's"
    })
    await planner.boardService.addTask({ id: 'quiet-1', title: 'quiet', description: '', deps: [], scope: ['src/quiet.ts'], priority: 0 })
    await waitFor(
      () => {
        try {
          return claimer.boardService.task('quiet-1')
        } catch {
          return undefined
        }
      },
      { what: 'the task at the claimer' }
    )
    const before = received.get(planner)?.length ?? 0
    await claimer.boardService.claim('quiet-1', [], true)
    // A holder's heartbeats carry its leases: its next beat, brought forward to within the swarm's interval, is at that interval.
    await waitFor(
      () =>
        received
          .get(planner)
          ?.slice(before)
          .find(p => p.peerId === claimer.peerId && p.claims.some(c => c.task === 'quiet-1') && p.intervalMs === 2500),
      { timeoutMs: 10_000, what: "the holder's heartbeat with its lease at 2.5 s" }
    )
    expect(claimer.presence.announcedIntervalMs).toBe(claimer.presence.intervalMs())
  }, 60_000)

  it('sends a heartbeat at once when its claims or status change, and none when they did not', async () => {
    const d = nodes[2]
    const sent = async (): Promise<number> => (await d.metrics.gossipOut.get()).values.find(v => v.labels.kind === 'presence')?.value ?? 0
    d.presence.status = 'reading the parser'
    await d.presence.beatIfChanged()
    const afterChange = await sent()
    expect(afterChange).toBeGreaterThan(0)
    // Nothing new: no heartbeat (the call sends nothing, so no scheduled one can slip in between either).
    await d.presence.beatIfChanged()
    expect(await sent()).toBe(afterChange)
    d.presence.status = 'writing the parser'
    await d.presence.beatIfChanged()
    expect(await sent()).toBeGreaterThan(afterChange)
    await waitFor(() => received.get(nodes[0])?.some(p => p.peerId === d.peerId && p.status === 'writing the parser'), {
      timeoutMs: 10_000,
      what: 'the new status at a peer'
    })
  }, 30_000)
})
