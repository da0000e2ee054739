// Benchmark: agency on the real network against raw gossipsub. Not a vitest
// test; build first (the TCP setup runs dist/src/cli/agentd.js), then
//
//   npm run build && npm run bench:mesh -- [--sizes 10,50,200] [--tcp 10] [--hosted 64,128,256 --per-process 32 --joiners 64] [--per-kind
// 50]
//     [--spacing-ms 300] [--wait-ms 30000] [--settle-ms 30000] [--idle-ms 10000] [--heartbeat-ms 2000] [--heartbeat-max-rate 16]
// [--process-heartbeat-budget 400] [--start-budget-s 900]
//     [--counts] [--out results/bench-mesh.md]
//   BENCH_MESH_DUMP=<file>: the TCP setup also writes when each node took in each message (JSON)
//
// Setups: N agentd in this process over the libp2p memory transport (each
// bootstrapped to a few random earlier ones), and --tcp agentd processes over
// TCP on loopback. Each publishes --per-kind claims and as many findings from
// random nodes; reported: p50 and p99 of the time until the last peer
// accepted it (and per delivery; over TCP by each node's own clock, and also
// gossip alone, from the author's send), CPU per node while idle and while
// publishing, RSS per node. The same run starts raw gossipsub nodes (agentd's
// libp2p stack, no daemon) publishing payloads of the same size, so agency's
// overhead is a ratio. --hosted: swarms of N nodes spread over processes of
// --per-process nodes each, TCP on loopback (mesh-hosted.ts), agency then raw
// gossipsub, with idle bytes per node and --joiners daemons joining the agency
// swarm late. Over TCP (--tcp) both swarms are up at once and publish in
// turn, so a machine whose load swings loads both alike. Setups that cannot
// run on this machine are reported with the error instead of numbers. Each
// setup runs in its own process.
import '../../src/polyfill.js'
import { fork } from 'node:child_process'
import { mkdir, writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { cpus, loadavg, totalmem } from 'node:os'
import { dirname } from 'node:path'
import { agencyInProcess, type MeshRunOptions } from './mesh-agency.js'
import { rawInProcess } from './mesh-raw.js'
import { tcpPair } from './mesh-tcp-pair.js'
import { agencyHosted, rawHosted, type JoinerResult } from './mesh-hosted.js'
import { formatMs, ratioMarkdown, resultsMarkdown, type SetupResult } from './mesh-stats.js'

interface Args extends Omit<MeshRunOptions, 'log'> {
  sizes: number[]
  tcp: number
  hosted: number[]
  perProcess: number
  joiners: number
  out: string
}

function parseArgs(argv: string[]): Args {
  const a: Args = {
    sizes: [10, 50, 200],
    tcp: 10,
    hosted: [],
    perProcess: 32,
    joiners: 0,
    perKind: 50,
    spacingMs: 300,
    waitMs: 30_000,
    idleMs: 10_000,
    settleMs: 30_000,
    bootstrap: 3,
    heartbeatMs: 2_000,
    liveTimeoutMs: 10_000,
    out: 'results/bench-mesh.md'
  }
  const num = (flag: string, v: string | undefined): number => {
    const n = Number(v)
    if (v === undefined || !Number.isSafeInteger(n) || n < 0) throw new Error(`${flag} takes a whole number`)
    return n
  }
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]
    const v = argv[++i]
    switch (flag) {
      case '--sizes':
        a.sizes = (v ?? '')
          .split(',')
          .filter(s => s !== '')
          .map(s => num(flag, s))
        break
      case '--tcp':
        a.tcp = num(flag, v)
        break
      case '--hosted':
        a.hosted = (v ?? '')
          .split(',')
          .filter(s => s !== '')
          .map(s => num(flag, s))
        break
      case '--per-process':
        a.perProcess = Math.max(1, num(flag, v))
        break
      case '--joiners':
        a.joiners = num(flag, v)
        break
      case '--per-kind':
        a.perKind = Math.max(1, num(flag, v))
        break
      case '--spacing-ms':
        a.spacingMs = num(flag, v)
        break
      case '--wait-ms':
        a.waitMs = num(flag, v)
        break
      case '--idle-ms':
        a.idleMs = Math.max(1000, num(flag, v))
        break
      case '--settle-ms':
        a.settleMs = num(flag, v)
        break
      case '--heartbeat-ms':
        a.heartbeatMs = Math.max(100, num(flag, v))
        break
      case '--heartbeat-max-rate':
        a.heartbeatMaxRate = Math.max(1, num(flag, v))
        break
      case '--process-heartbeat-budget':
        a.processHeartbeatBudget = Math.max(1, num(flag, v))
        break
      case '--start-budget-s':
        a.startBudgetMs = num(flag, v) * 1000
        break
      case '--counts':
        a.counts = true
        i--
        break
      case '--out':
        a.out = v ?? ''
        break
      default:
        throw new Error(`unknown argument ${flag}`)
    }
  }
  if (a.sizes.some(n => n < 2) || a.hosted.some(n => n < 2) || (a.tcp !== 0 && a.tcp < 2)) throw new Error('a setup needs at least 2 nodes')
  if (a.out === '') throw new Error('--out needs a file')
  return a
}

type SetupKind = 'agency-memory' | 'raw-memory' | 'tcp-pair'
interface SetupJob {
  kind: SetupKind
  n: number
  payloadBytes: number
  options: Omit<MeshRunOptions, 'log'>
}

/** Each setup runs in a fresh process: its CPU and RSS are its own, and a setup that runs out of memory fails alone. */
async function runSetup(job: SetupJob): Promise<SetupResult[]> {
  const child = fork(fileURLToPath(import.meta.url), ['--worker'], {
    execArgv: [...process.execArgv, '--max-old-space-size=8192'],
    env: { ...process.env, AGENCY_LOG_LEVEL: process.env.AGENCY_LOG_LEVEL ?? 'warn' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc']
  })
  return await new Promise((resolve, reject) => {
    let result: SetupResult[] | undefined
    child.on('message', m => {
      result = m as SetupResult[]
    })
    child.on('error', reject)
    child.on('exit', (code, signal) => {
      if (result !== undefined) resolve(result)
      else reject(new Error(`the setup's process exited (${signal ?? `code ${code}`}) without a result`))
    })
    child.send(job)
  })
}

async function worker(): Promise<void> {
  const job = await new Promise<SetupJob>(resolve =>
    process.once('message', m => {
      resolve(m as SetupJob)
    })
  )
  const o: MeshRunOptions = {
    ...job.options,
    log: line => {
      process.stderr.write(line + '\n')
    }
  }
  let result: SetupResult[]
  try {
    result =
      job.kind === 'agency-memory'
        ? [await agencyInProcess(job.n, o)]
        : job.kind === 'raw-memory'
          ? [await rawInProcess(job.n, job.payloadBytes, o)]
          : await tcpPair(job.n, o)
  } catch (err) {
    // The reason goes into the table's notes instead of "exited without a result".
    result =
      job.kind === 'tcp-pair'
        ? [failed('processes, TCP loopback', 'agency', job.n, err), failed('processes, TCP loopback', 'raw gossipsub', job.n, err)]
        : [failed('in-process, memory transport', job.kind === 'agency-memory' ? 'agency' : 'raw gossipsub', job.n, err)]
  }
  await new Promise<void>((resolve, reject) =>
    process.send?.(result, err => {
      if (err != null) reject(err)
      else resolve()
    })
  )
}

function failed(setup: string, system: SetupResult['system'], nodes: number, err: unknown): SetupResult {
  return {
    setup,
    system,
    nodes,
    published: 0,
    allPeers: null,
    perPeer: null,
    incomplete: 0,
    payloadBytes: 0,
    idleCpuPerNode: 0,
    busyCpuPerNode: 0,
    rssPerNodeBytes: 0,
    startSeconds: 0,
    note: `not measured: ${(err as Error).message}`
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2))
  const log = (line: string): void => {
    process.stderr.write(line + '\n')
  }
  const { sizes, tcp, hosted, perProcess, joiners, out, ...options } = args
  const results: SetupResult[] = []
  const load = loadavg()
  const started = performance.now()
  const report = (r: SetupResult): void => {
    log(
      r.published === 0
        ? `    ${r.system}: ${r.note ?? 'nothing measured'}`
        : `    ${r.system}: all peers p50 ${r.allPeers?.p50.toFixed(0) ?? '—'} ms, p99 ${r.allPeers?.p99.toFixed(0) ?? '—'} ms${r.gossipOnly?.allPeers != null ? ` (gossip alone ${r.gossipOnly.allPeers.p50.toFixed(0)} / ${r.gossipOnly.allPeers.p99.toFixed(0)} ms)` : ''}; incomplete ${r.incomplete}/${r.published}; idle CPU ${(r.idleCpuPerNode * 100).toFixed(2)} % per node, busy ${(r.busyCpuPerNode * 100).toFixed(2)} %${r.cpuPerDeliveryMs !== undefined ? ` (${r.cpuPerDeliveryMs.toFixed(2)} ms CPU per delivery)` : ''}; payload ${r.payloadBytes} B`
    )
    results.push(r)
  }
  const run = async (label: string, job: SetupJob): Promise<SetupResult[]> => {
    log(`  ${label} × ${job.n} ...`)
    let rs: SetupResult[]
    try {
      rs = await runSetup(job)
    } catch (err) {
      rs = [
        failed(
          job.kind === 'tcp-pair' ? 'processes, TCP loopback' : 'in-process, memory transport',
          job.kind === 'raw-memory' ? 'raw gossipsub' : 'agency',
          job.n,
          err
        )
      ]
    }
    for (const r of rs) report(r)
    return rs
  }
  for (const n of sizes) {
    const [a] = await run('agency in-process', { kind: 'agency-memory', n, payloadBytes: 0, options })
    const payloadBytes = a.payloadBytes > 0 ? a.payloadBytes : 300
    await run('raw gossipsub in-process', { kind: 'raw-memory', n, payloadBytes, options })
  }
  // Both TCP swarms at once, publishing in turn (mesh-tcp-pair.ts): the same load for both.
  if (tcp > 0) await run('agency and raw gossipsub processes, at once', { kind: 'tcp-pair', n: tcp, payloadBytes: 0, options })
  const joined: JoinerResult[] = []
  for (const n of hosted) {
    const o = { ...options, perProcess, joiners, log }
    log(`  agency in processes of ${perProcess} × ${n} ...`)
    let payloadBytes = 300
    try {
      const { result, joiner } = await agencyHosted(n, o)
      report(result)
      if (result.payloadBytes > 0) payloadBytes = result.payloadBytes
      if (joiner !== undefined) {
        joined.push(joiner)
        log(
          `    ${joiner.joiners} joiners of ${joiner.entries} entries: p50 ${joiner.p50.toFixed(1)} s, p99 ${joiner.p99.toFixed(1)} s, all ${joiner.allSeconds.toFixed(1)} s (${joiner.converged} converged)`
        )
      }
    } catch (err) {
      report(failed(`processes of ${perProcess}, TCP loopback`, 'agency', n, err))
    }
    log(`  raw gossipsub in processes of ${perProcess} × ${n} ...`)
    try {
      report(await rawHosted(n, payloadBytes, o))
    } catch (err) {
      report(failed(`processes of ${perProcess}, TCP loopback`, 'raw gossipsub', n, err))
    }
  }
  const notes = results.filter(r => r.note !== undefined).map(r => `- ${r.setup}, ${r.system} × ${r.nodes}: ${r.note}`)
  const md = [
    '# Mesh: agency on the real network against raw gossipsub',
    '',
    `Command: \`npm run build && npm run bench:mesh -- ${process.argv.slice(2).join(' ')}\``.replace(/ -- `$/, '`'),
    '',
    `Machine: ${cpus().length} cores, ${(totalmem() / 1024 ** 3).toFixed(0)} GiB; load average at start ${load.map(x => x.toFixed(1)).join(' / ')}. Heartbeat ${args.heartbeatMs} ms (growing with the swarm to at most ${args.heartbeatMaxRate ?? 16} received per second per daemon; in one process at most ${args.processHeartbeatBudget ?? 400} / N), lease ${args.liveTimeoutMs} ms; ${args.perKind} claims and ${args.perKind} findings per setup, one every ${args.spacingMs} ms from a random node; each node bootstraps to ${args.bootstrap} random earlier nodes; every setup is left alone for ${((args.settleMs ?? 0) / 1000).toFixed(0)} s once up, then idle CPU is measured over ${(args.idleMs / 1000).toFixed(0)} s. Whole run: ${((performance.now() - started) / 1000).toFixed(0)} s; load average at the end ${loadavg()
      .map(x => x.toFixed(1))
      .join(' / ')}.`,
    '',
    "\"Visible at all peers\": from the publish call until the last other node accepted the entry (agency: its log accepted it, signature and chain checked; an own entry is published once it is durable on its author's disk, and the author answers then; raw: gossipsub delivered it). Over TCP the span ends by the node's own clock where it took the message in (agency: the entry's accepted_at, read from every daemon's log once the window is over, so nothing watches the daemons while they publish; raw: the time the node printed with the message). \"Gossip alone\" starts the span where the author sent the message, by its clock (agency: where it placed its entry, after the entry's durable write; raw: where the node published), leaving out the API call and the author's write as well. Both sides publish payloads of the same size with the same libp2p stack and gossipsub options (src/mesh/node.ts). CPU is the share of one core per node; CPU per delivery (TCP) is what the publishing window cost all nodes beyond their idle rate, per message and receiving peer, the comparison a loaded machine leaves fair.",
    ...results
      .filter(r => r.ackMs !== undefined)
      .map(
        r =>
          `\nagency, ${r.setup} × ${r.nodes}: the author answered the publish call (its entry gossiped and synced to disk) after p50 ${formatMs(r.ackMs?.p50)} / p99 ${formatMs(r.ackMs?.p99)} ms.`
      ),
    '',
    resultsMarkdown(results),
    'agency ÷ raw gossipsub:',
    '',
    ratioMarkdown(results),
    ...(joined.length > 0
      ? [
          'Late joiners (agency, processes, TCP loopback): daemons started into the swarm once its window is over, each bootstrapped to a few random daemons of it, until each holds every entry the swarm has (polled every 500 ms):',
          '',
          '| swarm | joiners | entries | per joiner p50 / p99 / max (s) | until all joiners had everything (s) | converged |',
          '|---:|---:|---:|---:|---:|---:|',
          ...joined.map(
            j =>
              `| ${j.nodes} | ${j.joiners} | ${j.entries} | ${j.p50.toFixed(1)} / ${j.p99.toFixed(1)} / ${j.max.toFixed(1)} | ${j.allSeconds.toFixed(1)} | ${j.converged} of ${j.joiners} |`
          ),
          ''
        ]
      : []),
    ...(notes.length > 0 ? ['Notes:', '', ...notes, ''] : [])
  ].join('\n')
  await mkdir(dirname(out), { recursive: true })
  await writeFile(out, md)
  process.stdout.write(md)
  log(`wrote ${out}`)
}

const done = (): never => process.exit(0)
const fail = (err: unknown): never => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`)
  process.exit(1)
}
if (process.argv.includes('--worker')) worker().then(done, fail)
else main().then(done, fail)
