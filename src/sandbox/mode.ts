// Which sandbox an agent and its test runs get: the mode asked for, what the
// host supports, and the allow-list of network destinations, all checked
// before anything starts.
import { spawnSync } from 'node:child_process'
import { isIP } from 'node:net'
import { InvalidArgumentError } from '../core/errors.js'
import { SandboxUnavailableError } from './errors.js'

export const SANDBOX_MODES = ['auto', 'bwrap', 'docker', 'none'] as const
export type SandboxMode = (typeof SANDBOX_MODES)[number]
/** What a sandbox is once chosen: auto resolves to one of these. */
export type SandboxKind = Exclude<SandboxMode, 'auto'>

export function parseSandboxMode(value: unknown): SandboxMode {
  if (typeof value === 'string' && (SANDBOX_MODES as readonly string[]).includes(value)) return value as SandboxMode
  throw new InvalidArgumentError(`unknown sandbox mode ${JSON.stringify(value)}: use one of ${SANDBOX_MODES.join(', ')}`)
}

/** A network destination a box may reach. A port of 0 means any port of that host (never allowed on loopback). */
export interface AllowedHost {
  host: string
  port: number
}

const HOSTNAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i

/** `host`, `host:port` or `[v6]:port`; anything else (a URL, a path, a wildcard) is refused. */
export function parseAllowedHost(entry: string): AllowedHost {
  const text = entry.trim()
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(text) ?? /^([^:]+)(?::(\d+))?$/.exec(text)
  const host = m?.[1]?.toLowerCase()
  const port = m?.[2] != null ? Number(m[2]) : 0
  if (host == null || !(isIP(host) !== 0 || HOSTNAME.test(host)) || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw new InvalidArgumentError(`--sandbox-allow: ${JSON.stringify(entry)} is not a host or host:port`)
  }
  if (isLoopback(host) && port === 0)
    throw new InvalidArgumentError(
      `--sandbox-allow: ${JSON.stringify(entry)} is on loopback: name its port (${host}:<port>), loopback is allowed by port only`
    )
  return { host, port }
}

export function parseAllowList(entries: readonly string[]): AllowedHost[] {
  return entries
    .flatMap(e => e.split(','))
    .map(e => e.trim())
    .filter(e => e !== '')
    .map(parseAllowedHost)
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host)
}

/** What this host can do, each with the reason when it cannot. */
export interface SandboxSupport {
  bwrap: { ok: true } | { ok: false; reason: string }
  docker: { ok: true } | { ok: false; reason: string }
}

/** Tries each engine once: bubblewrap by starting an empty box, docker by asking its engine. */
export function detectSupport(): SandboxSupport {
  return {
    bwrap: probe(
      'bwrap',
      ['--unshare-all', '--cap-drop', 'ALL', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', 'true'],
      'install bubblewrap (apt-get install bubblewrap socat) and allow user namespaces'
    ),
    docker: probe('docker', ['info', '--format', '{{.ServerVersion}}'], 'no docker engine answers `docker info`')
  }
}

function probe(command: string, args: string[], fix: string): { ok: true } | { ok: false; reason: string } {
  const r = spawnSync(command, args, { encoding: 'utf8', timeout: 15_000, stdio: ['ignore', 'pipe', 'pipe'] })
  if (r.error != null)
    return { ok: false, reason: `${command} is not available (${(r.error as NodeJS.ErrnoException).code ?? r.error.message}): ${fix}` }
  if (r.status !== 0)
    return {
      ok: false,
      reason: `${command} fails here (${(r.stderr ?? '').trim().split('\n').pop() ?? `exit ${String(r.status)}`}): ${fix}`
    }
  if (command === 'bwrap') {
    const socat = spawnSync('socat', ['-V'], { stdio: 'ignore', timeout: 5_000 })
    if (socat.error != null || socat.status !== 0) return { ok: false, reason: `socat is not available: ${fix}` }
  }
  return { ok: true }
}

/** The sandbox a mode resolves to on this host; throws SandboxUnavailableError when the mode asked for cannot run. */
export function chooseSandbox(mode: SandboxMode, support: SandboxSupport): SandboxKind {
  if (mode === 'none') return 'none'
  if (mode === 'bwrap' || mode === 'auto') {
    if (support.bwrap.ok) return 'bwrap'
    if (mode === 'bwrap') throw new SandboxUnavailableError('bwrap', support.bwrap.reason)
    return 'none'
  }
  // docker: a box per agent needs an image with the agent's CLI in it; this host path runs bwrap.
  if (!support.docker.ok) throw new SandboxUnavailableError('docker', support.docker.reason)
  throw new SandboxUnavailableError(
    'docker',
    'agentd does not start agents in docker containers; run agentd itself in the container (deploy/docker) with --sandbox bwrap or --sandbox none'
  )
}
