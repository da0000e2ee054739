// `agentd --agents N`: several daemons in one process, each with its own
// identity, libp2p node, store, workspace, API socket and harness. They share
// the process's runtime (V8, libp2p's code, the event loop), which is where
// most of an agentd process's memory goes; each agent's harness is still its
// own child process, so a harness that crashes takes nothing but its own
// run with it. A crash of the process stops all of them; each restarts from
// its own data dir, where everything it acknowledged is on disk.
import { join } from 'node:path'
import { InvalidArgumentError } from '../core/errors.js'
import { MAX_AGENTS_PER_PROCESS, type DaemonConfig } from '../daemon/config.js'
import { defaultGrpcAddr, parseHostPort } from '../addresses.js'
import { serveDaemon, type ServedDaemon } from './serve.js'

export type AgentBaseConfig = Partial<DaemonConfig> & { dataDir: string }

/** The number agent `i` (0-based) of a host whose first agent is `first` carries: its name, data dir and ports follow it. */
export function agentNumber(first: number, i: number): number {
  return first + i
}

/** A TCP port shifted by `i` (0 stays 0: the system picks one for each). */
function shiftPort(port: number, i: number, flag: string): number {
  if (port === 0) return 0
  const p = port + i
  if (p > 65535) throw new InvalidArgumentError(`${flag}: port ${port} + ${i} agents is past 65535`)
  return p
}

function shiftHostPort(addr: string, i: number, flag: string): string {
  const { host, port } = parseHostPort(addr)
  const h = host.includes(':') ? `[${host}]` : host
  return `${h}:${shiftPort(port, i, flag)}`
}

/** /ip4/x/tcp/P and /ip6/x/tcp/P shifted by i; other transports (memory) get the agent's number appended. */
function shiftMultiaddr(addr: string, i: number, num: number): string {
  const tcp = /^(.*\/tcp\/)(\d+)(.*)$/.exec(addr)
  if (tcp != null) return `${tcp[1]}${shiftPort(Number(tcp[2]), i, '--listen')}${tcp[3]}`
  if (addr.startsWith('/memory/')) return `${addr}-${num}`
  return addr
}

/**
 * The configuration of each of `count` agents hosted by one process, from the
 * process's own: agent number n (from `first`) lives in <data-dir>/agent-<n>,
 * is called <name>-<n> (agent-<n> without --name), serves its API on the
 * socket in its own data dir (or the given port + i), listens on the given
 * ports + i, and only the first serves the dashboard and process metrics.
 * Without a count (no --agents), the one agent keeps the configuration
 * exactly as given; `--agents 1` lays out one agent as a host does.
 */
export function agentConfigs(base: AgentBaseConfig, count?: number, first = 1): AgentBaseConfig[] {
  if (count === undefined) return [base]
  if (!Number.isSafeInteger(count) || count < 1 || count > MAX_AGENTS_PER_PROCESS)
    throw new InvalidArgumentError(`--agents must be between 1 and ${MAX_AGENTS_PER_PROCESS}, got ${count}`)
  if (!Number.isSafeInteger(first) || first < 1)
    throw new InvalidArgumentError(`--agent-index must be a positive whole number, got ${first}`)
  const defaultGrpc = defaultGrpcAddr(base.dataDir)
  if (base.grpc != null && base.grpc !== defaultGrpc && base.grpc.startsWith('unix:')) {
    throw new InvalidArgumentError(
      '--grpc unix:PATH names one socket: with --agents, leave --grpc out (each agent serves the socket in its own data dir) or give HOST:PORT (ports PORT, PORT+1, ...)'
    )
  }
  return Array.from({ length: count }, (_, i) => {
    const num = agentNumber(first, i)
    const dataDir = join(base.dataDir, `agent-${num}`)
    const grpc = base.grpc == null ? null : base.grpc === defaultGrpc ? defaultGrpcAddr(dataDir) : shiftHostPort(base.grpc, i, '--grpc')
    return {
      ...base,
      dataDir,
      name: base.name != null && base.name !== '' ? `${base.name}-${num}` : `agent-${num}`,
      grpc,
      listen: (base.listen ?? []).map(a => shiftMultiaddr(a, i, num)),
      announce: (base.announce ?? []).map(a => shiftMultiaddr(a, i, num)),
      metrics: base.metrics == null ? null : shiftHostPort(base.metrics, i, '--metrics'),
      ui: i === 0 ? base.ui : null,
      processMetrics: i === 0 && (base.processMetrics ?? true),
      repo:
        base.repo != null
          ? { ...base.repo, workdir: base.repo.workdir != null ? join(base.repo.workdir, `agent-${num}`) : undefined }
          : undefined
    }
  })
}

export interface ServedHost {
  agents: ServedDaemon[]
  stop: () => Promise<void>
}

/** Agents of a host that start at once, after the first: their clones and stores open side by side. */
const START_CONCURRENCY = 8

/**
 * Starts the first agent, then the others, several at a time; every agent
 * after the first also bootstraps from the first, so the host's agents find
 * each other and the swarm through one connection. A failure stops those
 * already started.
 */
export async function serveAgents(configs: AgentBaseConfig[]): Promise<ServedHost> {
  const started: Array<ServedDaemon | undefined> = []
  const stop = async (): Promise<void> => {
    await Promise.allSettled(
      started.map(async a => {
        await a?.stop()
      })
    )
  }
  try {
    const first = await serveDaemon(configs[0])
    started[0] = first
    const firstAddrs = first.daemon.listenAddrs()
    let next = 1
    const worker = async (): Promise<void> => {
      while (next < configs.length) {
        const i = next++
        started[i] = await serveDaemon({ ...configs[i], peers: [...(configs[i].peers ?? []), ...firstAddrs] })
      }
    }
    const results = await Promise.allSettled(Array.from({ length: START_CONCURRENCY }, worker))
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')
    if (failed != null) throw failed.reason
  } catch (err) {
    await stop()
    throw err
  }
  return { agents: started as ServedDaemon[], stop }
}
