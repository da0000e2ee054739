// Benchmark: the CPU and memory of a daemon taking in a log, in one process,
// without the network: N seeded findings are read back as bytes and fed to a
// daemon's LogService as sync batches of 1500, then its findings index is
// read once (an index built after the fact is counted too). Prints the CPU
// seconds, the V8 heap spaces and RssAnon as it goes, and after a full GC.
// Not a vitest test; run it with
//
//   node --expose-gc --import tsx test/bench/log-ingest.bench.ts [N]
import '../../src/polyfill.js'
import { readFileSync } from 'node:fs'
import { getHeapSpaceStatistics } from 'node:v8'
import { Daemon } from '../../src/daemon/daemon.js'
import { openStore } from '../../src/store/open-store.js'
import { memoryAddr, seedLog, TempDirs } from '../mesh/sync/helpers.js'
const N = Number(process.argv[2] ?? 100000)
const dirs = new TempDirs()
const mib = (n: number) => (n / 2 ** 20).toFixed(0)
function mem (label: string): void {
  const m = process.memoryUsage()
  const st = readFileSync('/proc/self/status', 'utf8')
  const anon = Number(/RssAnon:\s+(\d+)/.exec(st)?.[1]) * 1024
  const spaces = getHeapSpaceStatistics().map(s => `${s.space_name.replace('_space', '')}=${mib(s.space_size)}/${mib(s.space_used_size)}`).join(' ')
  console.log(`${label}: anon ${mib(anon)} heapTotal ${mib(m.heapTotal)} used ${mib(m.heapUsed)} external ${mib(m.external)} ab ${mib(m.arrayBuffers)} | ${spaces}`)
}
try {
  const a = await dirs.make('agency-mem-a-')
  await seedLog(a, { entries: N, authors: 20, seed: 42 })
  const store = await openStore(a)
  const all: Uint8Array[] = []
  for await (const page of store.log.bytesAfter(0)) for (const p of page) all.push(Buffer.from(p.bytes))
  await store.close()
  const blob = Buffer.concat(all)
  const frames: Array<[number, number]> = []
  let at = 0
  for (const b of all) { frames.push([at, at + b.length]); at += b.length }
  all.length = 0
  global.gc?.()
  const b = new Daemon({ dataDir: await dirs.make('agency-mem-b-'), listen: [memoryAddr('mem')], grpc: null, metrics: null, processMetrics: false, heartbeatMs: 1000, liveTimeoutMs: 5000, ownHeadWaitMs: 1 })
  await b.start()
  global.gc?.()
  mem('empty daemon')
  const cpu0 = process.cpuUsage()
  let peakAnon = 0
  for (let i = 0; i < frames.length; i += 1500) {
    const batch = frames.slice(i, i + 1500).map(([s, e]) => blob.subarray(s, e))
    await b.logService.ingestBatchBytes(batch, 'x')
    if ((i / 1500) % 10 === 0) mem(`at ${i}`)
  }
  const cpu = process.cpuUsage(cpu0)
  console.log(`ingest CPU ${((cpu.user + cpu.system) / 1e6).toFixed(2)} s for ${N}`)
  const size = b.logService.findings.size
  const both = process.cpuUsage(cpu0)
  console.log(`ingest + index CPU ${((both.user + both.system) / 1e6).toFixed(2)} s for ${N} (${size} indexed)`)
  mem('end')
  global.gc?.()
  mem('after gc')
  await b.stop()
} finally {
  await dirs.removeAll()
}
