// Benchmark: the dashboard. Not a vitest test; build first (the daemon runs
// dist/src/cli/agentd.js and the page is dist/ui), then
//
//   npm run build && npm run bench:ui -- [--part cost|scale|all] [--agents 64] [--window-s 60]
//     [--warmup-s 20] [--ops 2] [--scale-agents 1024] [--entries 100000] [--out results/bench-ui.md]
//
// cost:  what an open dashboard adds to its daemon's CPU in a busy swarm of --agents
//        (see test/bench/ui-cost.ts);
// scale: a daemon holding --entries entries from --scale-agents agents, all live:
//        each endpoint's time and size, each view's time to show and the longest
//        block of the page's main thread in headless Chromium (test/bench/ui-scale.ts).
import './quiet-logs.js'
import '../../src/polyfill.js'
import { mkdir, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import { cpus, loadavg } from 'node:os'
import { runCost, type CostResult } from './ui-cost.js'
import { runScale, type ScaleResult } from './ui-scale.js'
import { chromiumMissing } from '../ui/browser.js'

interface Args {
  part: 'cost' | 'scale' | 'all'
  agents: number
  windowMs: number
  warmupMs: number
  ops: number
  scaleAgents: number
  entries: number
  out: string
}

function parseArgs(argv: string[]): Args {
  const a: Args = {
    part: 'all',
    agents: 64,
    windowMs: 60_000,
    warmupMs: 20_000,
    ops: 2,
    scaleAgents: 1024,
    entries: 100_000,
    out: 'results/bench-ui.md'
  }
  const num = (flag: string, v: string | undefined): number => {
    const n = Number(v)
    if (v === undefined || !Number.isFinite(n) || n <= 0) throw new Error(`${flag} takes a positive number`)
    return n
  }
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]
    const v = argv[++i]
    switch (flag) {
      case '--part':
        if (v !== 'cost' && v !== 'scale' && v !== 'all') throw new Error('--part is cost, scale or all')
        a.part = v
        break
      case '--agents':
        a.agents = Math.max(2, Math.round(num(flag, v)))
        break
      case '--window-s':
        a.windowMs = num(flag, v) * 1000
        break
      case '--warmup-s':
        a.warmupMs = num(flag, v) * 1000
        break
      case '--ops':
        a.ops = num(flag, v)
        break
      case '--scale-agents':
        a.scaleAgents = Math.round(num(flag, v))
        break
      case '--entries':
        a.entries = Math.round(num(flag, v))
        break
      case '--out':
        a.out = v ?? ''
        break
      default:
        throw new Error(`unknown argument ${flag}`)
    }
  }
  return a
}

const pct = (x: number): string => `${(x * 100).toFixed(1)} %`
const kib = (n: number): string => (n < 1024 ? `${n} B` : `${(n / 1024).toFixed(1)} KiB`)

function costMarkdown(c: CostResult, a: Args): string {
  return [
    `### Cost to the daemon: a ${c.agents}-agent swarm (${c.livePeers} peers live, a heartbeat from each every ${(c.heartbeatMs / 1000).toFixed(1)} s), ${a.ops} actions a second, ${a.windowMs / 1000} s windows`,
    '',
    '| window | daemon CPU (share of one core) | entries in the window | heartbeats in the window |',
    '|---|---:|---:|---:|',
    ...c.windows.map(w => `| ${w.phase} | ${pct(w.cpuShare)} | ${w.entries} | ${w.heartbeats} |`),
    '',
    `**An open dashboard adds ${pct(c.addedShare)} of a core** (mean of the open windows less the mean of the closed ones).`,
    ''
  ].join('\n')
}

function scaleMarkdown(s: ScaleResult): string {
  return [
    `### Scale: ${s.agents} live agents, ${s.entries.toLocaleString('en')} entries (${s.findings.toLocaleString('en')} findings, ${s.tasks} tasks)`,
    '',
    `History written in ${s.generateSeconds.toFixed(1)} s; the daemon restored it in ${s.restoreSeconds.toFixed(1)} s.`,
    '',
    '| endpoint | p50 (ms) | max of 5 (ms) | response |',
    '|---|---:|---:|---:|',
    ...s.endpoints.map(e => `| \`${e.path}\` | ${e.p50Ms.toFixed(1)} | ${e.maxMs.toFixed(1)} | ${kib(e.bytes)} |`),
    '',
    '| view in headless Chromium | shown after (ms) | longest main-thread block (ms) | rows drawn |',
    '|---|---:|---:|---:|',
    ...s.views.map(v => `| ${v.view} | ${v.shownMs.toFixed(0)} | ${v.longestTaskMs.toFixed(0)} | ${v.rows} |`),
    ''
  ].join('\n')
}

async function main(): Promise<void> {
  const a = parseArgs(process.argv.slice(2))
  const missing = chromiumMissing()
  if (missing != null) throw new Error(`bench:ui needs a browser: ${missing}`)
  const log = (line: string): void => {
    process.stdout.write(`${line}\n`)
  }
  const parts: string[] = [
    '## bench:ui',
    '',
    `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load average ${loadavg()
      .map(x => x.toFixed(1))
      .join(' ')} at the start; ${new Date().toISOString()}.`,
    ''
  ]
  if (a.part !== 'scale') {
    log(`cost: ${a.agents} agents`)
    parts.push(costMarkdown(await runCost({ agents: a.agents, windowMs: a.windowMs, warmupMs: a.warmupMs, opsPerSecond: a.ops, log }), a))
  }
  if (a.part !== 'cost') {
    log(`scale: ${a.scaleAgents} agents, ${a.entries} entries`)
    parts.push(scaleMarkdown(await runScale({ agents: a.scaleAgents, entries: a.entries, log })))
  }
  const text = parts.join('\n')
  log('')
  log(text)
  await mkdir(dirname(a.out), { recursive: true })
  await writeFile(a.out, text)
  log(`written to ${a.out}`)
}

main().then(
  () => {
    process.exit(0)
  },
  (err: Error) => {
    process.stderr.write(`bench:ui: ${err.stack ?? err.message}\n`)
    process.exit(1)
  }
)
