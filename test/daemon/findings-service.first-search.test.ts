// The first search after a catch-up or a restart has every finding the log
// holds: a joiner indexes findings as they are stored, so when its log is
// whole its index is too; a daemon restarted without its findings checkpoint
// takes in what its background indexing has not reached before it answers;
// an agentd whose first catch-up's findings were indexed in a worker thread
// answers, from the index it takes back, what the holder answers.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Daemon } from '../../src/daemon/daemon.js'
import { FINDINGS_CHECKPOINT_FILE, removeCheckpoint } from '../../src/store/checkpoint-file.js'
import { AgentdProcesses, InProcessDaemons, memoryAddr, seedLog, TempDirs, type AgentdProcess } from '../scenarios/sync/helpers.js'

const FINDINGS = 5000
const QUERIES = ['lease vector', 'gossip', 'decoder timeout', 'cursors digest', 'quorum']

/** What searches give: hits with scores, and how many findings a listing counts. */
function answers(d: Daemon): unknown {
  const index = d.logService.findings
  return {
    searches: QUERIES.map(query => index.search({ query, limit: 50 }).map(h => [h.id, h.score])),
    listed: index.page({ limit: 1 }).total
  }
}

describe('the first search', () => {
  const daemons = new InProcessDaemons()
  const dirs = new TempDirs()
  afterAll(async () => {
    await daemons.cleanup()
    await dirs.removeAll()
  }, 60_000)

  it('after a catch-up, finds every finding the joiner now holds, with nothing left to index', async () => {
    const quiet = { syncIntervalMs: 3_600_000 }
    const holder = await daemons.start(
      { name: 'holder', ...quiet },
      async dir => await seedLog(dir, { entries: FINDINGS, authors: 4, seed: 3 })
    )
    const joiner = await daemons.start({ name: 'joiner', ...quiet })
    await joiner.node.peerStore.merge(holder.node.peerId, { multiaddrs: holder.node.getMultiaddrs() })
    expect(await joiner.logService.syncWith(holder.node.peerId)).toBe(true)
    expect(joiner.logService.state.size).toBe(FINDINGS)
    // indexed as they were stored: nothing waits for a background pass
    expect(joiner.logService.findingsBehind).toBe(0)
    const got = answers(joiner)
    expect(got).toEqual(answers(holder))
    expect((got as { listed: number }).listed).toBe(FINDINGS)
  }, 120_000)

  it('right after a restart without the findings checkpoint, finds what a full index finds', async () => {
    const dir = await dirs.make('agency-first-search-')
    await seedLog(dir, { entries: FINDINGS, authors: 4, seed: 4 })
    const start = async (): Promise<Daemon> => {
      const d = new Daemon({
        dataDir: dir,
        listen: [memoryAddr('first')],
        grpc: null,
        metrics: null,
        processMetrics: false,
        heartbeatMs: 300,
        liveTimeoutMs: 3000,
        ownHeadWaitMs: 1
      })
      await d.start()
      return d
    }
    let d = await start()
    const full = answers(d)
    expect((full as { listed: number }).listed).toBe(FINDINGS)
    await d.stop()

    await removeCheckpoint(dir, FINDINGS_CHECKPOINT_FILE)
    d = await start()
    try {
      // whatever the background indexing has reached, the search takes in the rest first
      expect(answers(d)).toEqual(full)
      expect(d.logService.findingsBehind).toBe(0)
    } finally {
      await d.stop()
    }
  }, 120_000)

  it('right after an agentd restarts from its findings checkpoint (read in a worker thread), a search over gRPC finds what it found before', async () => {
    const procs = new AgentdProcesses()
    try {
      const dir = await procs.dirs.make('agency-first-search-proc-')
      await seedLog(dir, { entries: FINDINGS, authors: 4, seed: 5 })
      const a = await procs.start({ name: 'restarted', dataDir: dir })
      const search = async (p: AgentdProcess): Promise<unknown> =>
        await Promise.all(
          [...QUERIES, `${FINDINGS - 1}`].map(async query =>
            (
              await p.agency.call(c => c.searchFindings, {
                query,
                kind: '',
                pathPrefix: '',
                tag: '',
                author: '',
                since: 0,
                until: 0,
                limit: 50
              })
            ).hits.map(h => [h.entry?.id, h.score])
          )
        )
      const before = await search(a)
      await a.stop()
      await a.start()
      // asked at once: the search waits for the checkpoint the worker reads
      expect(await search(a)).toEqual(before)
      expect((before as unknown[][]).at(-1)?.length).toBeGreaterThan(0)
    } finally {
      await procs.cleanup()
    }
  }, 120_000)

  it('after an agentd catches up with its findings indexed in a worker thread, a search over gRPC finds what the holder finds, superseded findings included', async () => {
    const procs = new AgentdProcesses()
    try {
      const dir = await procs.dirs.make('agency-first-search-worker-')
      await seedLog(dir, { entries: FINDINGS, authors: 4, seed: 6 })
      const holder = await procs.start({ name: 'holder', dataDir: dir })
      // two findings that supersede seeded ones (the only hits of their queries)
      const only = async (query: string): Promise<string> => {
        const hits = (
          await holder.agency.call(c => c.searchFindings, {
            query,
            kind: '',
            pathPrefix: '',
            tag: '',
            author: '',
            since: 0,
            until: 0,
            limit: 2
          })
        ).hits
        expect(hits.length).toBe(1)
        return hits[0].entry?.id ?? ''
      }
      const first = [await only('17'), await only('4321')]
      const record = async (text: string, supersedes: string): Promise<void> => {
        await holder.agency.call(c => c.recordFinding, { kind: 'note', text, paths: ['src/x.ts'], tags: ['lease'], refs: [], supersedes })
      }
      await record('a newer word on lease seventeen', first[0])
      await record('another newer word on lease seventeen', first[1])
      const search = async (p: AgentdProcess): Promise<unknown> =>
        await Promise.all(
          [...QUERIES, '17', '4321', 'seventeen', `${FINDINGS - 1}`].map(async query =>
            (
              await p.agency.call(c => c.searchFindings, {
                query,
                kind: '',
                pathPrefix: '',
                tag: '',
                author: '',
                since: 0,
                until: 0,
                limit: 50
              })
            ).hits.map(h => [h.entry?.id, h.score, h.superseded])
          )
        )
      const expected = await search(holder)
      expect(JSON.stringify(expected)).toContain('true')
      // in a directory of its own that the cleanup removes (beside `dir`, it was left in /tmp)
      const logFile = join(await procs.dirs.make('agency-first-search-log-'), 'joiner.log')
      const joiner = await procs.start({
        name: 'joiner',
        peers: holder.addrs,
        logFile,
        env: { AGENCY_LOG_LEVEL: 'info', AGENCY_FINDINGS_WORKER: 'on' }
      })
      const target = (await holder.logInfo()).vectorDigest
      for (let i = 0; i < 600 && (await joiner.logInfo()).vectorDigest !== target; i++)
        await new Promise(resolve => setTimeout(resolve, 100))
      expect((await joiner.logInfo()).vectorDigest).toBe(target)
      // asked at once: the search waits for the index the worker built
      expect(await search(joiner)).toEqual(expected)
      const log = await readFile(logFile, 'utf8')
      expect(log).toContain('findings indexed in a worker during the catch-up')
      expect(log).toContain('findings index taken back from its worker')
    } finally {
      await procs.cleanup()
    }
  }, 120_000)
})
