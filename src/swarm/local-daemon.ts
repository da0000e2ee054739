// Starts an agentd as a child process on loopback and reads what it prints at
// start: peer id, listen addresses, gRPC and metrics addresses. Used by the
// demo and by `agency swarm`.
import { spawn, type ChildProcess } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { dirname, join } from 'node:path'
import { openSync } from 'node:fs'

export const AGENTD_SCRIPT = join(dirname(fileURLToPath(import.meta.url)), '..', 'cli', 'agentd.js')

export interface LocalDaemon {
  name: string
  dataDir: string
  peerId: string
  addrs: string[]
  grpc: string
  metrics?: string
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
  startTimeoutMs?: number
}

export async function startLocalDaemon (o: LocalDaemonOptions): Promise<LocalDaemon> {
  const args = [
    AGENTD_SCRIPT,
    '--data-dir', o.dataDir,
    '--name', o.name,
    '--listen', '/ip4/127.0.0.1/tcp/0',
    '--grpc', '127.0.0.1:0',
    ...(o.peers != null && o.peers.length > 0 ? ['--peers', o.peers.join(',')] : []),
    ...(o.extraArgs ?? [])
  ]
  const stderr = o.logFile != null ? openSync(o.logFile, 'a') : 'ignore'
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', stderr], env: { ...process.env, ...o.env } })
  const exited = new Promise<number | null>(resolve => { child.once('exit', code => { resolve(code) }) })
  const lines = createInterface({ input: child.stdout! })
  const info: Partial<LocalDaemon> & { addrs: string[] } = { addrs: [] }
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`agentd ${o.name} did not start in time`)) }, o.startTimeoutMs ?? 30_000)
    lines.on('line', line => {
      const [key, value] = [line.split(' ')[0], line.split(' ')[1]]
      if (key === 'agentd') info.peerId = line.split(' ')[3]
      else if (key === 'listening') info.addrs.push(value)
      else if (key === 'grpc') info.grpc = value
      else if (key === 'metrics') info.metrics = value.replace(/^http:\/\//, '').replace(/\/metrics$/, '')
      else if (key === 'ready') { clearTimeout(timer); resolve() }
    })
    child.once('exit', code => { clearTimeout(timer); reject(new Error(`agentd ${o.name} exited with code ${code} before it was ready`)) })
  })
  return {
    name: o.name,
    dataDir: o.dataDir,
    peerId: info.peerId as string,
    addrs: info.addrs,
    grpc: info.grpc as string,
    metrics: info.metrics,
    child,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode == null && child.signalCode == null) child.kill(signal)
      return await exited
    }
  }
}
