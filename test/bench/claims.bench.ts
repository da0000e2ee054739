// npm run bench:claims — N agents start at once and each must end up holding a
// task of its own. agency: every agent calls `claim --next` over a persistent
// gRPC client to its own daemon (real daemons; the daemon picks by its own
// preference, skips tasks a peer's claim is settling on, and tries the next on
// LOST) and calls again until HELD. In the same run, the git lock-file
// baseline: a claim is a lock file committed in a clone of one shared bare
// repository and pushed; a rejected push fetches, resets and tries the first
// task without a lock again.
//
//   npm run build && npm run bench:claims -- --agents 8,16,64 [--tasks-per-agent 2]
//     [--processes-up-to 16] [--warmup-s 60] [--skip-git] [--out results]
//
// Up to --processes-up-to agents, each daemon is an agentd process (TCP on
// loopback, the gRPC API on 127.0.0.1); above it, the daemons run in this
// process over the libp2p memory transport, each with its own gRPC server on
// 127.0.0.1 (`--processes-up-to 64` runs 64 agentd processes, ~125 MiB and a
// start-up each). Prints, per N: time until every agent holds a distinct
// task, the claims written and calls made, the settle window, the daemons'
// CPU-seconds, their connections (median and most), and the same time for
// git lock files, with the ratio. A claim call that fails is made again.
// `--cpu-prof <dir>` profiles the daemons over the claims (in this process, or each daemon process with --daemons-per-process), written
// whether or not they all get to HELD. Writes <out>/bench-claims.md.
import './quiet-logs.js'
import '../../src/polyfill.js'
import { execFile } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import { Session } from 'node:inspector/promises'
import { connectAgency, type Agency } from '../../src/client/agency.js'
import { agencyHandlers, startGrpcServer, type GrpcServer } from '../../src/api/grpc-server.js'
import { Daemon } from '../../src/daemon/daemon.js'
import { ClaimOutcome, type AgencyClient, type ClaimReply } from '../../src/gen/agency/v1/api.js'
import { startLocalDaemon, type LocalDaemon } from '../../src/swarm/local-daemon.js'
import { inProcessHeartbeatRate } from './mesh-agency.js'
import { ClaimsTrace } from './claims-trace.js'
import { hostedSwarm } from './claims-hosts.js'
import { waitFor } from '../helpers/wait-for.js'

const run = promisify(execFile)

interface Args {
  agents: number[]
  tasksPerAgent: number
  processesUpTo: number
  warmupS: number
  skipGit: boolean
  out: string
  cpuProf: string
  trace: boolean
  perProcess: number
}

function parseArgs(argv: string[]): Args {
  const a: Args = {
    agents: [8, 16, 64],
    tasksPerAgent: 2,
    processesUpTo: 16,
    warmupS: 60,
    skipGit: false,
    out: 'results',
    cpuProf: '',
    trace: false,
    perProcess: 0
  }
  for (let i = 0; i < argv.length; i++) {
    const v = argv[i + 1]
    switch (argv[i]) {
      case '--agents':
        a.agents = (v ?? '').split(',').map(Number)
        i++
        break
      case '--tasks-per-agent':
        a.tasksPerAgent = Number(v)
        i++
        break
      case '--processes-up-to':
        a.processesUpTo = Number(v)
        i++
        break
      case '--warmup-s':
        a.warmupS = Number(v)
        i++
        break
      case '--skip-git':
        a.skipGit = true
        break
      case '--out':
        a.out = v ?? ''
        i++
        break
      case '--cpu-prof':
        a.cpuProf = v ?? ''
        i++
        break
      case '--trace':
        a.trace = true
        break
      case '--daemons-per-process':
        a.perProcess = Number(v)
        i++
        break
      default:
        throw new Error(`unknown argument ${argv[i]} (--agents 8,16,64 --tasks-per-agent 2 --processes-up-to 16 --skip-git --out results)`)
    }
  }
  if (a.agents.some(n => !Number.isSafeInteger(n) || n < 2)) throw new Error('--agents takes whole numbers of at least 2')
  if (!(a.tasksPerAgent >= 1)) throw new Error('--tasks-per-agent takes a number of at least 1')
  if (a.out === '') throw new Error('--out needs a folder')
  return a
}

/**
 * With a folder, profiles this process (the in-process daemons) over the
 * claims only, not the start-up: returns the function that stops and writes
 * the profile there.
 */
async function startProfile(dir: string): Promise<((file: string) => Promise<void>) | undefined> {
  if (dir === '') return undefined
  const session = new Session()
  session.connect()
  await session.post('Profiler.enable')
  await session.post('Profiler.start')
  return async file => {
    const { profile } = await session.post('Profiler.stop')
    session.disconnect()
    await mkdir(dir, { recursive: true })
    await writeFile(file, JSON.stringify(profile))
  }
}

/** A set-up call, tried again while the daemon is too busy to answer in time (64 daemons starting in one process). */
async function retrying<T>(what: string, call: () => Promise<T>, tries = 5): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await call()
    } catch (err) {
      if (i >= tries) throw new Error(`${what} failed ${tries} times: ${(err as Error).message}`, { cause: err })
      await sleep(2000)
    }
  }
}

interface Result {
  seconds: number
  /** claims written (agency) or pushes tried (git) */
  attempts: number
  /** calls the agents made (agency: claim --next calls) */
  calls: number
  /** the settle window the HELD answers waited, median (agency) */
  settleMs?: number
  /** HELD answers later outbid by a claim that arrived after the window (agency) */
  lateLosses?: number
  /** CPU-seconds the daemons used from the first claim until every agent was HELD (agency) */
  cpuSeconds?: number
  /** the 1-minute load average when the claims (or pushes) started */
  load: number
  /** connections per daemon when the claims were all HELD: median and most (agency) */
  connections?: { median: number; most: number }
}

interface Claimed {
  calls: number
  attempts: number
  last: ClaimReply
  at: number
}

/**
 * N daemons, ready to claim: each with a gRPC client; stop() ends them all.
 * The set-up checks (who sees whom live, log sizes) go over gRPC to agentd
 * processes, and straight to the objects of in-process daemons: 64 status
 * calls a second kept one busy process from starting. The claims always go
 * through the clients.
 */
interface Swarm {
  mode: string
  clients: Agency[]
  peerIds: string[]
  /** per daemon: how many peers it sees live, its log's size and its open connections */
  views: () => Promise<Array<{ live: number; entries: number; connections: number }>>
  /** per daemon, the ready tasks it shows */
  readyCounts: () => Promise<number[]>
  /** adds the tasks at the first daemon */
  addTasks: (tasks: string[]) => Promise<void>
  /** per daemon, not for agentd processes: its settle window now, and the p99 round trip it comes from */
  windows?: () => Promise<Array<{ settleMs: number; p99?: number }>>
  /** not for agentd processes: what the first daemon's log holds by kind, and the task states and live peers it sees */
  diagnose?: () => Promise<string>
  /**
   * not for agentd processes: the per-agent timestamps of the claims (--trace); start before the first call, collect after the last answer
   */
  trace?: { t: ClaimsTrace; start: () => Promise<void>; collect: () => Promise<void> }
  /** CPU-seconds the daemons have used so far (user + system) */
  cpuSeconds: () => Promise<number>
  /**
   * daemons in other processes (--daemons-per-process): profiles each of those from now; the function returned writes
   * <dir>/<name>-<process>.cpuprofile
   */
  profile?: () => Promise<(dir: string, name: string) => Promise<void>>
  stop: () => Promise<void>
}

/** user + system CPU-seconds of a process, from /proc/<pid>/stat (clock ticks of 1/100 s). */
async function processCpuSeconds(pid: number | undefined): Promise<number> {
  if (pid === undefined) return 0
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return 0
  }
}

function ownCpuSeconds(): number {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1e6
}

function taskOf(id: string): { id: string; title: string; description: string; deps: string[]; scope: string[]; priority: number } {
  return { id, title: id, description: '', deps: [], scope: [`src/${id}/**`], priority: 0 }
}

async function viewsOver(clients: Agency[]): Promise<Array<{ live: number; entries: number; connections: number }>> {
  const s = await Promise.all(clients.map(async c => await c.call((x: AgencyClient) => x.getStatus, {})))
  return s.map(r => ({ live: r.peersLive, entries: r.logEntries, connections: r.peersConnected }))
}

/** Connections per daemon: the median and the most any daemon holds. */
function connectionSpread(views: Array<{ connections: number }>): { median: number; most: number } {
  const c = views.map(v => v.connections).sort((x, y) => x - y)
  return { median: c[c.length >> 1], most: c[c.length - 1] }
}

async function processSwarm(n: number, root: string): Promise<Swarm> {
  const daemons: LocalDaemon[] = []
  const swarm = `claims-${randomUUID().slice(0, 8)}`
  try {
    for (let i = 0; i < n; i++) {
      const peers = daemons.length === 0 ? [] : [daemons[0].addrs[0], daemons[Math.floor(Math.random() * daemons.length)].addrs[0]]
      daemons.push(
        await startLocalDaemon({
          name: `a${i}`,
          dataDir: join(root, `a${i}`),
          peers: [...new Set(peers)],
          extraArgs: ['--swarm', swarm],
          startTimeoutMs: 120_000
        })
      )
    }
  } catch (err) {
    await Promise.allSettled(daemons.map(async d => await d.stop()))
    throw err
  }
  const clients = daemons.map(d => connectAgency(d.grpc))
  return {
    mode: `${n} agentd processes, TCP on loopback`,
    clients,
    peerIds: daemons.map(d => d.peerId),
    views: async () => await viewsOver(clients),
    readyCounts: async () =>
      (await Promise.all(clients.map(async c => await c.call((x: AgencyClient) => x.ready, {})))).map(r => r.tasks.length),
    // Tried again if the call went unanswered, unless the tasks got in after all.
    addTasks: async tasks => {
      await retrying('adding the tasks', async () => {
        if ((await clients[0].call((x: AgencyClient) => x.ready, {}, 60_000)).tasks.length === tasks.length) return
        await clients[0].call((x: AgencyClient) => x.addTasks, { tasks: tasks.map(taskOf) }, 60_000)
      })
    },
    cpuSeconds: async () => (await Promise.all(daemons.map(async d => await processCpuSeconds(d.child.pid)))).reduce((x, y) => x + y, 0),
    stop: async () => {
      for (const c of clients) c.close()
      await Promise.allSettled(daemons.map(async d => await d.stop()))
    }
  }
}

async function inProcessSwarm(n: number, root: string, trace: boolean): Promise<Swarm> {
  const daemons: Daemon[] = []
  const servers: GrpcServer[] = []
  const addrs = Array.from({ length: n }, (_, i) => `/memory/claims-bench-${randomUUID()}-${i}`)
  const stop = async (): Promise<void> => {
    await Promise.allSettled(
      servers.map(async s => {
        await s.close()
      })
    )
    await Promise.allSettled(
      daemons.map(async d => {
        await d.stop()
      })
    )
  }
  try {
    for (let b = 0; b < n; b += 8) {
      await Promise.all(
        addrs.slice(b, b + 8).map(async (listen, k) => {
          const i = b + k
          const peers = i === 0 ? [] : [...new Set([addrs[0], addrs[Math.floor(Math.random() * i)]])]
          const d = new Daemon({
            dataDir: join(root, `a${i}`),
            name: `a${i}`,
            listen: [listen],
            peers,
            grpc: null,
            metrics: null,
            processMetrics: false,
            heartbeatMaxRate: inProcessHeartbeatRate(n, {})
          })
          await d.start()
          daemons[i] = d
          servers[i] = await startGrpcServer('127.0.0.1:0', agencyHandlers(d))
        })
      )
    }
  } catch (err) {
    await stop()
    throw err
  }
  const clients = servers.map(s => connectAgency(s.address))
  return {
    mode: `${n} daemons in one process (libp2p memory transport, the swarm's heartbeats at most ${inProcessHeartbeatRate(n, {})}/s), a gRPC server each on 127.0.0.1`,
    clients,
    peerIds: daemons.map(d => d.peerId),
    views: async () =>
      daemons.map(d => ({ live: d.peers(false).length, entries: d.logService.state.size, connections: d.node.getConnections().length })),
    // Straight to the objects: 128 appends through one busy process outlast any deadline a call would have.
    readyCounts: async () => daemons.map(d => d.boardService.board.ready(d.boardService.now()).length),
    addTasks: async tasks => {
      await daemons[0].boardService.addTasks(tasks.map(taskOf))
    },
    windows: async () => daemons.map(d => ({ settleMs: d.boardService.settleMs(), p99: d.boardService.settle.p99(d.boardService.now()) })),
    cpuSeconds: async () => ownCpuSeconds(),
    ...(trace ? { trace: inProcessTrace(new ClaimsTrace(daemons)) } : {}),
    diagnose: async () => {
      const d = daemons[0]
      const now = d.boardService.now()
      const states = new Map<string, number>()
      for (const t of d.boardService.board.tasks(now)) states.set(t.state, (states.get(t.state) ?? 0) + 1)
      const live = daemons.map(x => x.peers(false).length).sort((x, y) => x - y)
      const conns = connectionSpread(daemons.map(x => ({ connections: x.node.getConnections().length })))
      // Answered in the protocol (HELD at the daemon) against HELD at the clients: where an answer waits.
      const mine = daemons.map(x => x.boardService.protocol.mine())
      const settled = mine.filter(m => m.some(c => c.settled && c.done !== true)).length
      const settling = mine.filter(m => m.some(c => !c.settled)).length
      return `log ${[...d.logService.state.countsByKind()].map(([k, c]) => `${k} ${c}`).join(', ')}; tasks ${[...states].map(([k, c]) => `${k} ${c}`).join(', ')}; live peers fewest ${live[0]}; connections median ${conns.median}, most ${conns.most}; daemons with a claim settled ${settled}, settling ${settling}`
    },
    stop: async () => {
      for (const c of clients) c.close()
      await stop()
    }
  }
}

function inProcessTrace(t: ClaimsTrace): NonNullable<Swarm['trace']> {
  return {
    t,
    start: async () => {
      t.start()
    },
    collect: async () => {}
  }
}

async function agencyRun(n: number, tasks: string[], a: Args, log: (s: string) => void): Promise<Result & { mode: string }> {
  const root = await mkdtemp(join(tmpdir(), 'agency-bench-claims-'))
  const started = performance.now()
  const swarm =
    n <= a.processesUpTo
      ? await processSwarm(n, root)
      : a.perProcess > 0
        ? await hostedSwarm(n, root, a.perProcess, a.trace)
        : await inProcessSwarm(n, root, a.trace)
  try {
    const { clients } = swarm
    log(`    agency: ${swarm.mode}, started in ${((performance.now() - started) / 1000).toFixed(0)} s`)
    let seen = ''
    await waitFor(
      async () => {
        const views = await swarm.views()
        const live = views.map(v => v.live).sort((x, y) => x - y)
        const conns = connectionSpread(views)
        const now = `fewest ${live[0]}, median ${live[live.length >> 1]} (connections per daemon: median ${conns.median}, most ${conns.most})`
        if (now !== seen) log(`    peers live: ${(seen = now)}`)
        return live[0] >= n - 1
      },
      { what: `every daemon to see ${n - 1} live peers`, timeoutMs: 600_000, intervalMs: 1000 }
    )
    await swarm.addTasks(tasks)
    await waitFor(async () => (await swarm.readyCounts()).every(c => c === tasks.length), {
      what: 'the tasks on every board',
      timeoutMs: 600_000,
      intervalMs: 1000
    })
    // Round trips to peers set the settle window (3 x their p99, over the
    // last minute's samples, or the newest 8): the round trips timed while
    // the daemons were starting are slow; after a minute they no longer count.
    const idle0 = { cpu: await swarm.cpuSeconds(), at: performance.now() }
    await sleep(a.warmupS * 1000)
    const idleRate = ((await swarm.cpuSeconds()) - idle0.cpu) / ((performance.now() - idle0.at) / 1000)
    log(`    the daemons' CPU while idle (the warm-up): ${idleRate.toFixed(2)} CPU-s a second`)
    const load = loadavg()[0]
    log(
      `    load average when the claims start: ${loadavg()
        .map(x => x.toFixed(1))
        .join(' ')}`
    )
    const hostsProfiled = a.cpuProf !== '' && swarm.profile !== undefined ? await swarm.profile() : undefined
    const profiler =
      hostsProfiled !== undefined
        ? async () => {
            await hostsProfiled(a.cpuProf, `claims-${n}`)
          }
        : await startProfile(a.cpuProf)
    const cpu0 = await swarm.cpuSeconds()
    await swarm.trace?.start()
    const t0 = performance.now()
    let failedCalls = 0
    const claimUntilHeld = async (c: Agency, i: number): Promise<Claimed> => {
      let calls = 0
      let attempts = 0
      let last: ClaimReply | undefined
      while (calls < 20) {
        calls++
        swarm.trace?.t.call(i)
        try {
          last = await c.call((x: AgencyClient) => x.claim, { task: '', scope: [], noWait: false, next: true }, 300_000)
        } catch (err) {
          // A call that went unanswered (a daemon too busy): the agent calls
          // again, as the prompt says; the daemon answers with the claim it
          // is settling on or holds, writing none.
          failedCalls++
          log(`    a claim call failed (${(err as Error).message.slice(0, 120)}): calling again`)
          continue
        }
        attempts += last.attempts
        if (last.outcome === ClaimOutcome.CLAIM_HELD) break
        if (last.outcome === ClaimOutcome.CLAIM_NONE_READY) await sleep(100)
      }
      if (last?.outcome !== ClaimOutcome.CLAIM_HELD) throw new Error(`agency: an agent is not HELD after ${calls} calls`)
      swarm.trace?.t.received(i)
      return { calls, attempts, last, at: performance.now() }
    }
    let heldCount = 0
    const progress = setInterval(() => {
      void (async () => {
        const w = (await swarm.windows?.())?.map(x => x.settleMs).sort((x, y) => x - y)
        const d = await swarm.diagnose?.()
        log(
          `    ${((performance.now() - t0) / 1000).toFixed(0)} s: ${heldCount} of ${n} HELD${w === undefined ? '' : `, settle windows now ${w[0].toFixed(0)} to ${w[w.length - 1].toFixed(0)} ms (median ${w[w.length >> 1].toFixed(0)})`}${d === undefined ? '' : `; ${d}`}`
        )
      })().catch(() => {})
    }, 10_000)
    // The profile is written whether or not every agent got to HELD: a burst that does not get through is the one to look at.
    const answers = await Promise.all(
      clients.map(async (c, i) => {
        const x = await claimUntilHeld(c, i)
        heldCount++
        return x
      })
    ).finally(async () => {
      clearInterval(progress)
      await profiler?.(join(a.cpuProf, `claims-${n}.cpuprofile`))
    })
    const cpuSeconds = (await swarm.cpuSeconds()) - cpu0
    if (swarm.trace !== undefined) {
      await swarm.trace.collect()
      log(
        `    where the time went (ms from the first call):\n${swarm.trace.t.summary()}${process.env.BENCH_CLAIMS_DEBUG === '1' ? `\n      per agent: call, written, window end, protocol HELD, append resolved, daemon answered, client HELD\n${swarm.trace.t.rows()}` : ''}`
      )
    }
    if (failedCalls > 0) log(`    ${failedCalls} claim calls failed and were made again`)
    const connections = connectionSpread(await swarm.views())
    if (process.env.BENCH_CLAIMS_DEBUG === '1')
      log(answers.map(x => `${((x.at - t0) / 1000).toFixed(2)}s/${x.attempts}/${x.last.settleMs.toFixed(0)}`).join(' '))
    // A HELD stands unless a competing claim arrived after the settle window
    // (gossip slower than the window): then the boards give the task to the
    // other claim, the agent is told (claim_lost) and claims again. Check on
    // the converged boards, and send those agents round again.
    let lateLosses = 0
    for (let round = 0; ; round++) {
      await waitFor(
        async () => {
          const s = await swarm.views()
          return s.every(r => r.entries === s[0].entries)
        },
        { what: 'every log to hold the same entries', timeoutMs: 300_000, intervalMs: 1000 }
      )
      const { tasks: view } = await clients[0].call((x: AgencyClient) => x.listTasks, { state: '' })
      const holder = new Map(view.map(t => [t.id, t.holder]))
      const lost = answers.map((x, i) => (holder.get(x.last.task) === swarm.peerIds[i] ? -1 : i)).filter(i => i >= 0)
      if (lost.length === 0) break
      if (round === 5) throw new Error(`agency: ${lost.length} agents still hold no task of their own`)
      lateLosses += lost.length
      log(`    ${lost.length} HELD answers were outbid by a claim that arrived after the window: claiming again`)
      await Promise.all(
        lost.map(async i => {
          const again = await claimUntilHeld(clients[i], i)
          answers[i] = { ...again, calls: answers[i].calls + again.calls, attempts: answers[i].attempts + again.attempts }
        })
      )
    }
    const seconds = (Math.max(...answers.map(x => x.at)) - t0) / 1000
    const distinct = new Set(answers.map(x => x.last.task)).size
    if (distinct !== n) throw new Error(`agency: ${distinct} distinct tasks for ${n} agents`)
    const settle = answers.map(x => x.last.settleMs).sort((x, y) => x - y)
    return {
      mode: swarm.mode,
      seconds,
      attempts: answers.reduce((s, x) => s + x.attempts, 0),
      calls: answers.reduce((s, x) => s + x.calls, 0),
      settleMs: settle[Math.floor(settle.length / 2)],
      lateLosses,
      cpuSeconds,
      load,
      connections
    }
  } finally {
    await swarm.stop()
    await rm(root, { recursive: true, force: true })
  }
}

async function git(cwd: string, ...args: string[]): Promise<string> {
  return (await run('git', args, { cwd, maxBuffer: 1 << 24 })).stdout
}

/**
 * The git lock-file baseline: each agent takes the first task without a lock file, commits the lock, pushes; a rejected push resets and
 * tries again.
 */
async function gitRun(n: number, tasks: string[]): Promise<Result> {
  const root = await mkdtemp(join(tmpdir(), 'agency-bench-gitlocks-'))
  try {
    const bare = join(root, 'shared.git')
    await run('git', ['init', '-q', '--bare', '-b', 'main', bare])
    const seed = join(root, 'seed')
    await run('git', ['clone', '-q', bare, seed])
    await writeFile(join(seed, 'tasks.txt'), tasks.join('\n') + '\n')
    await mkdir(join(seed, 'locks'))
    await writeFile(join(seed, 'locks', '.keep'), '')
    await git(seed, '-c', 'user.name=seed', '-c', 'user.email=seed@example.invalid', 'add', '-A')
    await git(seed, '-c', 'user.name=seed', '-c', 'user.email=seed@example.invalid', 'commit', '-q', '-m', 'tasks')
    await git(seed, 'push', '-q', 'origin', 'HEAD:main')
    const clones = await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const dir = join(root, `agent-${i}`)
        await run('git', ['clone', '-q', bare, dir])
        await git(dir, 'config', 'user.name', `agent-${i}`)
        await git(dir, 'config', 'user.email', `agent-${i}@example.invalid`)
        return dir
      })
    )
    const load = loadavg()[0]
    const t0 = performance.now()
    const results = await Promise.all(
      clones.map(async (dir, i) => {
        let pushes = 0
        for (;;) {
          await git(dir, 'fetch', '-q', 'origin')
          await git(dir, 'reset', '-q', '--hard', 'origin/main')
          const locked = new Set(await readdir(join(dir, 'locks')))
          const task = tasks.find(t => !locked.has(t))
          if (task === undefined) throw new Error(`git: agent ${i} found every task locked`)
          await writeFile(join(dir, 'locks', task), `agent-${i}\n`)
          await git(dir, 'add', '-A')
          await git(dir, 'commit', '-q', '-m', `claim ${task}`)
          pushes++
          try {
            await git(dir, 'push', '-q', 'origin', 'HEAD:main')
            return { task, pushes, at: performance.now() }
          } catch {
            // rejected: someone pushed first; fetch and try again
          }
        }
      })
    )
    const distinct = new Set(results.map(r => r.task)).size
    if (distinct !== n) throw new Error(`git: ${distinct} distinct tasks for ${n} agents`)
    return {
      seconds: (Math.max(...results.map(r => r.at)) - t0) / 1000,
      attempts: results.reduce((s, r) => s + r.pushes, 0),
      calls: results.reduce((s, r) => s + r.pushes, 0),
      load
    }
  } finally {
    await rm(root, { recursive: true, force: true })
  }
}

async function main(): Promise<void> {
  const a = parseArgs(process.argv.slice(2))
  const log = (s: string): void => {
    process.stdout.write(s + '\n')
  }
  const rows: string[] = []
  log(`bench:claims: agents ${a.agents.join(', ')}, ${a.tasksPerAgent} tasks per agent, processes up to ${a.processesUpTo} agents`)
  for (const n of a.agents) {
    const tasks = Array.from({ length: Math.ceil(n * a.tasksPerAgent) }, (_, i) => `task-${String(i).padStart(4, '0')}`)
    log(`  ${n} agents, ${tasks.length} tasks`)
    const g = a.skipGit ? undefined : await gitRun(n, tasks)
    if (g !== undefined) log(`    git lock files: ${g.seconds.toFixed(2)} s, ${g.attempts} pushes (load ${g.load.toFixed(1)})`)
    let ag: Result & { mode: string }
    try {
      ag = await agencyRun(n, tasks, a, log)
    } catch (err) {
      // One size that this machine cannot hold leaves the others' figures standing.
      log(`    agency: not measured: ${(err as Error).message}`)
      rows.push(
        `| ${n} | ${tasks.length} | ${n <= a.processesUpTo ? `${n} agentd processes` : a.perProcess > 0 ? `${n} daemons in ${Math.ceil(n / a.perProcess)} processes` : `${n} daemons in one process`} | not measured: ${(err as Error).message.replace(/\|/g, '/')} | — | — | — | — | ${g === undefined ? '—' : `${g.seconds.toFixed(2)} s`} | ${g === undefined ? '—' : `${g.attempts} pushes`} | — | ${loadavg()[0].toFixed(1)} |`
      )
      await writeTable(a, rows)
      continue
    }
    log(
      `    agency claim --next: ${ag.seconds.toFixed(2)} s, ${ag.attempts} claims in ${ag.calls} calls, settle window ${ag.settleMs?.toFixed(0)} ms, ${ag.lateLosses ?? 0} HELD answers outbid later, daemons' CPU ${ag.cpuSeconds?.toFixed(1)} s, connections per daemon median ${ag.connections?.median}, most ${ag.connections?.most} (load ${ag.load.toFixed(1)})`
    )
    const ratio = g === undefined ? '' : `${(g.seconds / ag.seconds).toFixed(1)}x`
    if (ratio !== '') log(`    git / agency: ${ratio}`)
    rows.push(
      `| ${n} | ${tasks.length} | ${ag.mode} | ${ag.seconds.toFixed(2)} s | ${ag.attempts} claims, ${ag.calls} calls${(ag.lateLosses ?? 0) > 0 ? `, ${ag.lateLosses} HELD outbid later` : ''} | ${ag.settleMs?.toFixed(0) ?? ''} ms | ${ag.cpuSeconds?.toFixed(1) ?? ''} s | ${ag.connections === undefined ? '' : `${ag.connections.median} / ${ag.connections.most}`} | ${g === undefined ? '—' : `${g.seconds.toFixed(2)} s`} | ${g === undefined ? '—' : `${g.attempts} pushes`} | ${ratio === '' ? '—' : ratio} | ${ag.load.toFixed(1)}${g === undefined ? '' : ` / ${g.load.toFixed(1)}`} |`
    )
    await writeTable(a, rows)
  }
}

async function writeTable(a: Args, rows: string[]): Promise<void> {
  const table = [
    '| agents | tasks | agency daemons | agency: every agent HELD a distinct task | agency attempts | settle window (median) | CPU-seconds of the daemons during the claims | connections per daemon (median / most) | git lock files | git attempts | git / agency | load average (agency / git) |',
    '|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows
  ].join('\n')
  process.stdout.write('\n' + table + '\n')
  await mkdir(a.out, { recursive: true })
  await writeFile(
    join(a.out, 'bench-claims.md'),
    `# bench:claims\n\n\`npm run bench:claims -- --agents ${a.agents.join(',')} --tasks-per-agent ${a.tasksPerAgent} --processes-up-to ${a.processesUpTo} --warmup-s ${a.warmupS}\`, ${new Date().toISOString()}\n\n${table}\n`
  )
}

main().then(
  () => {
    process.exit(0)
  },
  err => {
    process.stderr.write(`bench:claims failed: ${(err as Error).stack ?? String(err)}\n`)
    process.exit(1)
  }
)
