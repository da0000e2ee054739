// A test bed of separate network hosts on one machine: Linux network
// namespaces on a private bridge (itself in a namespace of its own, so the
// machine's own network is never touched). Each host gets one agentd bound to
// its address; its gRPC API is a unix socket in its data dir, which the test
// process reaches across namespaces. Links can be cut and restored. Every
// namespace and process it made is removed on teardown, even after a failure.
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import { promisify } from 'node:util'
import { mkdtemp, rm } from 'node:fs/promises'
import { createInterface } from 'node:readline'
import { openSync, existsSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { AGENTD_SCRIPT } from '../../../src/swarm/local-daemon.js'

const run = promisify(execFile)

/** Why the test bed cannot run here, or null when it can. */
export async function testbedUnavailable(): Promise<string | null> {
  if (process.platform !== 'linux') return 'network namespaces need Linux'
  if (process.getuid?.() !== 0) return 'network namespaces need root'
  try {
    await run('ip', ['-V'])
  } catch {
    return 'iproute2 (`ip`) is not installed'
  }
  const probe = `agp${process.pid}`
  try {
    await run('ip', ['netns', 'add', probe])
    await run('ip', ['netns', 'del', probe])
  } catch (err) {
    return `cannot create network namespaces: ${(err as Error).message.split('\n')[0]}`
  }
  return null
}

export interface HostDaemon {
  host: number
  name: string
  ip: string
  dataDir: string
  grpc: string
  peerId: string
  addrs: string[]
  child: ChildProcess
}

export class Testbed {
  readonly id: string
  readonly subnet: string
  readonly root: string
  private readonly namespaces: string[] = []
  private readonly processes = new Set<ChildProcess>()
  private readonly switchNs: string

  private constructor(id: string, subnet: string, root: string) {
    this.id = id
    this.subnet = subnet
    this.root = root
    this.switchNs = `ag${id}sw`
  }

  /** Creates the switch namespace with its bridge; hosts are added with addHost. */
  static async create(): Promise<Testbed> {
    const id = `${process.pid % 10000}${Math.floor(Math.random() * 100)}`
    const subnet = `10.${200 + Math.floor(Math.random() * 50)}.${Math.floor(Math.random() * 250)}`
    const root = await mkdtemp(join(tmpdir(), 'agency-netns-'))
    const bed = new Testbed(id, subnet, root)
    await bed.ns(bed.switchNs)
    await bed.exec(bed.switchNs, ['ip', 'link', 'add', 'br0', 'type', 'bridge'])
    await bed.exec(bed.switchNs, ['ip', 'link', 'set', 'br0', 'up'])
    return bed
  }

  private async ns(name: string): Promise<void> {
    await run('ip', ['netns', 'add', name])
    this.namespaces.push(name)
    await run('ip', ['-n', name, 'link', 'set', 'lo', 'up'])
  }

  async exec(ns: string, cmd: string[]): Promise<string> {
    return (await run('ip', ['netns', 'exec', ns, ...cmd])).stdout
  }

  hostNs(k: number): string {
    return `ag${this.id}h${k}`
  }
  ip(k: number): string {
    return `${this.subnet}.${k}`
  }
  private switchSide(k: number): string {
    return `ag${this.id}s${k}`
  }

  /** Adds host k: a namespace with eth0 at <subnet>.k, wired to the bridge. */
  async addHost(k: number): Promise<void> {
    const ns = this.hostNs(k)
    await this.ns(ns)
    const a = `ag${this.id}a${k}`
    const b = this.switchSide(k)
    await run('ip', ['link', 'add', a, 'netns', ns, 'type', 'veth', 'peer', 'name', b, 'netns', this.switchNs])
    await this.exec(ns, ['ip', 'link', 'set', a, 'name', 'eth0'])
    await this.exec(ns, ['ip', 'addr', 'add', `${this.ip(k)}/24`, 'dev', 'eth0'])
    await this.exec(ns, ['ip', 'link', 'set', 'eth0', 'up'])
    await this.exec(this.switchNs, ['ip', 'link', 'set', b, 'master', 'br0'])
    await this.exec(this.switchNs, ['ip', 'link', 'set', b, 'up'])
  }

  /** Cuts host k off the network (its switch port goes down). */
  async cut(k: number): Promise<void> {
    await this.exec(this.switchNs, ['ip', 'link', 'set', this.switchSide(k), 'down'])
  }

  async restore(k: number): Promise<void> {
    await this.exec(this.switchNs, ['ip', 'link', 'set', this.switchSide(k), 'up'])
  }

  /** Starts a process inside host k's namespace; it is killed on teardown. */
  spawnIn(
    k: number,
    cmd: string,
    args: string[],
    opts: { cwd?: string; env?: NodeJS.ProcessEnv; stdout?: 'pipe' | 'ignore'; stderrFile?: string } = {}
  ): ChildProcess {
    const stderr = opts.stderrFile != null ? openSync(opts.stderrFile, 'a') : 'ignore'
    const child = spawn('ip', ['netns', 'exec', this.hostNs(k), cmd, ...args], {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      stdio: ['ignore', opts.stdout ?? 'pipe', stderr]
    })
    this.processes.add(child)
    child.once('exit', () => {
      this.processes.delete(child)
    })
    return child
  }

  /** Starts agentd on host k, bound to the host's address; gRPC on a unix socket in its data dir. */
  async startAgentd(
    k: number,
    o: { peers?: string[]; extraArgs?: string[]; dataDir?: string; env?: NodeJS.ProcessEnv } = {}
  ): Promise<HostDaemon> {
    const name = `host${k}`
    const dataDir = o.dataDir ?? join(this.root, name)
    const grpc = `unix:${join(dataDir, 'api.sock')}`
    const args = [
      AGENTD_SCRIPT,
      '--data-dir',
      dataDir,
      '--name',
      name,
      '--listen',
      `/ip4/${this.ip(k)}/tcp/4001`,
      '--grpc',
      grpc,
      ...(o.peers != null && o.peers.length > 0 ? ['--peers', o.peers.join(',')] : []),
      ...(o.extraArgs ?? [])
    ]
    const errFile = join(this.root, `${name}.err`)
    const child = this.spawnIn(k, process.execPath, args, { stderrFile: errFile, env: o.env })
    const info: Partial<HostDaemon> & { addrs: string[] } = { addrs: [] }
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL')
        reject(new Error(`agentd on host ${k} did not start in 120 s`))
      }, 120_000)
      createInterface({ input: child.stdout! }).on('line', line => {
        const [key, value] = line.split(' ')
        if (key === 'agentd') info.peerId = line.split(' ')[3]
        else if (key === 'listening') info.addrs.push(value)
        else if (key === 'ready') {
          clearTimeout(timer)
          resolve()
        }
      })
      child.once('exit', code => {
        clearTimeout(timer)
        const tail = existsSync(errFile)
          ? readFileSync(errFile, 'utf8')
              .split('\n')
              .filter(l => l !== '')
              .slice(-3)
              .join(' | ')
          : ''
        reject(new Error(`agentd on host ${k} exited with ${code}: ${tail}`))
      })
    })
    return { host: k, name, ip: this.ip(k), dataDir, grpc, peerId: info.peerId as string, addrs: info.addrs, child }
  }

  async stopProcess(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (child.exitCode != null || child.signalCode != null) return
    const exited = new Promise<void>(resolve => {
      child.once('exit', () => {
        resolve()
      })
    })
    child.kill(signal)
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
    }, 10_000)
    await exited
    clearTimeout(timer)
  }

  /** Kills every process and removes every namespace (and so every link) this bed made. */
  async teardown(): Promise<void> {
    await Promise.allSettled(
      [...this.processes].map(async c => {
        await this.stopProcess(c)
      })
    )
    for (const ns of this.namespaces.reverse()) {
      // Anything still running in the namespace holds it: kill it first.
      await run('ip', ['netns', 'pids', ns])
        .then(async ({ stdout }) => {
          for (const pid of stdout.split('\n').filter(p => p !== '')) {
            try {
              process.kill(Number(pid), 'SIGKILL')
            } catch {
              /* already gone */
            }
          }
        })
        .catch(() => {})
      await run('ip', ['netns', 'del', ns]).catch(() => {})
    }
    await rm(this.root, { recursive: true, force: true })
  }
}
