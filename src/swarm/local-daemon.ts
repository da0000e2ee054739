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
function tailLines (file: string, child: ChildProcess): EventEmitter & { close: () => void } {
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
          createReadStream(file, { start: offset, end: size - 1, encoding: 'utf8' }).on('data', d => { data += String(d) }).on('end', () => { resolve(data) }).on('error', reject)
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
  emitter.close = () => { closed = true }
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
  if (o.detached === true) await mkdir(o.dataDir, { recursive: true })
  const outFile = join(o.dataDir, 'agentd.out')
  // A detached daemon must not write into a pipe that dies with us: its stdout goes to a file we tail.
  const stdout = o.detached === true ? openSync(outFile, 'w') : 'pipe'
  const child = spawn(process.execPath, args, { stdio: ['ignore', stdout, stderr], env: { ...process.env, ...o.env }, detached: o.detached === true })
  const exited = new Promise<number | null>(resolve => { child.once('exit', code => { resolve(code) }) })
  const lines = o.detached === true ? tailLines(outFile, child) : createInterface({ input: child.stdout! })
  const info: Partial<LocalDaemon> & { addrs: string[] } = { addrs: [] }
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`agentd ${o.name} did not start in time`)) }, o.startTimeoutMs ?? 30_000)
    lines.on('line', line => {
      const [key, value] = [line.split(' ')[0], line.split(' ')[1]]
      if (key === 'agentd') info.peerId = line.split(' ')[3]
      else if (key === 'listening') info.addrs.push(value)
      else if (key === 'grpc') info.grpc = value
      else if (key === 'ui') info.ui = value
      else if (key === 'metrics') info.metrics = value.replace(/^http:\/\//, '').replace(/\/metrics$/, '')
      else if (key === 'ready') { clearTimeout(timer); resolve() }
    })
    child.once('exit', code => { clearTimeout(timer); reject(new Error(`agentd ${o.name} exited with code ${code} before it was ready`)) })
  })
  if (o.detached === true) { lines.close(); child.unref() }
  return {
    name: o.name,
    dataDir: o.dataDir,
    peerId: info.peerId as string,
    addrs: info.addrs,
    grpc: info.grpc as string,
    metrics: info.metrics,
    ui: info.ui,
    child,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode == null && child.signalCode == null) child.kill(signal)
      return await exited
    }
  }
}
