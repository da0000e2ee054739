// The nemesis of the real-process campaign: what it does to hosts on the
// test bed, each act recorded in the history with the campaign's clock.
// Partitions are cut by the network (blackhole routes between the hosts that
// must not reach each other, so a host in two groups bridges them); a slow
// link is a token bucket whose queue delays packets and drops what overflows
// it (this kernel has no netem); a full disk is the daemon's small tmpfs
// filled up; a clock jump is the offset file the daemon's wall clock adds
// (AGENCY_TEST_FAULTS). Processes are killed, paused and resumed by pid.
import { execFile } from 'node:child_process'
import { statfs, unlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import type { History } from '../../src/sim/faults/history.js'
import type { Testbed } from '../scenarios/multi-host/testbed.js'

const run = promisify(execFile)

export interface NemesisHosts {
  bed: Testbed
  history: History
  /** ms on the campaign's clock */
  now: () => number
  /** the agent hosts, 1..n */
  hosts: number[]
  /** the host that serves the shared repository */
  repoHost: number
  name: (host: number) => string
  /** where host k's data dir is mounted (a tmpfs) */
  diskOf: (host: number) => string
  clockFileOf: (host: number) => string
}

/** A slow link: 64 kbit/s with at most 300 ms of queue; what does not fit is dropped. */
const SLOW = ['tbf', 'rate', '64kbit', 'burst', '4kb', 'latency', '300ms']
/** A slow remote: slower still, so a push takes seconds. */
const REMOTE_SLOW = ['tbf', 'rate', '32kbit', 'burst', '2kb', 'latency', '2000ms']

export class Nemesis {
  /** pairs of hosts cut from each other, "a b" with a < b */
  private cutPairs = new Set<string>()
  readonly applied = new Map<string, number>()

  constructor(private readonly o: NemesisHosts) {}

  private note(kind: string): void {
    this.applied.set(kind, (this.applied.get(kind) ?? 0) + 1)
  }

  private ns(k: number): string {
    return this.o.bed.hostNs(k)
  }

  /** Cuts every pair of hosts that share no group (hosts in no group form one more group). */
  async partition(groups: number[][], kind: string): Promise<void> {
    await this.heal(false)
    const of = (h: number): number[] => {
      const g = groups.flatMap((x, i) => (x.includes(h) ? [i] : []))
      return g.length > 0 ? g : [-1]
    }
    const pairs: Array<[number, number]> = []
    for (const a of this.o.hosts) for (const b of this.o.hosts) if (a < b && !of(a).some(g => of(b).includes(g))) pairs.push([a, b])
    for (const [a, b] of pairs) {
      await this.o.bed.exec(this.ns(a), ['ip', 'route', 'replace', 'blackhole', `${this.o.bed.ip(b)}/32`])
      await this.o.bed.exec(this.ns(b), ['ip', 'route', 'replace', 'blackhole', `${this.o.bed.ip(a)}/32`])
      this.cutPairs.add(`${a} ${b}`)
    }
    const named = groups.map(g => g.map(this.o.name))
    const rest = this.o.hosts.filter(h => of(h)[0] === -1).map(this.o.name)
    this.o.history.add({ kind: 'nemesis', time: this.o.now(), f: 'partition', groups: rest.length > 0 ? [...named, rest] : named })
    this.note(kind)
  }

  async heal(record = true): Promise<void> {
    for (const pair of this.cutPairs) {
      const [a, b] = pair.split(' ').map(Number)
      await this.o.bed.exec(this.ns(a), ['ip', 'route', 'del', 'blackhole', `${this.o.bed.ip(b)}/32`]).catch(() => {})
      await this.o.bed.exec(this.ns(b), ['ip', 'route', 'del', 'blackhole', `${this.o.bed.ip(a)}/32`]).catch(() => {})
    }
    const had = this.cutPairs.size > 0
    this.cutPairs = new Set()
    if (record && had) this.o.history.add({ kind: 'nemesis', time: this.o.now(), f: 'heal' })
  }

  async slow(k: number): Promise<void> {
    await this.o.bed.exec(this.ns(k), ['tc', 'qdisc', 'replace', 'dev', 'eth0', 'root', ...SLOW])
    this.o.history.add({ kind: 'nemesis', time: this.o.now(), f: 'slow', node: this.o.name(k) })
    this.note('slow')
  }

  async fast(k: number): Promise<void> {
    await this.o.bed.exec(this.ns(k), ['tc', 'qdisc', 'del', 'dev', 'eth0', 'root']).catch(() => {})
    this.o.history.add({ kind: 'nemesis', time: this.o.now(), f: 'fast', node: this.o.name(k) })
  }

  async remoteSlow(): Promise<void> {
    await this.o.bed.exec(this.ns(this.o.repoHost), ['tc', 'qdisc', 'replace', 'dev', 'eth0', 'root', ...REMOTE_SLOW])
    this.o.history.add({ kind: 'nemesis', time: this.o.now(), f: 'remote-slow' })
    this.note('remote-slow')
  }

  async remoteCut(): Promise<void> {
    await this.o.bed.cut(this.o.repoHost)
    this.o.history.add({ kind: 'nemesis', time: this.o.now(), f: 'remote-cut' })
    this.note('remote-cut')
  }

  async remoteHeal(): Promise<void> {
    await this.o.bed.restore(this.o.repoHost)
    await this.o.bed.exec(this.ns(this.o.repoHost), ['tc', 'qdisc', 'del', 'dev', 'eth0', 'root']).catch(() => {})
    this.o.history.add({ kind: 'nemesis', time: this.o.now(), f: 'remote-heal' })
  }

  async clock(k: number, offsetMs: number): Promise<void> {
    await writeFile(this.o.clockFileOf(k), `${offsetMs}\n`)
    this.o.history.add({ kind: 'nemesis', time: this.o.now(), f: 'clock', node: this.o.name(k), offsetMs })
    if (offsetMs !== 0) this.note(offsetMs > 0 ? 'clock-forward' : 'clock-back')
  }

  /** Fills host k's data disk: only a few KiB are left. */
  async diskFull(k: number): Promise<void> {
    const dir = this.o.diskOf(k)
    const s = await statfs(dir)
    const free = s.bavail * s.bsize
    await run('fallocate', ['-l', String(Math.max(0, free - 8192)), join(dir, 'fill')]).catch(() => {})
    this.o.history.add({ kind: 'nemesis', time: this.o.now(), f: 'disk-full', node: this.o.name(k) })
    this.note('disk-full')
  }

  async diskFree(k: number): Promise<void> {
    await unlink(join(this.o.diskOf(k), 'fill')).catch(() => {})
    this.o.history.add({ kind: 'nemesis', time: this.o.now(), f: 'disk-free', node: this.o.name(k) })
  }

  signal(pid: number, signal: NodeJS.Signals): boolean {
    try {
      process.kill(pid, signal)
      return true
    } catch {
      return false
    }
  }

  /** Everything back as it was: links, routes, queues, clocks, disks. */
  async quiet(): Promise<void> {
    await this.heal(false)
    for (const k of [...this.o.hosts, this.o.repoHost]) {
      await this.o.bed.restore(k).catch(() => {})
      await this.o.bed.exec(this.ns(k), ['tc', 'qdisc', 'del', 'dev', 'eth0', 'root']).catch(() => {})
    }
    for (const k of this.o.hosts) {
      await writeFile(this.o.clockFileOf(k), '0\n')
      await unlink(join(this.o.diskOf(k), 'fill')).catch(() => {})
    }
  }
}
