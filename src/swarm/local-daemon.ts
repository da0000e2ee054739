// Starts an agentd as a child process on loopback and reads what it prints at
// start: peer id, listen addresses, gRPC and metrics addresses. Used by the
// demo and by `agency swarm`.
import { spawn, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import { join } from 'node:path'
import { compiledModulePath } from '../harness/package-paths.js'
import { openSync, createReadStream } from 'node:fs'
import { mkdir, stat } from 'node:fs/promises'
import { EventEmitter } from 'node:events'

/** Lines appended to a file by a child, until it exits or close() is called. */
function tailLines(file: string, child: ChildProcess): EventEmitter & { close: () => void } {
  const emitter = new EventEmitter() as EventEmitter & { close: () => void }
  let offset = 0
  let buffer = ''
  let closed = false
  const poll = async (): Promise<void> => {
    while (!closed) {
      const size = (await stat(file).catch(() => ({ size: 0 }))).size
      if (size > offset) {
        const chunk = await new Promise<string>((resolve, reject) => {
          let data = ''
          createReadStream(file, { start: offset, end: size - 1, encoding: 'utf8' })
            .on('data', d => {
              data += String(d)
            })
            .on('end', () => {
              resolve(data)
            })
            .on('error', reject)
        })
        offset = size
        buffer += chunk
        const parts = buffer.split('\n')
        buffer = parts.pop() ?? ''
        for (const l of parts) emitter.emit('line', l)
      }
      if (child.exitCode != null) return
      await new Promise(resolve => setTimeout(resolve, 100))
    }
  }
  emitter.close = () => {
    closed = true
  }
  poll().catch(() => {})
  return emitter
}

// Always the compiled daemon, also when this module runs from source (tests).
export const AGENTD_SCRIPT = compiledModulePath('cli/agentd.js')

export interface LocalDaemon {
  name: string
  dataDir: string
  peerId: string
  addrs: string[]
  grpc: string
  metrics?: string
  /** the dashboard's address, when started with --ui */
  ui?: string
  /** the agentd process; the agents of one host share it */
  child: ChildProcess
  stop: (signal?: NodeJS.Signals) => Promise<number | null>
}

export interface LocalDaemonOptions {
  name: string
  dataDir: string
  peers?: string[]
  extraArgs?: string[]
  env?: Record<string, string>
  /** where agentd's stderr (its log) goes; default: discarded */
  logFile?: string
  /** leave the daemon running on its own after this process exits (stdout goes to <dataDir>/agentd.out) */
  detached?: boolean
  startTimeoutMs?: number
}

export interface LocalHostOptions extends Omit<LocalDaemonOptions, 'name'> {
  /** agents in the process (`agentd --agents`); each lives in <dataDir>/agent-<n> */
  agents: number
  /** the number of its first agent (`--agent-index`) */
  firstAgent: number
  /** where a detached host's stdout goes (default <dataDir>/agentd.out): hosts sharing a data dir each need their own */
  outFile?: string
}

/** One agentd process hosting several agents (`agentd --agents N`): their API on the socket in each one's data dir. */
export interface LocalHost {
  agents: LocalDaemon[]
  child: ChildProcess
  /** the arguments it was started with: a restart after a crash gives the same ones */
  args: string[]
  stop: (signal?: NodeJS.Signals) => Promise<number | null>
}

/** One agent in its own process, on loopback ports the system picks. */
export async function startLocalDaemon(o: LocalDaemonOptions): Promise<LocalDaemon> {
  const args = [
    '--data-dir',
    o.dataDir,
    '--name',
    o.name,
    '--listen',
    '/ip4/127.0.0.1/tcp/0',
    '--grpc',
    '127.0.0.1:0',
    ...(o.peers != null && o.peers.length > 0 ? ['--peers', o.peers.join(',')] : []),
    ...(o.extraArgs ?? [])
  ]
  const host = await startAgentd(args, o, join(o.dataDir, 'agentd.out'))
  return { ...host.agents[0], name: o.name, dataDir: o.dataDir }
}

/** Several agents in one process (`agentd --agents`), each with its API on the unix socket in its data dir. */
export async function startLocalHost(o: LocalHostOptions): Promise<LocalHost> {
  const args = [
    '--data-dir',
    o.dataDir,
    '--agents',
    String(o.agents),
    '--agent-index',
    String(o.firstAgent),
    '--listen',
    '/ip4/127.0.0.1/tcp/0',
    ...(o.peers != null && o.peers.length > 0 ? ['--peers', o.peers.join(',')] : []),
    ...(o.extraArgs ?? [])
  ]
  return await startAgentd(args, o, o.outFile ?? join(o.dataDir, 'agentd.out'))
}

/** Starts agentd with `args` again, as a crashed host is restarted: same data dirs, so the same agents. */
export async function restartLocalHost(
  host: LocalHost,
  o: Pick<LocalDaemonOptions, 'dataDir' | 'env' | 'logFile' | 'detached' | 'startTimeoutMs'> & { outFile?: string }
): Promise<LocalHost> {
  return await startAgentd(host.args, o, o.outFile ?? join(o.dataDir, 'agentd.out'))
}

async function startAgentd(
  args: string[],
  o: Pick<LocalDaemonOptions, 'dataDir' | 'env' | 'logFile' | 'detached' | 'startTimeoutMs'>,
  outFile: string
): Promise<LocalHost> {
  const stderr = o.logFile != null ? openSync(o.logFile, 'a') : 'ignore'
  if (o.detached === true) await mkdir(o.dataDir, { recursive: true })
  // A detached daemon must not write into a pipe that dies with us: its stdout goes to a file we tail.
  const stdout = o.detached === true ? openSync(outFile, 'w') : 'pipe'
  const child = spawn(process.execPath, [AGENTD_SCRIPT, ...args], {
    stdio: ['ignore', stdout, stderr],
    env: { ...process.env, ...o.env },
    detached: o.detached === true
  })
  const exited = new Promise<number | null>(resolve => {
    child.once('exit', code => {
      resolve(code)
    })
  })
  const lines = o.detached === true ? tailLines(outFile, child) : createInterface({ input: child.stdout! })
  // One block per agent, each opened by its `agentd ... peer <id> (<name>)` line; `ready` once all are up.
  const infos: Array<Partial<LocalDaemon> & { addrs: string[] }> = []
  const what = `agentd (${o.dataDir})`
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`${what} did not start in time`))
    }, o.startTimeoutMs ?? 30_000)
    lines.on('line', (line: string) => {
      const [key, value] = [line.split(' ')[0], line.split(' ')[1]]
      const info = infos[infos.length - 1]
      if (key === 'agentd') infos.push({ peerId: line.split(' ')[3], name: /\((.*)\)/.exec(line)?.[1], addrs: [] })
      else if (info == null) return
      else if (key === 'listening') info.addrs.push(value)
      else if (key === 'grpc') info.grpc = value
      else if (key === 'ui') info.ui = value
      else if (key === 'metrics') info.metrics = value.replace(/^http:\/\//, '').replace(/\/metrics$/, '')
      if (key === 'ready') {
        clearTimeout(timer)
        resolve()
      }
    })
    child.once('exit', code => {
      clearTimeout(timer)
      reject(new Error(`${what} exited with code ${code} before it was ready`))
    })
  })
  if (o.detached === true) {
    lines.close()
    child.unref()
  }
  const stop = async (signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> => {
    if (child.exitCode == null && child.signalCode == null) child.kill(signal)
    return await exited
  }
  const agents = infos.map(info => ({
    name: info.name as string,
    dataDir: join(o.dataDir, info.name as string),
    peerId: info.peerId as string,
    addrs: info.addrs,
    grpc: info.grpc as string,
    metrics: info.metrics,
    ui: info.ui,
    child,
    stop
  }))
  return { agents, child, args, stop }
}
