// What one later findings checkpoint costs on a data dir a daemon
// checkpointed (bench:restart's seed): the index is read back from its
// checkpoint, then a checkpoint of it is encoded whole (the single-file
// format) and in parts (the head alone: its full segments are already on
// disk). Nothing is written. Per format: bytes, wall ms and CPU ms of the encode.
//
//   npx tsx test/bench/findings-checkpoint.bench.ts [--dir /tmp/agency-restart-1000000] [--runs 3]
import { loadavg } from 'node:os'
import { FindingsIndex } from '../../src/core/findings/findings-index.js'
import { encodeFindingsCheckpoint } from '../../src/core/findings/findings-checkpoint.js'
import { encodeFindingsHead } from '../../src/core/findings/findings-checkpoint-parts.js'
import { readFindingsCheckpointNow } from '../../src/daemon/findings/findings-checkpoint-files.js'

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(name)
  return i >= 0 ? process.argv[i + 1] : fallback
}

const dir = arg('--dir', '/tmp/agency-restart-1000000')
const runs = Number(arg('--runs', '3'))
const read = readFindingsCheckpointNow(dir)
if (!('snapshot' in read)) throw new Error(`no findings checkpoint to read in ${dir}: ${JSON.stringify(read)}`)
const cursor = read.snapshot.cursor
// hits are never read here
const index = FindingsIndex.fromSnapshot(read.snapshot, { source: { entryAt: () => undefined, cursorOf: () => 0 } })
const parts = read.parts
console.log(`${index.size} findings, ${parts.length} parts on disk; load ${loadavg()[0].toFixed(1)}`)
console.log('| format | bytes written | encode ms (wall) | encode CPU ms |')
console.log('|---|---:|---:|---:|')
const time = (what: string, encode: () => Uint8Array): void => {
  const t = performance.now()
  const c = process.cpuUsage()
  const bytes = encode()
  const cpu = process.cpuUsage(c)
  console.log(`| ${what} | ${bytes.byteLength} | ${(performance.now() - t).toFixed(1)} | ${((cpu.user + cpu.system) / 1000).toFixed(1)} |`)
}
for (let r = 0; r < runs; r++) {
  time('single file', () => encodeFindingsCheckpoint(index.snapshot(cursor)!))
  time('in parts: the head', () => encodeFindingsHead(index.snapshot(cursor, parts.length)!, parts))
}
