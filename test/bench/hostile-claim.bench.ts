// npm run bench:claim — what one hostile claim costs the event loop of a
// daemon that receives it: decoding and verifying the 64 KiB entry, folding it
// into a board of live claims, and the overlap checks the daemon runs for its
// own claims after every claim by someone else. Several shapes of hostile
// scope are tried (many short globs, long globs with brace expansions, globs
// built to make the intersection search work hard); the worst one counts.
// Times are the process's CPU time (user + system) over the measured steps,
// which is what the event loop spends; wall time on a shared machine also
// counts the time other processes had the core.
// Usage: npm run bench:claim -- [--claims 200] [--runs 30] [--out results]
import '../../src/polyfill.js'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'
import { Board } from '../../src/core/board/board.js'
import { overlapsFor } from '../../src/core/board/claim-overlaps.js'
import { createSigner, type Signer } from '../../src/core/log/crypto.js'
import { encodeEntry } from '../../src/core/log/entry.js'
import { decodeBody } from '../../src/core/log/kinds.js'
import { MAX_ENTRY_BYTES } from '../../src/core/log/limits.js'
import { LogState } from '../../src/core/log/log-state.js'
import type { StoredEntry } from '../../src/core/log/ingest-result.js'

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`)
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback
}

const CLAIMS = Number(arg('claims', '200'))
const RUNS = Number(arg('runs', '30'))
const OUT = arg('out', 'results')

async function signer(): Promise<Signer> {
  const key = await generateKeyPair('Ed25519')
  return createSigner(peerIdFromPrivateKey(key).toString(), key.raw)
}

function fold(board: Board, e: StoredEntry): void {
  const { entry } = e
  board.apply({
    id: e.id,
    author: entry.author,
    seq: entry.seq,
    lamport: entry.lamport,
    time: entry.time,
    kind: entry.kind,
    body: decodeBody(entry.kind as 'claim', entry.body)
  })
}

/** Fills a claim's scope with globs from `make(i)` until the entry is as large as an entry may be. */
function hostileScope(make: (i: number) => string): string[] {
  const scope: string[] = []
  let bytes = 600 // the entry's other fields
  for (let i = 0; ; i++) {
    const g = make(i)
    bytes += g.length + 3
    if (bytes > MAX_ENTRY_BYTES) return scope
    scope.push(g)
  }
}

const run = (n: number): string =>
  Math.random()
    .toString(36)
    .slice(2, 2 + n)
const SHAPES: Record<string, (salt: string) => string[]> = {
  'an ordinary claim, for comparison': salt => [`src/${salt}/**`, `test/${salt}/*.test.ts`],
  'many short wildcard globs': salt => hostileScope(i => `*/${salt}${i}*/**`),
  'long globs with brace alternatives': salt => hostileScope(i => `**/${salt}${i}{a,b}{c,d}{e,f}*${'*x'.repeat(490)}/**`),
  'star-heavy long segments': salt => hostileScope(i => `**/*${salt}${i}${'*a'.repeat(500)}*/**`),
  'deep globstar chains': salt => hostileScope(i => `${salt}${i}/${'**/*/'.repeat(200)}x`)
}

interface Row {
  shape: string
  globs: number
  entryBytes: number
  p50Ms: number
  p90Ms: number
  maxMs: number
  ingestMs: number
  foldMs: number
  overlapMs: number
  overlapsFound: number
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/** CPU milliseconds used by this process so far. */
function cpuMs(): number {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}

/** A board with CLAIMS live claims by other agents, this daemon holding two tasks, and the attacker's tasks. */
async function setup(
  me: Signer,
  attacker: Signer,
  peers: Signer[]
): Promise<{ state: LogState; board: Board; attackerEntries: StoredEntry[] }> {
  const state = new LogState()
  const board = new Board()
  let now = 1_700_000_000_000
  const append = (s: Signer, kind: 'task' | 'claim', body: object): StoredEntry => {
    const e = state.append(s, kind, body, now++)
    fold(board, e)
    return e
  }
  for (let i = 0; i < CLAIMS; i++) {
    append(peers[i % peers.length], 'task', { id: `t${i}`, title: `t${i}`, scope: [`src/mod${i}/**`] })
    append(peers[i % peers.length], 'claim', {
      task: `t${i}`,
      epoch: 1,
      scope: [`src/mod${i}/**`, `test/mod${i}/*.test.ts`, `docs/mod${i}.md`]
    })
  }
  for (const t of MINE) {
    append(me, 'task', { id: t, title: t })
    append(me, 'claim', { task: t, epoch: 1, scope: [`src/${t}/**/*.ts`, `test/${t}/**`, 'package.json', 'src/shared/{types,errors}.ts'] })
  }
  const attackerEntries = [append(attacker, 'task', { id: 'x', title: 'x' })]
  // The overlap checks run once before the hostile claim, as they do on every claim: what is cached then is warm.
  for (const t of MINE) overlapsFor(board, board.holder(t)!, now)
  return { state, board, attackerEntries }
}

const MINE = ['mine-a', 'mine-b']

async function main(): Promise<void> {
  const me = await signer()
  const attacker = await signer()
  const peers = await Promise.all(Array.from({ length: 8 }, signer))
  const now = 1_800_000_000_000
  const rows: Row[] = []
  for (const [shape, make] of Object.entries(SHAPES)) {
    const times: number[] = []
    const phases: number[][] = [[], [], []]
    let globs = 0
    let entryBytes = 0
    let found = 0
    // The first runs warm the JIT up and are not counted.
    for (let r = -3; r < RUNS; r++) {
      // A fresh board each run: one hostile claim is measured, not a growing pile of them.
      const { state, board, attackerEntries } = await setup(me, attacker, peers)
      // Signed elsewhere; what is timed is what the receiving daemon does with the bytes.
      const scratch = new LogState()
      for (const e of attackerEntries) scratch.ingest(e.entry)
      const scope = make(run(6))
      const hostile = scratch.append(attacker, 'claim', { task: 'x', epoch: 1, scope }, now)
      const bytes = encodeEntry(hostile.entry)
      globs = scope.length
      entryBytes = bytes.byteLength
      const started = cpuMs()
      const result = state.ingestBytes(bytes)
      if (result.status !== 'accepted') throw new Error(`hostile claim not accepted: ${JSON.stringify(result)}`)
      const ingested = cpuMs()
      fold(board, result.accepted[0])
      const folded = cpuMs()
      found = 0
      for (const t of MINE) found += overlapsFor(board, board.holder(t)!, now).length
      const done = cpuMs()
      if (r < 0) continue
      times.push(done - started)
      phases[0].push(ingested - started)
      phases[1].push(folded - ingested)
      phases[2].push(done - folded)
    }
    times.sort((a, b) => a - b)
    rows.push({
      shape,
      globs,
      entryBytes,
      p50Ms: times[Math.floor(times.length / 2)],
      p90Ms: times[Math.floor(times.length * 0.9)],
      maxMs: times[times.length - 1],
      ingestMs: median(phases[0]),
      foldMs: median(phases[1]),
      overlapMs: median(phases[2]),
      overlapsFound: found
    })
  }

  const lines = [
    `# bench:claim — one hostile claim against a board of ${CLAIMS} live claims (${RUNS} runs per shape)`,
    '',
    '| hostile scope | globs | entry bytes | CPU p50 | p90 | max | p50 ingest (decode, verify) | fold | overlap checks | overlaps reported |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      r =>
        `| ${r.shape} | ${r.globs} | ${r.entryBytes} | ${r.p50Ms.toFixed(2)} ms | ${r.p90Ms.toFixed(2)} ms | ${r.maxMs.toFixed(2)} ms | ${r.ingestMs.toFixed(2)} ms | ${r.foldMs.toFixed(2)} ms | ${r.overlapMs.toFixed(2)} ms | ${r.overlapsFound} |`
    ),
    '',
    `worst p50: ${Math.max(...rows.map(r => r.p50Ms)).toFixed(2)} ms; worst p90: ${Math.max(...rows.map(r => r.p90Ms)).toFixed(2)} ms; worst single run: ${Math.max(...rows.map(r => r.maxMs)).toFixed(2)} ms (a garbage collection can land in any run)`
  ]
  console.log(lines.join('\n'))
  await mkdir(OUT, { recursive: true })
  await writeFile(join(OUT, 'bench-claim.md'), lines.join('\n') + '\n')
  await writeFile(join(OUT, 'bench-claim.json'), JSON.stringify({ claims: CLAIMS, runs: RUNS, rows }, null, 2))
}

await main()
