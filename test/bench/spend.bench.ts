// npm run bench:spend — what the spend ledger costs and how far the budget is
// overshot, against the bound docs/spend.md states.
//
//   npm run bench:spend [-- --seeds 20 --out docs/benchmarks]
//
// 1. Ledger cost: the bytes of a signed usage entry, entries per agent-hour
//    (one per harness run), and the CPU to decode and fold a 1024-agent
//    six-hour run's usage entries, as every daemon does at start.
// 2. Overshoot: a simulated swarm (no processes: the daemons' real budget
//    check, core/spend's checkBudget and SwarmWholeness, driven on a simulated
//    clock) of 4 and 64 agents, each starting a run whenever its own view of
//    the record says the budget allows it. Views lag: an entry reaches a peer
//    50-500 ms after its run ends, a heartbeat (who runs) up to 1 s late. Runs
//    last 20-120 s and cost up to R. A partition splits the swarm in halves
//    for the whole run in the second scenario. The overshoot (final spend
//    minus the cap) is compared with the bound 2 N R.
import '../../src/polyfill.js'
import { mkdir, writeFile } from 'node:fs/promises'
import { cpus } from 'node:os'
import { join } from 'node:path'
import { execFileSync } from 'node:child_process'
import { createSigner } from '../../src/core/log/crypto.js'
import { encodeEntry, signEntry } from '../../src/core/log/entry.js'
import { decodeBody, encodeBody } from '../../src/core/log/kinds.js'
import { checkBudget, NO_BUDGET, SpendFold, SwarmWholeness, zeroTotals, type SpendTotals } from '../../src/core/spend/index.js'
import { generateKeyPair } from '@libp2p/crypto/keys'
import { peerIdFromPrivateKey } from '@libp2p/peer-id'

const args = process.argv.slice(2)
const flag = (name: string, def: string): string => {
  const i = args.indexOf(name)
  return i >= 0 ? args[i + 1] : def
}
const SEEDS = Number(flag('--seeds', '20'))
const OUT = flag('--out', 'docs/benchmarks')

function rng(seed: number): () => number {
  let s = seed >>> 0 || 1
  return () => {
    s ^= s << 13
    s >>>= 0
    s ^= s >>> 17
    s ^= s << 5
    s >>>= 0
    return s / 2 ** 32
  }
}

// ---- 1. ledger cost ----

const usageBody = (r: () => number): object => ({
  models: [
    {
      model: 'claude-sonnet-4-5-20250929',
      inputTokens: Math.round(2000 + r() * 20000),
      cacheReadTokens: Math.round(r() * 400000),
      cacheWriteTokens: Math.round(r() * 40000),
      outputTokens: Math.round(r() * 8000),
      microUsd: Math.round(r() * 2e6),
      estimated: false
    }
  ],
  wallMs: Math.round(20_000 + r() * 600_000),
  task: `task-${Math.floor(r() * 200)}`,
  harness: 'claude'
})

async function ledgerCost(): Promise<string[]> {
  const key = await generateKeyPair('Ed25519')
  const id = peerIdFromPrivateKey(key).toString()
  const signer = createSigner(id, key.raw)
  const r = rng(7)
  const entry = signEntry(signer, {
    seq: 1,
    prev: new Uint8Array(0),
    lamport: 1,
    time: Date.now(),
    kind: 'usage',
    body: encodeBody('usage', usageBody(r) as never)
  })
  const entryBytes = encodeEntry(entry).byteLength
  const AGENTS = 1024
  const HOURS = 6
  const lines = [`A signed usage entry of one model: ${entryBytes} bytes.`, '']
  lines.push(
    '| mean run | entries per agent-hour | entries, 1024 agents x 6 h | log bytes | CPU to decode and fold |',
    '|---:|---:|---:|---:|---:|'
  )
  for (const runSeconds of [60, 300]) {
    const perHour = 3600 / runSeconds
    const n = Math.round(AGENTS * HOURS * perHour)
    const authors = Array.from({ length: AGENTS }, (_, i) => `agent-${i}`)
    const bodies = Array.from({ length: 512 }, () => encodeBody('usage', usageBody(r) as never))
    const t0 = process.cpuUsage()
    const fold = new SpendFold()
    for (let i = 0; i < n; i++) {
      const author = authors[i % AGENTS]
      fold.apply({
        id: `e${i}`,
        author,
        seq: 1 + Math.floor(i / AGENTS),
        lamport: i + 1,
        time: 0,
        kind: 'usage',
        body: decodeBody('usage', bodies[i % bodies.length])
      })
    }
    const cpu = process.cpuUsage(t0)
    const cpuS = (cpu.user + cpu.system) / 1e6
    lines.push(
      `| ${runSeconds} s | ${perHour} | ${n.toLocaleString('en-US')} | ${((n * entryBytes) / 1e6).toFixed(0)} MB | ${cpuS.toFixed(2)} s (${((cpuS * 1e6) / n).toFixed(2)} µs an entry) |`
    )
  }
  return lines
}

// ---- 2. overshoot ----

interface SimRun {
  agent: number
  start: number
  end: number
  microUsd: number
}

interface Scenario {
  agents: number
  partition: boolean
  seed: number
  capMicroUsd: number
  maxRunMicroUsd: number
}

/** Simulates the swarm until nobody can start; returns the final spend. */
function simulate(s: Scenario): { spent: number; runs: number } {
  const r = rng(s.seed)
  const N = s.agents
  const side = (a: number): number => (s.partition ? (a < N / 2 ? 0 : 1) : 0)
  const runs: SimRun[] = []
  const running = new Map<number, SimRun>()
  const nextTry = Array.from({ length: N }, () => r() * 1000)
  const wholeness = Array.from({ length: N }, () => new SwarmWholeness())
  const latency = Array.from({ length: 4096 }, () => 50 + r() * 450)
  const caps = { ...NO_BUDGET, microUsd: s.capMicroUsd }
  const members = new Set(Array.from({ length: N }, (_, i) => String(i)))
  let now: number
  let idleSince = -1
  while (true) {
    // next event: a run ends or an agent tries to start
    const nextEnd = Math.min(...[...running.values()].map(x => x.end), Infinity)
    const nextStart = Math.min(...nextTry.map((t, a) => (running.has(a) ? Infinity : t)))
    now = Math.min(nextEnd, nextStart)
    if (!Number.isFinite(now)) break
    for (const [a, run] of running)
      if (run.end <= now) {
        running.delete(a)
        nextTry[a] = now + 1000
      }
    if (running.size === 0) {
      if (idleSince < 0) idleSince = now
      else if (now - idleSince > 300_000) break
    } else idleSince = -1
    for (let a = 0; a < N; a++) {
      if (running.has(a) || nextTry[a] > now) continue
      // a's view: runs ended and delivered to it; peers seen running (heartbeats up to 1 s late); its own side only while split
      const total: SpendTotals = zeroTotals()
      const own: SpendTotals = zeroTotals()
      let largest = 0
      for (const run of runs) {
        if (run.end > now) continue
        const seen = run.agent === a || (side(run.agent) === side(a) && run.end + latency[(run.start | 0) % latency.length] <= now)
        if (!seen) continue
        total.microUsd += run.microUsd
        total.runs++
        if (run.agent === a) {
          own.microUsd += run.microUsd
          own.runs++
        }
        largest = Math.max(largest, run.microUsd)
      }
      let peersRunning = 0
      for (const [b, run] of running) if (b !== a && side(b) === side(a) && run.start <= now - 1000) peersRunning++
      const live = new Set<string>([...members].filter(m => side(Number(m)) === side(a)))
      const share = wholeness[a].observe(members, live, total, own)
      const v = checkBudget(caps, {
        total,
        own,
        largestRun: { microUsd: largest, tokens: 0, wallMs: 0 },
        runsInFlight: peersRunning + 1,
        ownInFlight: 1,
        share
      })
      if (v.reached) {
        nextTry[a] = now + 30_000
        continue
      }
      const run = { agent: a, start: now, end: now + 20_000 + r() * 100_000, microUsd: Math.round((0.2 + 0.8 * r()) * s.maxRunMicroUsd) }
      runs.push(run)
      running.set(a, run)
    }
  }
  return { spent: runs.reduce((x, y) => x + y.microUsd, 0), runs: runs.length }
}

function overshoot(): string[] {
  const lines = [
    '| agents | partition | cap | largest run R | runs (mean) | overshoot: mean | overshoot: worst | bound 2 N R | worst / bound |',
    '|---:|---|---:|---:|---:|---:|---:|---:|---:|'
  ]
  for (const agents of [4, 64]) {
    for (const partition of [false, true]) {
      const R = 1_000_000 // $1 a run at most
      const cap = agents * 20 * R // room for ~20+ runs each
      const results = Array.from({ length: SEEDS }, (_, k) =>
        simulate({ agents, partition, seed: 1000 + k, capMicroUsd: cap, maxRunMicroUsd: R })
      )
      const over = results.map(x => (x.spent - cap) / 1e6)
      const worst = Math.max(...over)
      const bound = (2 * agents * R) / 1e6
      lines.push(
        `| ${agents} | ${partition ? 'halves, all run' : 'none'} | $${cap / 1e6} | $${R / 1e6} | ${Math.round(results.reduce((x, y) => x + y.runs, 0) / SEEDS)} | $${(over.reduce((x, y) => x + y, 0) / SEEDS).toFixed(2)} | $${worst.toFixed(2)} | $${bound} | ${(worst / bound).toFixed(2)} |`
      )
    }
  }
  return lines
}

const commit = (() => {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim()
  } catch {
    return 'unknown'
  }
})()
const report = [
  "# bench:spend — the ledger's cost and the budget's overshoot",
  '',
  `\`npm run bench:spend -- --seeds ${SEEDS}\`, ${new Date().toISOString().slice(0, 10)}, commit ${commit}, ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}.`,
  '',
  '## The ledger',
  '',
  ...(await ledgerCost()),
  '',
  'One usage entry per harness run (print mode) or ACP turn; a rate-limit entry only when a provider limits a run. CPU is one core of this machine, decoding each body and folding it (what a daemon does at start; later entries are folded one by one as they arrive).',
  '',
  '## Overshoot',
  '',
  `The daemons' own budget check on a simulated clock, ${SEEDS} seeds each: runs of 20-120 s costing 0.2 R to R, entries reaching peers 50-500 ms after a run ends, heartbeats up to 1 s late, a new run 1 s after the last ended. With a partition the halves never hear from each other until every agent has stopped (the worst case for the budget).`,
  '',
  ...overshoot(),
  ''
].join('\n')
process.stdout.write(report + '\n')
await mkdir(OUT, { recursive: true })
await writeFile(join(OUT, 'bench-spend.md'), report + '\n')
