// Real agentd processes (the built dist/ daemon) on loopback, each with
// /metrics on a random port. stop() sends SIGTERM, then SIGKILL if it hangs.
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, openSync, closeSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { envWithoutAgency } from '../../helpers/agency-free-env.js'

export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url))
export const AGENTD_BIN = join(REPO_ROOT, 'dist/src/cli/agentd.js')

export interface Agentd {
  name: string
  peerId: string
  addrs: string[]
  grpc: string
  /** host:port of /metrics */
  metrics: string
  child: ChildProcess
  stop: () => Promise<void>
}

export interface AgentdOptions {
  name: string
  dataDir: string
  /** where its stderr (the log) goes */
  logFile: string
  peers?: string[]
  extraArgs?: string[]
}

/** Children started here, killed if the test process exits without stopping them. */
const running = new Set<ChildProcess>()
process.once('exit', () => {
  for (const c of running) c.kill('SIGKILL')
})

export async function startAgentd(o: AgentdOptions): Promise<Agentd> {
  if (!existsSync(AGENTD_BIN)) throw new Error(`${AGENTD_BIN} is missing: build first (npx tsc -p .)`)
  const args = [
    AGENTD_BIN,
    '--data-dir',
    o.dataDir,
    '--name',
    o.name,
    '--listen',
    '/ip4/127.0.0.1/tcp/0',
    '--grpc',
    '127.0.0.1:0',
    '--metrics',
    '127.0.0.1:0',
    ...(o.peers != null && o.peers.length > 0 ? ['--peers', o.peers.join(',')] : []),
    ...(o.extraArgs ?? [])
  ]
  const env = envWithoutAgency()
  const log = openSync(o.logFile, 'a')
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', log], env })
  closeSync(log)
  running.add(child)
  const exited = new Promise<void>(resolve => {
    child.once('exit', () => {
      running.delete(child)
      resolve()
    })
  })
  const banner: { peerId?: string; addrs: string[]; grpc?: string; metrics?: string } = { addrs: [] }
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`agentd ${o.name} did not print ready in time`))
      }, 45_000)
      createInterface({ input: child.stdout! }).on('line', line => {
        const [key, value] = line.split(' ')
        if (key === 'agentd') banner.peerId = line.split(' ')[3]
        else if (key === 'listening') banner.addrs.push(value)
        else if (key === 'grpc') banner.grpc = value
        else if (key === 'metrics') banner.metrics = value.replace(/^http:\/\//, '').replace(/\/metrics$/, '')
        else if (key === 'ready') {
          clearTimeout(timer)
          resolve()
        }
      })
      child.once('exit', code => {
        clearTimeout(timer)
        reject(new Error(`agentd ${o.name} exited (${code}) before ready`))
      })
    })
  } catch (err) {
    child.kill('SIGKILL')
    const tail = (await readFile(o.logFile, 'utf8').catch(() => '')).slice(-3000)
    throw new Error(`${(err as Error).message}\n${tail}`, { cause: err })
  }
  if (banner.metrics == null || banner.grpc == null || banner.peerId == null)
    throw new Error(`agentd ${o.name} printed no metrics, gRPC or peer id`)
  return {
    name: o.name,
    peerId: banner.peerId,
    addrs: banner.addrs,
    grpc: banner.grpc,
    metrics: banner.metrics,
    child,
    stop: async () => {
      if (child.exitCode != null || child.signalCode != null) return
      const kill = setTimeout(() => {
        child.kill('SIGKILL')
      }, 15_000)
      child.kill('SIGTERM')
      await exited
      clearTimeout(kill)
    }
  }
}

export async function scrape(metrics: string): Promise<string> {
  const res = await fetch(`http://${metrics}/metrics`)
  if (!res.ok) throw new Error(`GET http://${metrics}/metrics answered ${res.status}`)
  return await res.text()
}
