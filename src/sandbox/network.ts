// The network a box may reach: the model endpoints its harness uses, the base
// URLs in its environment, what the user allowed, and the daemon's API. Each
// destination becomes a bridge: a socat on the host listening on a unix
// socket and dialling the destination, and a socat in the box listening on a
// loopback address. A remote host's name is pinned to its bridge in the box's
// hosts file, so TLS still runs end to end with the real name; nothing else
// resolves or routes. Loopback is reached port by port, never as a whole host.
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isLoopback, type AllowedHost } from './mode.js'
import type { NetBridge } from './box.js'

/** Model endpoints each CLI talks to, by harness name (print and acp: alike). */
export const MODEL_ENDPOINTS: Record<string, string[]> = {
  claude: ['api.anthropic.com:443'],
  codex: ['api.openai.com:443', 'chatgpt.com:443', 'auth.openai.com:443'],
  copilot: ['api.githubcopilot.com:443', 'api.individual.githubcopilot.com:443', 'api.github.com:443', 'github.com:443'],
  gemini: ['generativelanguage.googleapis.com:443', 'cloudcode-pa.googleapis.com:443', 'oauth2.googleapis.com:443'],
  pi: ['api.anthropic.com:443', 'api.openai.com:443', 'generativelanguage.googleapis.com:443'],
  aider: ['api.openai.com:443', 'api.anthropic.com:443']
}

/** Environment variables that point a CLI at its model. */
export const BASE_URL_VARS = [
  'ANTHROPIC_BASE_URL',
  'OPENAI_BASE_URL',
  'OPENAI_API_BASE',
  'GOOGLE_GEMINI_BASE_URL',
  'GEMINI_API_BASE_URL',
  'COPILOT_API_URL',
  'COPILOT_PROVIDER_BASE_URL',
  'CODEX_BASE_URL'
]

/** CLI config files (relative to home) that may name a provider's base URL, with how the URL is written there. */
export const BASE_URL_FILES: Array<[string, RegExp]> = [
  ['.codex/config.toml', /^\s*base_url\s*=\s*"([^"]+)"/gm],
  ['.pi/agent/models.json', /"baseUrl"\s*:\s*"([^"]+)"/g]
]

/** The harness's CLI: `claude` for claude and acp:claude; none for cmd: and sim. */
export function harnessCli(harness: string): string | undefined {
  const name = harness.startsWith('acp:') ? harness.slice(4) : harness
  return Object.hasOwn(MODEL_ENDPOINTS, name) ? name : undefined
}

/** host:port of each base URL set in `env`. */
export function baseUrlHosts(env: Record<string, string | undefined>): AllowedHost[] {
  return urlHosts(BASE_URL_VARS.map(name => env[name]))
}

/** host:port of each provider base URL named in the CLIs' config files under `home`. */
export function configuredBaseUrlHosts(home: string): AllowedHost[] {
  const urls: string[] = []
  for (const [file, pattern] of BASE_URL_FILES) {
    let text: string
    try {
      text = readFileSync(join(home, file), 'utf8')
    } catch {
      continue
    }
    for (const m of text.matchAll(pattern)) urls.push(m[1])
  }
  return urlHosts(urls)
}

function urlHosts(values: Array<string | undefined>): AllowedHost[] {
  const out: AllowedHost[] = []
  for (const value of values) {
    if (value == null || value === '') continue
    try {
      const u = new URL(value)
      const port = u.port !== '' ? Number(u.port) : u.protocol === 'http:' ? 80 : 443
      out.push({ host: u.hostname.replace(/^\[|\]$/g, '').toLowerCase(), port })
    } catch {
      /* not a URL: the CLI will say so */
    }
  }
  return out
}

/** Host-side ends of a box's bridges, with the box-side addresses they serve. */
export class NetworkBridges {
  readonly bridges: NetBridge[] = []
  /** the box's /etc/hosts, when a remote name is pinned */
  hostsFile: string | undefined
  private readonly children: ChildProcess[] = []
  private dir = ''

  constructor(private readonly allowed: AllowedHost[]) {}

  /** Starts one host-side socat per destination. */
  async start(): Promise<void> {
    this.dir = await mkdtemp(join(tmpdir(), 'agency-net-'))
    const hosts = ['127.0.0.1 localhost', '::1 localhost']
    const seen = new Set<string>()
    let next = 1
    for (const a of this.allowed) {
      if (a.port === 0) continue // a host without a port is reached on 443 and 80
      const key = `${a.host}:${a.port}`
      if (seen.has(key)) continue
      seen.add(key)
      const loop = isLoopback(a.host)
      const address = loop ? (a.host === 'localhost' || a.host === '::1' ? '127.0.0.1' : a.host) : `127.0.1.${next++}`
      if (!loop) hosts.push(`${address} ${a.host}`)
      const socket = join(this.dir, `${this.bridges.length}.sock`)
      const target = a.host.includes(':') ? `TCP6:[${a.host}]:${a.port}` : `TCP:${a.host}:${a.port}`
      // setpriv --pdeathsig: a bridge goes with the daemon, even one killed outright.
      const socat = ['socat', `UNIX-LISTEN:${socket},fork,mode=600,unlink-early`, target]
      const words = existsSync('/usr/bin/setpriv') ? ['/usr/bin/setpriv', '--pdeathsig', 'KILL', '--', ...socat] : socat
      const child = spawn(words[0], words.slice(1), { stdio: 'ignore' })
      child.on('error', () => {
        /* socat missing: detection said so before */
      })
      this.children.push(child)
      this.bridges.push({ address, port: a.port, socket })
    }
    this.hostsFile = join(this.dir, 'hosts')
    await writeFile(this.hostsFile, hosts.join('\n') + '\n')
    await Promise.all(this.bridges.map(async b => await waitForFile(b.socket)))
  }

  async stop(): Promise<void> {
    for (const c of this.children) c.kill('SIGTERM')
    if (this.dir !== '') await rm(this.dir, { recursive: true, force: true })
  }
}

async function waitForFile(path: string): Promise<void> {
  const { stat } = await import('node:fs/promises')
  for (let i = 0; i < 500; i++) {
    try {
      await stat(path)
      return
    } catch {
      await new Promise(resolve => setTimeout(resolve, 10))
    }
  }
}

/** Hosts without a port open both web ports. */
export function expandPorts(allowed: AllowedHost[]): AllowedHost[] {
  return allowed.flatMap(a =>
    a.port !== 0
      ? [a]
      : [
          { host: a.host, port: 443 },
          { host: a.host, port: 80 }
        ]
  )
}
