// Benchmark: the CPU and memory of a daemon taking in a log, in one process,
// without the network: N seeded findings are read back as bytes and fed to a
// daemon's LogService as sync batches of 1500, then its findings index is
// read once (an index built after the fact is counted too). Prints the CPU
// seconds, the V8 heap spaces and RssAnon as it goes, and after a full GC.
// Not a vitest test; run it with
//
//   node --expose-gc --import tsx test/bench/log-ingest.bench.ts [N] [--cpu-prof FILE]
//
// The seeded data dir comes from bench:log's seed cache (log-seed-cache.ts).
// --cpu-prof writes a CPU profile of the ingest alone (from the first batch
// to the index read), for Chrome DevTools or any .cpuprofile reader.
import '../../src/polyfill.js'
import { readFileSync, writeFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'
import { getHeapSpaceStatistics } from 'node:v8'
import { Daemon } from '../../src/daemon/daemon.js'
import { openStore } from '../../src/store/open-store.js'
import { memoryAddr, TempDirs } from '../scenarios/sync/helpers.js'
import { DEFAULT_SEED_CACHE, seedDataDir } from './log-seed-cache.js'
const argv = process.argv.slice(2)
const profIndex = argv.indexOf('--cpu-prof')
const profileFile = profIndex >= 0 ? argv.splice(profIndex, 2)[1] : undefined
const N = Number(argv[0] ?? 100000)
const dirs = new TempDirs()
const mib = (n: number) => (n / 2 ** 20).toFixed(0)
function mem(label: string): void {
  const m = process.memoryUsage()
  const st = readFileSync('/proc/self/status', 'utf8')
  const anon = Number(/RssAnon:\s+(\d+)/.exec(st)?.[1]) * 1024
  const spaces = getHeapSpaceStatistics()
    .map(s => `${s.space_name.replace('_space', '')}=${mib(s.space_size)}/${mib(s.space_used_size)}`)
    .join(' ')
  console.log(
    `${label}: anon ${mib(anon)} heapTotal ${mib(m.heapTotal)} used ${mib(m.heapUsed)} external ${mib(m.external)} ab ${mib(m.arrayBuffers)} | ${spaces}`
  )
}
try {
  const a = await dirs.make('agency-mem-a-')
  await seedDataDir(a, N, 20, DEFAULT_SEED_CACHE)
  const store = await openStore(a)
  const all: Uint8Array[] = []
  for await (const page of store.log.bytesAfter(0)) for (const p of page) all.push(Buffer.from(p.bytes))
  await store.close()
  const blob = Buffer.concat(all)
  const frames: Array<[number, number]> = []
  let at = 0
  for (const b of all) {
    frames.push([at, at + b.length])
    at += b.length
  }
  all.length = 0
  global.gc?.()
  const b = new Daemon({
    dataDir: await dirs.make('agency-mem-b-'),
    listen: [memoryAddr('mem')],
    grpc: null,
    metrics: null,
    processMetrics: false,
    heartbeatMs: 1000,
    liveTimeoutMs: 5000,
    ownHeadWaitMs: 1
  })
  await b.start()
  global.gc?.()
  mem('empty daemon')
  const session = profileFile !== undefined ? new Session() : undefined
  if (session !== undefined) {
    session.connect()
    await session.post('Profiler.enable')
    await session.post('Profiler.start')
  }
  const cpu0 = process.cpuUsage()
  const wall0 = performance.now()
  for (let i = 0; i < frames.length; i += 1500) {
    const batch = frames.slice(i, i + 1500).map(([s, e]) => blob.subarray(s, e))
    await b.logService.ingestBatchBytes(batch, 'x')
    if ((i / 1500) % 10 === 0) mem(`at ${i}`)
  }
  const cpu = process.cpuUsage(cpu0)
  console.log(`ingest CPU ${((cpu.user + cpu.system) / 1e6).toFixed(2)} s for ${N}`)
  const size = b.logService.findings.size
  const both = process.cpuUsage(cpu0)
  console.log(
    `ingest + index CPU ${((both.user + both.system) / 1e6).toFixed(2)} s for ${N} (${size} indexed), wall ${((performance.now() - wall0) / 1000).toFixed(2)} s`
  )
  if (session !== undefined) {
    const { profile } = await session.post('Profiler.stop')
    writeFileSync(profileFile as string, JSON.stringify(profile))
    session.disconnect()
  }
  mem('end')
  global.gc?.()
  mem('after gc')
  await b.stop()
} finally {
  await dirs.removeAll()
}
