// One schedule of the real-process campaign: a test bed of network hosts
// (one agentd and one scripted agent on each, the shared repository served
// over git:// by a host of its own), a project with contention, the nemesis
// playing the schedule, then everything healed and quiet until the replicas
// converge; the end is read and the history handed to the fault checks.
import { execFile, type ChildProcess } from 'node:child_process'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { connectAgency, type Agency } from '../../src/client/agency.js'
import { SETTLE_DEFAULTS } from '../../src/core/board/settle.js'
import type { AgencyClient } from '../../src/gen/agency/v1/api.js'
import { checkRun, type Violation } from '../../src/sim/faults/checks.js'
import { History } from '../../src/sim/faults/history.js'
import type { RunRecord } from '../../src/sim/faults/run-record.js'
import { Testbed, type HostDaemon } from '../scenarios/multi-host/testbed.js'
import { envWithoutAgency } from '../helpers/agency-free-env.js'
import { RealAgent } from './real-agent.js'
import { Nemesis } from './real-nemesis.js'
import { buildRecord, readLandings, readReplica, type ReplicaRead } from './real-record.js'
import { seeded, type RealFault, type RealSchedule } from './real-schedule.js'

const run = promisify(execFile)
const sleep = async (ms: number): Promise<void> => {
  await new Promise(resolve => setTimeout(resolve, ms))
}

/** The daemons' timing: short leases, so a run of a minute sees takeovers. */
const FLAGS = ['--heartbeat-ms', '400', '--live-timeout-ms', '3000', '--wip-push', '0']
/** Each daemon's data dir is a tmpfs this big: a full disk is one file away. */
const DISK_SIZE = '64m'
/** How long the healed swarm may take to converge before the replicas are read anyway. */
const CONVERGE_TIMEOUT_MS = 120_000
/** How long, after that, an agent may still be waiting to be told its claim was lost (a settle window is at most 10 s). */
const TOLD_TIMEOUT_MS = 60_000

/** The project: more agents than ready tasks, scopes that overlap, a few dependencies. */
export const PROJECT = [
  { id: 't1', scope: ['src/core/**'], deps: [] },
  { id: 't2', scope: ['src/core/board/**'], deps: [] },
  { id: 't3', scope: ['src/api/**'], deps: [] },
  { id: 't4', scope: ['src/core/log/**'], deps: ['t1'] },
  { id: 't5', scope: ['src/api/**', 'src/core/board/**'], deps: ['t2'] },
  { id: 't6', scope: ['docs/**'], deps: ['t3'] },
  { id: 't7', scope: ['src/**'], deps: ['t4', 't5'] },
  { id: 't8', scope: ['docs/**', 'src/api/**'], deps: ['t6'] }
]

export interface RealRunOptions {
  /** run against daemons with this safeguard off (AGENCY_TEST_BREAK) */
  breakSafeguard?: 'settle' | 'fence'
  log?: (line: string) => void
}

export interface RealRunResult {
  record: RunRecord
  violations: Violation[]
  /** fault kinds the nemesis applied, with counts */
  applied: Map<string, number>
  /** daemons that exited on their own (a full disk), by node */
  exits: string[]
  /** calls that failed or were cut off, by why */
  errors: Map<string, number>
  converged: boolean
  wallMs: number
}

interface Host {
  k: number
  name: string
  dataDir: string
  daemon?: HostDaemon
  agent?: RealAgent
  state: 'up' | 'paused' | 'down' | 'starting'
  /** the next exit is the nemesis's doing */
  expectExit: boolean
}

export async function runRealSchedule(s: RealSchedule, o: RealRunOptions = {}): Promise<RealRunResult> {
  const started = Date.now()
  const say = o.log ?? (() => {})
  const bed = await Testbed.create()
  const mounts: string[] = []
  const clients: Agency[] = []
  let gitd: ChildProcess | undefined
  const hosts: Host[] = []
  try {
    const repoHost = s.hosts + 1
    for (let k = 1; k <= repoHost; k++) await bed.addHost(k)
    const served = join(bed.root, 'served')
    await seedRepo(bed.root, served)
    gitd = bed.spawnIn(
      repoHost,
      'git',
      [
        'daemon',
        '--reuseaddr',
        `--base-path=${served}`,
        '--export-all',
        '--enable=receive-pack',
        `--listen=${bed.ip(repoHost)}`,
        '--port=9418',
        served
      ],
      { stdout: 'ignore' }
    )
    const remote = `git://${bed.ip(repoHost)}/shared.git`
    for (let k = 1; k <= s.hosts; k++) {
      const disk = join(bed.root, `disk${k}`)
      await mkdir(disk, { recursive: true })
      await run('mount', ['-t', 'tmpfs', '-o', `size=${DISK_SIZE}`, 'tmpfs', disk])
      mounts.push(disk)
      await writeFile(join(bed.root, `clock${k}`), '0\n')
      hosts.push({ k, name: `host${k}`, dataDir: join(disk, 'data'), state: 'down', expectExit: false })
    }
    const env = {
      ...envWithoutAgency(),
      AGENCY_LOG_LEVEL: 'warn',
      AGENCY_TEST_FAULTS: '1',
      ...(o.breakSafeguard != null ? { AGENCY_TEST_BREAK: o.breakSafeguard } : {})
    }
    const names = hosts.map(h => h.name)
    const peerNames = new Map<string, string>()
    const nameOf = (peer: string): string => peerNames.get(peer) ?? peer
    const peerOf = (node: string): string => hosts.find(h => h.name === node)?.daemon?.peerId ?? node

    const history = new History()
    let t0 = Date.now()
    const now = (): number => Date.now() - t0
    const exits: string[] = []
    const random = seeded(s.seed ^ 0x5eed)

    const start = async (h: Host): Promise<void> => {
      const peers = hosts.filter(x => x !== h && x.daemon != null).flatMap(x => x.daemon!.addrs)
      const d = await bed.startAgentd(h.k, {
        dataDir: h.dataDir,
        peers,
        extraArgs: [...FLAGS, '--repo', remote, '--verify', 'true', '--mirror-dir', join(bed.root, `mirror${h.k}`)],
        env: { ...env, AGENCY_TEST_CLOCK_FILE: join(bed.root, `clock${h.k}`) }
      })
      h.daemon = d
      h.state = 'up'
      h.expectExit = false
      peerNames.set(d.peerId, h.name)
      d.child.once('exit', () => {
        if (h.daemon !== d) return
        h.state = 'down'
        if (h.expectExit) return
        // The daemon stopped on its own (it could not write its data dir): a crash, as the checks see it.
        exits.push(h.name)
        history.add({ kind: 'nemesis', time: now(), f: 'crash', node: h.name })
        h.agent?.crash()
        say(`  ${h.name} exited on its own at ${now()} ms`)
      })
    }
    for (const h of hosts) await start(h)
    const first = connectAgency(hosts[0].daemon!.grpc)
    clients.push(first)
    await first.call((c: AgencyClient) => c.addTasks, {
      tasks: PROJECT.map(t => ({ id: t.id, title: `task ${t.id}`, description: '', deps: t.deps, scope: t.scope, priority: 0 }))
    })
    for (const h of hosts) {
      const api = connectAgency(h.daemon!.grpc)
      clients.push(api)
      await until(`${h.name} to see the project and its peers`, 120_000, async () => {
        const { tasks } = await api.call((c: AgencyClient) => c.listTasks, { state: '' })
        const { peers } = await api.call((c: AgencyClient) => c.listPeers, { includeOffline: false })
        return tasks.length === PROJECT.length && peers.length >= hosts.length - 1
      })
    }

    const nemesis = new Nemesis({
      bed,
      history,
      now,
      hosts: hosts.map(h => h.k),
      repoHost,
      name: k => `host${k}`,
      diskOf: k => join(bed.root, `disk${k}`),
      clockFileOf: k => join(bed.root, `clock${k}`)
    })
    const restart = async (h: Host): Promise<void> => {
      if (h.state !== 'down') return
      h.state = 'starting'
      try {
        await start(h)
      } catch (err) {
        h.state = 'down'
        say(`  ${h.name} did not restart: ${(err as Error).message.split('\n')[0]}`)
        return
      }
      history.add({ kind: 'nemesis', time: now(), f: 'restart', node: h.name })
      h.agent?.start()
    }
    // A daemon takes seconds to start on a busy machine: the nemesis goes on meanwhile.
    const restarting = new Set<Promise<void>>()
    const inBackground = (p: Promise<void>): void => {
      restarting.add(p)
      void p.finally(() => restarting.delete(p))
    }
    const acts = new Map<RealFault, { apply: () => Promise<void>; revert: () => Promise<void> }>()
    let partitionedBy: RealFault | undefined
    const hostOf = (f: RealFault): Host => hosts[(f.host ?? 1) - 1]
    for (const f of s.faults) {
      const h = hostOf(f)
      switch (f.kind) {
        case 'partition':
        case 'bridge':
        case 'isolate': {
          const groups =
            f.kind === 'isolate'
              ? [[f.host ?? 1]]
              : f.kind === 'bridge'
                ? [
                    [...f.groups![0], ...f.groups![2]],
                    [...f.groups![1], ...f.groups![2]]
                  ]
                : f.groups!
          acts.set(f, {
            apply: async () => {
              partitionedBy = f
              await nemesis.partition(groups, f.kind)
            },
            revert: async () => {
              if (partitionedBy === f) {
                partitionedBy = undefined
                await nemesis.heal()
              }
            }
          })
          break
        }
        case 'kill':
          acts.set(f, {
            apply: async () => {
              if (h.state === 'down' || h.daemon == null) return
              h.expectExit = true
              nemesis.signal(h.daemon.child.pid!, 'SIGKILL')
              await new Promise<void>(resolve => {
                if (h.daemon!.child.exitCode != null || h.daemon!.child.signalCode != null) resolve()
                else
                  h.daemon!.child.once('exit', () => {
                    resolve()
                  })
              })
              h.state = 'down'
              history.add({ kind: 'nemesis', time: now(), f: 'crash', node: h.name })
              h.agent?.crash()
              nemesis.applied.set('kill', (nemesis.applied.get('kill') ?? 0) + 1)
            },
            revert: async () => {
              inBackground(restart(h))
            }
          })
          break
        case 'pause':
          acts.set(f, {
            apply: async () => {
              if (h.state !== 'up') return
              nemesis.signal(h.daemon!.child.pid!, 'SIGSTOP')
              h.state = 'paused'
              history.add({ kind: 'nemesis', time: now(), f: 'pause', node: h.name })
              nemesis.applied.set('pause', (nemesis.applied.get('pause') ?? 0) + 1)
            },
            revert: async () => {
              if (h.state !== 'paused') return
              nemesis.signal(h.daemon!.child.pid!, 'SIGCONT')
              h.state = 'up'
              history.add({ kind: 'nemesis', time: now(), f: 'resume', node: h.name })
            }
          })
          break
        case 'clock':
          acts.set(f, {
            apply: async () => {
              await nemesis.clock(h.k, f.offsetMs ?? 0)
            },
            revert: async () => {
              await nemesis.clock(h.k, 0)
            }
          })
          break
        case 'disk':
          acts.set(f, {
            apply: async () => {
              await nemesis.diskFull(h.k)
            },
            revert: async () => {
              await nemesis.diskFree(h.k)
              inBackground(restart(h))
            }
          })
          break
        case 'slow':
          acts.set(f, {
            apply: async () => {
              await nemesis.slow(h.k)
            },
            revert: async () => {
              await nemesis.fast(h.k)
            }
          })
          break
        case 'remote-slow':
          acts.set(f, {
            apply: async () => {
              await nemesis.remoteSlow()
            },
            revert: async () => {
              await nemesis.remoteHeal()
            }
          })
          break
        case 'remote-cut':
          acts.set(f, {
            apply: async () => {
              await nemesis.remoteCut()
            },
            revert: async () => {
              await nemesis.remoteHeal()
            }
          })
          break
      }
    }
    // The nemesis acts one thing at a time, in the order of the schedule.
    const timeline = s.faults
      .flatMap(f => [
        { at: f.at, act: acts.get(f)!.apply, f, what: 'apply' },
        { at: f.until, act: acts.get(f)!.revert, f, what: 'revert' }
      ])
      .sort((a, b) => a.at - b.at)

    t0 = Date.now()
    for (const h of hosts) {
      h.agent = new RealAgent({
        node: h.name,
        grpc: h.daemon!.grpc,
        history,
        now,
        random: seeded(Math.floor(random() * 2 ** 32)),
        names,
        nameOf
      })
      h.agent.start()
    }
    for (const step of timeline) {
      if (step.at > now()) await sleep(step.at - now())
      await step.act().catch(err => {
        say(`  ${step.f.kind} ${step.what}: ${(err as Error).message.split('\n')[0]}`)
      })
    }
    if (s.activeMs > now()) await sleep(s.activeMs - now())

    // The end of the faults: everything heals, every daemon is up again, the agents stop.
    history.add({ kind: 'nemesis', time: now(), f: 'quiet' })
    await nemesis.quiet()
    await Promise.all([...restarting])
    for (const h of hosts) {
      if (h.state === 'paused') {
        nemesis.signal(h.daemon!.child.pid!, 'SIGCONT')
        h.state = 'up'
        history.add({ kind: 'nemesis', time: now(), f: 'resume', node: h.name })
      }
    }
    for (const h of hosts) await restart(h)
    await Promise.all(
      hosts.map(async h => {
        await h.agent?.freeze()
      })
    )

    const apis = hosts.map(h => {
      const a = connectAgency(h.daemon!.grpc)
      clients.push(a)
      return a
    })
    const sent = history.pairs().filter(p => p.invoke.f === 'send' && p.complete.type === 'ok')
    const converged = await until('the replicas to converge', CONVERGE_TIMEOUT_MS, async () => {
      const infos = await Promise.all(apis.map(async a => await a.call((c: AgencyClient) => c.logInfo, {}, 10_000)))
      if (new Set(infos.map(i => i.vectorDigest)).size !== 1) return false
      const inboxes = await Promise.all(
        apis.map(async (a, i) => ({
          node: hosts[i].name,
          ids: new Set(
            (await a.call((c: AgencyClient) => c.readInbox, { after: 0, limit: 10_000, all: true, peek: true })).messages.map(m => m.id)
          )
        }))
      )
      return sent.every(p => inboxes.find(x => x.node === p.invoke.to)?.ids.has(p.complete.id ?? '') === true)
    }).then(
      () => true,
      err => {
        say(`  ${(err as Error).message}`)
        return false
      }
    )

    // A daemon tells its agent of a lost claim once the loss has lasted a settle window (core/board/claim-protocol.ts):
    // read the end again until no agent is still to be told, or the deadline passes (then the check says so).
    const readEnd = async (): Promise<{ record: RunRecord; violations: Violation[] }> => {
      const replicas: ReplicaRead[] = []
      for (const [i, h] of hosts.entries()) {
        const r = await readReplica(h.name, h.daemon!.peerId, apis[i], nameOf).catch(err => {
          say(`  cannot read ${h.name}: ${(err as Error).message}`)
          return undefined
        })
        replicas.push(r ?? { node: h.name, peerId: h.daemon?.peerId ?? '', up: false, log: [], board: [], inbox: [] })
      }
      const landings = await readLandings(join(served, 'shared.git'), 'main')
      const record = buildRecord({
        history,
        replicas,
        down: new Set(hosts.filter(h => h.state !== 'up').map(h => h.name)),
        landings,
        nameOf,
        peerOf,
        endTime: now(),
        wallOrigin: t0
      })
      return { record, violations: checkRun(record, { minSettleMs: SETTLE_DEFAULTS.minMs }) }
    }
    let end = await readEnd()
    const toldBy = Date.now() + TOLD_TIMEOUT_MS
    while (end.violations.some(v => / was never told$/.test(v.text)) && Date.now() < toldBy) {
      await sleep(1_000)
      end = await readEnd()
    }
    const { record, violations } = end
    const errors = new Map<string, number>()
    for (const h of hosts) for (const [k, v] of h.agent?.errors ?? []) errors.set(k, (errors.get(k) ?? 0) + v)
    return { record, violations, applied: nemesis.applied, exits, errors, converged, wallMs: Date.now() - started }
  } finally {
    for (const h of hosts) h.agent?.stop()
    for (const c of clients) c.close()
    for (const h of hosts)
      if (h.daemon != null) {
        h.expectExit = true
        try {
          process.kill(h.daemon.child.pid!, 'SIGCONT')
        } catch {
          /* already gone */
        }
      }
    await bed.teardown().catch(() => {})
    if (gitd != null) gitd.kill('SIGKILL')
    for (const m of mounts) await run('umount', ['-l', m]).catch(() => {})
    await run('rm', ['-rf', bed.root]).catch(() => {})
  }
}

async function seedRepo(root: string, served: string): Promise<void> {
  const seed = join(root, 'seed')
  await mkdir(seed, { recursive: true })
  await mkdir(served, { recursive: true })
  const git = async (args: string[], cwd?: string): Promise<void> => {
    await run('git', args, { cwd })
  }
  await git(['init', '-q', '-b', 'main'], seed)
  await writeFile(join(seed, 'README.md'), "the fault campaign's project\n")
  await git(['add', '-A'], seed)
  await git(['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', 'commit', '-q', '-m', 'seed'], seed)
  await git(['init', '-q', '--bare', '-b', 'main', join(served, 'shared.git')])
  await git(['push', '-q', join(served, 'shared.git'), 'main'], seed)
}

async function until(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs
  let last: unknown
  while (Date.now() < deadline) {
    try {
      if (await check()) return
    } catch (err) {
      last = err
    }
    await sleep(500)
  }
  throw new Error(`timed out waiting for ${what}${last != null ? `: ${(last as Error).message}` : ''}`)
}
