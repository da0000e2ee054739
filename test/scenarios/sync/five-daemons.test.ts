// Five real agentd processes on loopback share one record: a finding recorded
// on any of them is searchable on all; a sixth, started later on an empty data
// dir, catches up to the whole log (over 10,000 entries); a restarted daemon
// has its whole log back from disk. The five start as a swarm that has been
// running a while: each data dir holds the same 10,000 signed entries.
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AgentdProcesses, logIdentity, seedLog, type AgentdProcess, type SeededLog } from './helpers.js'
import { waitFor } from '../../helpers/wait-for.js'

const SEEDED_ENTRIES = 10_000
const SEEDED_AUTHORS = 20

/** A word no seeded finding contains, so that a search for it finds one finding. */
function marker(): string {
  return `marker${randomBytes(6).toString('hex')}`
}

async function searchIds(d: AgentdProcess, query: string): Promise<string[]> {
  const reply = await d.agency.call(c => c.searchFindings, {
    query,
    kind: '',
    pathPrefix: '',
    tag: '',
    author: '',
    since: 0,
    until: 0,
    limit: 10
  })
  return reply.hits.map(h => h.entry?.id ?? '')
}

describe('five agentd processes and a late joiner', () => {
  const procs = new AgentdProcesses()
  let seeded: SeededLog
  let five: AgentdProcess[] = []
  const recorded: Array<{ marker: string; id: string; author: string }> = []

  beforeAll(async () => {
    const dirs = await Promise.all([1, 2, 3, 4, 5].map(async () => await procs.dirs.make()))
    seeded = await seedLog(dirs, { entries: SEEDED_ENTRIES, authors: SEEDED_AUTHORS })
    const first = await procs.start({ name: 'd1', dataDir: dirs[0] })
    const rest = await Promise.all(
      [2, 3, 4, 5].map(async i => await procs.start({ name: `d${i}`, dataDir: dirs[i - 1], peers: first.addrs }))
    )
    five = [first, ...rest]
  }, 120_000)

  afterAll(async () => {
    await procs.cleanup()
  }, 60_000)

  it('starts each daemon with the seeded log restored', async () => {
    for (const d of five) {
      const info = await d.logInfo()
      expect(info.entries).toBe(seeded.entries)
      expect(info.vectorDigest).toBe(seeded.vectorDigest)
    }
  })

  it('makes a finding recorded on each daemon searchable on all five', async () => {
    for (const d of five) {
      const m = marker()
      const reply = await d.agency.call(c => c.recordFinding, {
        kind: 'failure',
        text: `tried ${m} and it failed`,
        paths: ['src/x.ts'],
        tags: ['record-test'],
        refs: [],
        supersedes: ''
      })
      expect(reply.entry?.author).toBe(d.peerId)
      recorded.push({ marker: m, id: reply.entry?.id ?? '', author: d.peerId })
    }
    for (const d of five) {
      for (const r of recorded) {
        const ids = await waitFor(
          async () => {
            const found = await searchIds(d, r.marker)
            return found.length > 0 && found
          },
          { what: `${r.marker} searchable on ${d.name}`, timeoutMs: 60_000, intervalMs: 200 }
        )
        expect(ids).toEqual([r.id])
      }
    }
  }, 120_000)

  it('converges all five on one log', async () => {
    const target = logIdentity(await five[0].logInfo())
    expect(target.entries).toBe(SEEDED_ENTRIES + recorded.length)
    for (const d of five.slice(1)) {
      await waitFor(
        async () => {
          const mine = logIdentity(await d.logInfo())
          return mine.vectorDigest === target.vectorDigest && mine
        },
        { what: `${d.name} to hold the same log as d1`, timeoutMs: 60_000, intervalMs: 200 }
      )
      expect(logIdentity(await d.logInfo())).toEqual(target)
    }
  }, 120_000)

  let sixth: AgentdProcess
  let full: ReturnType<typeof logIdentity>

  it('brings a sixth daemon with an empty data dir up to the whole log', async () => {
    full = logIdentity(await five[0].logInfo())
    expect(full.entries).toBeGreaterThanOrEqual(10_000)
    // bootstrapped to one peer that is not the one the log was seeded on
    sixth = await procs.start({ name: 'd6', peers: five[2].addrs })
    await waitFor(
      async () => {
        const mine = logIdentity(await sixth.logInfo())
        return mine.vectorDigest === full.vectorDigest && mine
      },
      { what: 'the sixth daemon to hold the whole log', timeoutMs: 90_000, intervalMs: 250 }
    )
    const info = await sixth.logInfo()
    expect(logIdentity(info)).toEqual(full)
    expect(info.pending).toBe(0)
    expect(info.forks).toBe(0)
    // and its index was built from what it synced
    for (const r of recorded) expect(await searchIds(sixth, r.marker)).toEqual([r.id])
  }, 120_000)

  it('keeps everything across a restart', async () => {
    await sixth.stop('SIGTERM')
    expect(sixth.running).toBe(false)
    // Restarted with no bootstrap peers, on a new port the others do not know:
    // whatever it holds right after start came from its own disk.
    sixth.options.peers = []
    await sixth.start()
    const info = await sixth.logInfo()
    expect(logIdentity(info)).toEqual(full)
    for (const r of recorded) expect(await searchIds(sixth, r.marker)).toEqual([r.id])
    const entry = await sixth.agency.call(c => c.getEntry, { id: recorded[0].id })
    expect(entry.entry?.author).toBe(recorded[0].author)
  }, 60_000)
})
