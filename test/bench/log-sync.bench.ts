// Benchmark: a late joiner syncing the shared record. Not a vitest test (the
// name does not end in .test.ts); run it with
//
//   npm run build && npm run bench:log -- [--entries 100000,1000000] [--authors 20] [--out results/bench-log.md]
//     [--seed-cache results/bench-log-seeds | --no-seed-cache]
//
// The seeded data dir is kept in the seed cache (one per entries, authors and
// seed) and copied for each run: signing a million entries takes most of a
// run, and the same seed gives the same texts (the authors' keys are drawn
// afresh when a seed is built, so a cached seed is reused as it is).
//
// For each size N: a data dir is filled with N signed findings from `authors`
// identities; agentd A is started on it (two real processes over TCP
// loopback); agentd B starts on an empty data dir with A as its bootstrap
// peer, and is polled (LogInfo) until its version-vector digest equals A's.
// Reported: entries per second B ingested (from B's `ready` to the whole log),
// and per CPU-second of B (which holds still on a busy machine); bytes per
// entry on the wire (TCP payload B received on its libp2p connections, as the
// kernel counts it: noise, yamux, gossip and presence included) and in the
// sync protocol's frames (agentd_sync_bytes_total); B's RSS (empty, peak, end);
// A's first start (a full fold) and its restart (from its checkpoint); the
// time of find at B over the whole log.
import '../../src/polyfill.js'
import { execFile } from 'node:child_process'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { cpus, loadavg } from 'node:os'
import { dirname } from 'node:path'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { AgentdProcesses, type AgentdProcess } from '../scenarios/sync/helpers.js'
import { DEFAULT_SEED_CACHE, seedDataDir } from './log-seed-cache.js'
import { startFloor, type FloorResult } from './log-floor.js'

interface Args {
  entries: number[]
  authors: number
  out: string
  /**
   * write the joiner's and the serving daemon's CPU profiles (node --cpu-prof) here, with the catch-up's start and end in catch-up.marks
   */
  profileDir?: string
  /** append both daemons' logs to files here */
  logDir?: string
  /** extra environment for the joiner (KEY=VALUE), for memory experiments */
  joinerEnv: Record<string, string>
  /** extra node flags for the joiner */
  joinerNodeArgs: string[]
  /** where seeded data dirs are kept between runs (null: seed afresh each run) */
  seedCache: string | null
}

function parseArgs(argv: string[]): Args {
  const args: Args = {
    entries: [100_000, 1_000_000],
    authors: 20,
    out: 'results/bench-log.md',
    joinerEnv: {},
    joinerNodeArgs: [],
    seedCache: DEFAULT_SEED_CACHE
  }
  for (let i = 0; i < argv.length; i++) {
    const value = argv[i + 1]
    switch (argv[i]) {
      case '--entries':
        args.entries = value.split(',').map(s => Number(s.replace(/_/g, '')))
        i++
        break
      case '--authors':
        args.authors = Number(value)
        i++
        break
      case '--out':
        args.out = value
        i++
        break
      case '--profile-dir':
        args.profileDir = value
        i++
        break
      case '--log-dir':
        args.logDir = value
        i++
        break
      case '--joiner-env': {
        const [k, ...v] = value.split('=')
        args.joinerEnv[k] = v.join('=')
        i++
        break
      }
      case '--joiner-node-arg':
        args.joinerNodeArgs.push(value)
        i++
        break
      case '--seed-cache':
        args.seedCache = value
        i++
        break
      case '--no-seed-cache':
        args.seedCache = null
        break
      default:
        throw new Error(
          `unknown argument ${argv[i]} (use --entries N[,N...] --authors N --out FILE --profile-dir DIR --log-dir DIR --joiner-env K=V --joiner-node-arg FLAG --seed-cache DIR --no-seed-cache)`
        )
    }
  }
  if (args.entries.some(n => !Number.isSafeInteger(n) || n < 1) || !Number.isSafeInteger(args.authors) || args.authors < 1) {
    throw new Error('--entries and --authors take positive whole numbers')
  }
  return args
}

/** Resident set size and its peak, in bytes, from /proc (Linux). */
async function rssOf(pid: number): Promise<{ rss: number; peak: number; anon: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8')
  const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) * 1024
  // RssAnon leaves out file pages: LevelDB maps its table files, and the pages a read touches count in VmRSS
  return { rss: kb('VmRSS'), peak: kb('VmHWM'), anon: kb('RssAnon') }
}

/** CPU seconds (user + system) a process has used (all its threads), from /proc (Linux). */
async function cpuSecondsOf(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** CPU seconds of a process's main thread alone (the event loop: a catch-up's critical path; worker and LevelDB threads run beside it). */
async function mainThreadCpuSecondsOf(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/task/${pid}/stat`, 'utf8')).split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/**
 * TCP payload bytes a process received on its connections to or from given
 * ports (its libp2p connections), from the kernel's counters (`ss -tinp`).
 * Sampled: a connection that closes keeps the last count seen, so sample
 * often. `total` is NaN when ss is not there.
 */
class TcpReceiveCounter {
  private readonly seen = new Map<string, number>()
  private available = true
  constructor(
    private readonly pid: number,
    private readonly ports: number[]
  ) {}

  async sample(): Promise<void> {
    const out = await new Promise<string>(resolve => {
      execFile('ss', ['-tinpH', 'state', 'established'], (err, stdout) => {
        resolve(err == null ? stdout : '')
      })
    })
    if (out === '') {
      this.available = false
      return
    }
    const lines = out.split('\n')
    for (let i = 0; i < lines.length - 1; i++) {
      const m = /^\S+\s+\S+\s+\S+:(\d+)\s+\S+:(\d+)\s+users:.*pid=(\d+),/.exec(lines[i])
      if (m == null || Number(m[3]) !== this.pid) continue
      if (!this.ports.includes(Number(m[1])) && !this.ports.includes(Number(m[2]))) continue
      const bytes = Number(/bytes_received:(\d+)/.exec(lines[i + 1])?.[1] ?? 0)
      const key = `${m[1]}-${m[2]}`
      this.seen.set(key, Math.max(bytes, this.seen.get(key) ?? 0))
    }
  }

  get total(): number {
    return this.available ? [...this.seen.values()].reduce((n, b) => n + b, 0) : NaN
  }
}

/** Waits until a process uses less than 5 % of a core over half a second (at most a minute). */
async function settle(pid: number): Promise<void> {
  const until = performance.now() + 60_000
  let last = await cpuSecondsOf(pid)
  while (performance.now() < until) {
    await sleep(500)
    const now = await cpuSecondsOf(pid)
    if (now - last < 0.025) return
    last = now
  }
}

function tcpPortOf(multiaddr: string): number {
  return Number(/\/tcp\/(\d+)/.exec(multiaddr)?.[1] ?? NaN)
}

interface Row {
  entries: number
  authors: number
  entryBytes: number
  seedSeconds: number
  restoreSeconds: number
  /** from B's ready until its log is A's (digests equal) */
  logSeconds: number
  /** until then and its first search answered (its findings index whole) */
  catchUpSeconds: number
  entriesPerSecond: number
  entriesPerCpuSecond: number
  /** CPU seconds of the joiner and of the serving (seeded) daemon during the catch-up */
  joinerCpuSeconds: number
  /** of which the joiner's main thread */
  joinerMainCpuSeconds: number
  servingCpuSeconds: number
  wireBytesReceived: number
  bytesReceived: number
  bytesSent: number
  syncRounds: number
  rssBaseline: number
  rssPeak: number
  /** the peak of RssAnon seen while polling: memory that is not file pages */
  anonPeak: number
  /** RssAnon of the joiner when it started, empty */
  anonBaseline: number
  rssEnd: number
  /** peaks of the joiner's V8 heap (used, total) and external memory during catch-up, sampled about once a second */
  heapUsedPeak: number
  heapTotalPeak: number
  externalPeak: number
  firstFindMs: number
  findP50Ms: number
  findMaxMs: number
  restartSeconds: number
  restartRss: number
  /** CPU seconds of the seeded daemon's restart, from its spawn to ready */
  restartCpuSeconds: number
  /** the first find at the seeded daemon after its restart (from the findings checkpoint, or waiting for the index) */
  restartFirstFindMs: number
  /** the 1-minute load average when the catch-up started and when find was done */
  loadAtStart: number
  loadAtEnd: number
  /** the machine's floor for the same entries in the same run (log-floor.ts), and the load when it was taken */
  floor: FloorResult
  loadAtFloor: number
}

const FIND_QUERIES = [
  'lease',
  'gossip vector',
  'decoder timeout',
  'cursor',
  'backpressure parser',
  'quorum',
  'digest lease',
  'vector',
  'timeout',
  'protobuf',
  'leas',
  'gosip',
  'cursors digest',
  'parser',
  'backoff',
  'lease lease',
  'decodes',
  'vectors',
  'quorum timeout',
  'digest'
]

async function runOnce(entries: number, authors: number, args: Args): Promise<Row> {
  const { profileDir, logDir } = args
  const procs = new AgentdProcesses()
  let floor: ReturnType<typeof startFloor> | undefined
  try {
    const dirA = await procs.dirs.make('agency-bench-')
    let t = performance.now()
    const seeded = await seedDataDir(dirA, entries, authors, args.seedCache)
    const seedSeconds = (performance.now() - t) / 1000
    process.stderr.write(
      `  seed: ${seeded.built ? 'signed and cached' : args.seedCache === null ? 'signed' : 'copied from the cache'} in ${seedSeconds.toFixed(1)} s\n`
    )

    // the floor's process reads the entries now, before A holds the data dir, and measures just before B starts
    floor = startFloor(dirA)
    await floor.loaded

    t = performance.now()
    const profile = (name: string): string[] =>
      profileDir !== undefined ? ['--cpu-prof', '--cpu-prof-dir', `${profileDir}/${name}-${entries}`] : []
    const a = await procs.start({
      name: 'bench-a',
      dataDir: dirA,
      metrics: true,
      readyTimeoutMs: 30 * 60_000,
      ...(logDir !== undefined ? { logFile: `${logDir}/bench-a-${entries}.log` } : {}),
      nodeArgs: profile('serving')
    })
    const restoreSeconds = (performance.now() - t) / 1000
    const infoA = await a.logInfo()
    if (infoA.vectorDigest !== seeded.vectorDigest) throw new Error('the seeded daemon did not restore the seeded log')
    // A late joiner joins a daemon that has been serving for a while: its
    // findings index is built (a first search takes the log in) and its start's
    // checkpoints are written before B starts, so the serving daemon's CPU
    // during the catch-up is what serving costs, not its own first start.
    await a.agency.call(
      c => c.searchFindings,
      { query: 'lease', kind: '', pathPrefix: '', tag: '', author: '', since: 0, until: 0, limit: 1 },
      10 * 60_000
    )
    await settle(a.pid as number)
    const loadAtFloor = loadavg()[0]
    const floorResult = await floor.run()
    process.stderr.write(
      `  floor: ${floorResult.seconds.toFixed(2)} s (hash ${floorResult.hashSeconds.toFixed(2)}, batch ${floorResult.writeSeconds.toFixed(2)}), ${floorResult.cpuSeconds.toFixed(2)} CPU s, load ${loadAtFloor.toFixed(1)}\n`
    )

    const b: AgentdProcess = await procs.start({
      name: 'bench-b',
      peers: a.addrs,
      metrics: true,
      readyTimeoutMs: 5 * 60_000,
      ...(logDir !== undefined ? { logFile: `${logDir}/bench-b-${entries}.log` } : {}),
      env: args.joinerEnv,
      nodeArgs: [...args.joinerNodeArgs, ...profile('joiner')]
    })
    const start = performance.now()
    // the profiles' clock (monotonic, microseconds): the catch-up's window in them
    const markStart = process.hrtime.bigint() / 1000n
    const loadAtStart = loadavg()[0]
    const pid = b.pid as number
    const empty = await rssOf(pid)
    const rssBaseline = empty.rss
    const anonBaseline = empty.anon
    const cpuStart = await cpuSecondsOf(pid)
    const mainCpuStart = await mainThreadCpuSecondsOf(pid)
    const servingCpuStart = await cpuSecondsOf(a.pid as number)
    const wire = new TcpReceiveCounter(pid, [...a.addrs, ...b.addrs].map(tcpPortOf))
    let rssPeak = 0
    let anonPeak = 0
    // what the memory is, by the joiner's own counters (scraped about once a second: a scrape costs it CPU)
    const heap = { used: 0, total: 0, external: 0 }
    let polls = 0
    for (;;) {
      const info = await b.logInfo()
      const m = await rssOf(pid)
      rssPeak = Math.max(rssPeak, m.rss)
      anonPeak = Math.max(anonPeak, m.anon)
      if (polls++ % 20 === 0) {
        heap.used = Math.max(heap.used, await b.metric('agentd_nodejs_heap_size_used_bytes'))
        heap.total = Math.max(heap.total, await b.metric('agentd_nodejs_heap_size_total_bytes'))
        heap.external = Math.max(heap.external, await b.metric('agentd_nodejs_external_memory_bytes'))
      }
      await wire.sample()
      if (info.vectorDigest === infoA.vectorDigest) break
      if (performance.now() - start > 30 * 60_000) throw new Error(`no catch-up after 30 minutes (${info.entries}/${entries})`)
      await sleep(50)
    }
    const logSeconds = (performance.now() - start) / 1000
    // find over the whole log at the joiner, timed as a client sees it (gRPC on
    // loopback included): the first search, at once, waits for whatever
    // indexing is not done yet (the worker's index taken back, or the rest
    // indexed), so the catch-up ends when the log and its findings index are whole
    const search = async (query: string, at: AgentdProcess = b): Promise<number> => {
      const t0 = performance.now()
      // a first search takes in what the background indexing has not reached: on a loaded machine, well past the client's default 30 s
      await at.agency.call(
        c => c.searchFindings,
        { query, kind: '', pathPrefix: '', tag: '', author: '', since: 0, until: 0, limit: 20 },
        10 * 60_000
      )
      return performance.now() - t0
    }
    const firstFindMs = await search('lease vector')
    const catchUpSeconds = (performance.now() - start) / 1000
    const markEnd = process.hrtime.bigint() / 1000n
    rssPeak = Math.max(rssPeak, (await rssOf(pid)).rss)
    anonPeak = Math.max(anonPeak, (await rssOf(pid)).anon)
    const cpuSeconds = (await cpuSecondsOf(pid)) - cpuStart
    const mainCpuSeconds = (await mainThreadCpuSecondsOf(pid)) - mainCpuStart
    const servingCpuSeconds = (await cpuSecondsOf(a.pid as number)) - servingCpuStart
    if (profileDir !== undefined) {
      await mkdir(profileDir, { recursive: true })
      await writeFile(`${profileDir}/catch-up-${entries}.marks`, `${markStart} ${markEnd}\n`)
    }

    // The sync byte counters move when an exchange completes: give the
    // exchanges that delivered the log time to close. (Periodic rounds go on,
    // but with equal digests they carry no entries, only version vectors.)
    for (let i = 0; i < 8; i++) {
      await sleep(500)
      await wire.sample()
    }
    const received = await b.metric('agentd_sync_bytes_total', { direction: 'received' })
    const sent = await b.metric('agentd_sync_bytes_total', { direction: 'sent' })
    const rounds = await b.metric('agentd_sync_rounds_total')
    const mem = await rssOf(pid)
    const wireBytesReceived = wire.total

    // then a round of queries
    const findMs: number[] = []
    for (const q of FIND_QUERIES) findMs.push(await search(q))
    findMs.sort((x, y) => x - y)
    const loadAtEnd = loadavg()[0]

    // the seeded daemon again, on its data dir: from its checkpoint
    await a.stop()
    t = performance.now()
    await a.start()
    const restartSeconds = (performance.now() - t) / 1000
    // CPU from spawn to ready: what the restart costs whatever the load
    const restartCpuSeconds = await cpuSecondsOf(a.pid as number)
    const restartRss = (await rssOf(a.pid as number)).rss
    const restartFirstFindMs = await search('lease vector', a)
    return {
      entries,
      authors,
      entryBytes: seeded.bytes / seeded.entries,
      seedSeconds,
      restoreSeconds,
      logSeconds,
      catchUpSeconds,
      entriesPerSecond: entries / catchUpSeconds,
      entriesPerCpuSecond: entries / cpuSeconds,
      joinerCpuSeconds: cpuSeconds,
      joinerMainCpuSeconds: mainCpuSeconds,
      servingCpuSeconds,
      wireBytesReceived,
      bytesReceived: received,
      bytesSent: sent,
      syncRounds: rounds,
      rssBaseline,
      rssPeak: Math.max(rssPeak, mem.peak),
      anonPeak: Math.max(anonPeak, mem.anon),
      anonBaseline,
      rssEnd: mem.rss,
      heapUsedPeak: heap.used,
      heapTotalPeak: heap.total,
      externalPeak: heap.external,
      firstFindMs,
      findP50Ms: findMs[Math.floor(findMs.length / 2)],
      findMaxMs: findMs[findMs.length - 1],
      restartSeconds,
      restartRss,
      restartCpuSeconds,
      restartFirstFindMs,
      loadAtStart,
      loadAtEnd,
      floor: floorResult,
      loadAtFloor
    }
  } finally {
    floor?.stop()
    await procs.cleanup()
  }
}

const mib = (n: number): string => (n / 2 ** 20).toFixed(0)

function table(rows: Row[]): string {
  const head =
    '| entries | authors | catch-up: log / and its index (s) | entries/s ingested | entries per joiner CPU-second | CPU s during catch-up: joiner (its main thread) / serving daemon | wire bytes/entry received (TCP) | sync frame bytes/entry received | joiner RSS: empty / peak / end (MiB) | joiner RSS without file pages: empty / peak (MiB) | joiner V8 heap used / total, external, peaks (MiB) | seeded daemon, first start (s) | its restart: s (CPU s) / RSS (MiB) / first find (ms) | find: first / p50 / max (ms) | load average (1 min) at catch-up start / after find |'
  const rule = '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|'
  const lines = rows.map(
    r =>
      `| ${r.entries} | ${r.authors} | ${r.logSeconds.toFixed(1)} / ${r.catchUpSeconds.toFixed(1)} | ${Math.round(r.entriesPerSecond)} | ${Math.round(r.entriesPerCpuSecond)} | ${r.joinerCpuSeconds.toFixed(2)} (${r.joinerMainCpuSeconds.toFixed(2)}) / ${r.servingCpuSeconds.toFixed(2)} | ` +
      `${(r.wireBytesReceived / r.entries).toFixed(0)} | ${(r.bytesReceived / r.entries).toFixed(0)} | ` +
      `${mib(r.rssBaseline)} / ${mib(r.rssPeak)} / ${mib(r.rssEnd)} | ${mib(r.anonBaseline)} / ${mib(r.anonPeak)} | ${mib(r.heapUsedPeak)} / ${mib(r.heapTotalPeak)}, ${mib(r.externalPeak)} | ${r.restoreSeconds.toFixed(1)} | ${r.restartSeconds.toFixed(1)} (${r.restartCpuSeconds.toFixed(1)}) / ${mib(r.restartRss)} / ${r.restartFirstFindMs.toFixed(0)} | ` +
      `${r.firstFindMs.toFixed(0)} / ${r.findP50Ms.toFixed(1)} / ${r.findMaxMs.toFixed(1)} | ${r.loadAtStart.toFixed(1)} / ${r.loadAtEnd.toFixed(1)} |`
  )
  return [head, rule, ...lines].join('\n')
}

/** agency's catch-up against the machine's floor for the same entries, taken in the same run just before it. */
function floorTable(rows: Row[]): string {
  const head =
    '| entries | floor: hash + one LevelDB batch, s (hash / batch) | floor CPU s | catch-up: log / and its index (s) | catch-up ÷ floor, wall: log / and its index | joiner CPU ÷ floor CPU | load average (1 min) at the floor / at catch-up start |'
  const rule = '|---:|---:|---:|---:|---:|---:|---:|'
  const lines = rows.map(
    r =>
      `| ${r.entries} | ${r.floor.seconds.toFixed(2)} (${r.floor.hashSeconds.toFixed(2)} / ${r.floor.writeSeconds.toFixed(2)}) | ${r.floor.cpuSeconds.toFixed(2)} | ${r.logSeconds.toFixed(1)} / ${r.catchUpSeconds.toFixed(1)} | ` +
      `${(r.logSeconds / r.floor.seconds).toFixed(1)}x / **${(r.catchUpSeconds / r.floor.seconds).toFixed(1)}x** | ${(r.joinerCpuSeconds / r.floor.cpuSeconds).toFixed(1)}x | ${r.loadAtFloor.toFixed(1)} / ${r.loadAtStart.toFixed(1)} |`
  )
  return [head, rule, ...lines].join('\n')
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2))
  const rows: Row[] = []
  for (const n of args.entries) {
    process.stderr.write(`log-sync bench: ${n} entries from ${args.authors} authors...\n`)
    const row = await runOnce(n, args.authors, args)
    process.stderr.write(`  ${JSON.stringify(row)}\n`)
    rows.push(row)
  }
  const cpu = cpus()
  const report = [
    '# Log sync benchmark: a late joiner',
    '',
    `Two agentd processes over TCP loopback; node ${process.version}, ${cpu.length} × ${cpu[0]?.model ?? 'unknown CPU'}, ${new Date().toISOString().slice(0, 10)}.`,
    'Daemon A starts on a data dir pre-filled with N signed findings and is left to settle (a first search builds its findings index; its CPU falls below 5 % of a core); then daemon B starts empty with A as its bootstrap peer.',
    "Catch-up runs from B's `ready` until B's version-vector digest equals A's (LogInfo polled every 50 ms), and then until B answers a first search (its findings index whole); entries/s and CPU are over that second span.",
    'Wire bytes: TCP payload B received on its libp2p connections (kernel counters via `ss`; noise, yamux, gossip, presence included).',
    'Sync frame bytes: the sync protocol\'s frames, `agentd_sync_bytes_total{direction="received"}` on B. The seeded entries are',
    `findings of about 120 characters of text, one path and one tag: ${Math.round(rows[0]?.entryBytes ?? 0)} bytes each on average, signature included.`,
    "First start: A's start on the seeded dir until `ready` (no checkpoint yet: it folds the whole log). Restart: A stopped (SIGTERM) after B caught up,",
    'then started again on its dir until `ready` (from its log and findings checkpoints), and its first find. find: SearchFindings at B over gRPC, as a client times it: the first search',
    `(the end of the catch-up), then ${FIND_QUERIES.length} queries of one to three words (p50 and max).`,
    '',
    table(rows),
    '',
    "Against the floor: in the same run, just before B starts, a process of its own takes the same entries (read from A's data dir beforehand, not timed), hashes each (sha256) and writes them all, keyed by id, in one unsynced LevelDB batch with the `level` package: no daemon, network, signature check or index (test/bench/log-floor.ts).",
    '',
    floorTable(rows),
    '',
    'Reproduce: `npm run build && npm run bench:log -- --entries ' + args.entries.join(',') + '`',
    ''
  ].join('\n')
  process.stdout.write(report)
  await mkdir(dirname(args.out), { recursive: true })
  await writeFile(args.out, report)
  process.stderr.write(`written to ${args.out}\n`)
}

main().catch(err => {
  process.stderr.write(`log-sync bench failed: ${(err as Error).stack ?? String(err)}\n`)
  process.exit(1)
})
