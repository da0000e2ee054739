// Shared pieces of the trust and fault tests: swarm keys and tokens on disk,
// metrics read over HTTP, gRPC error codes, and cleanup of
// processes a SIGKILLed daemon left behind.
import { readdirSync, readlinkSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { randomBytes } from 'node:crypto'
import { generateKey } from '@libp2p/pnet'
import { AgencyError } from '../../src/core/errors.js'

/** Writes a fresh swarm key (what `agency keygen` writes) to `file`. */
export async function writeSwarmKey(file: string): Promise<string> {
  const key = new Uint8Array(95)
  generateKey(key)
  await writeFile(file, key, { mode: 0o600 })
  return file
}

/** Writes a random API token to `file`; returns the token. */
export async function writeToken(file: string): Promise<string> {
  const token = randomBytes(24).toString('hex')
  await writeFile(file, token + '\n', { mode: 0o600 })
  return token
}

/** GETs a metrics URL (http://host:port/metrics or host:port) and returns the text. */
export async function metricsText(url: string): Promise<string> {
  const target = url.startsWith('http') ? url : `http://${url}/metrics`
  const res = await fetch(target)
  if (!res.ok) throw new Error(`GET ${target}: ${res.status}`)
  return await res.text()
}

/** The sum of every series of a metric (all label sets) in a Prometheus text page; 0 when absent. */
export function metricSum(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$/.exec(line)
    if (m == null || m[1] !== name) continue
    const set = m[2] ?? ''
    if (Object.entries(labels).every(([k, v]) => set.includes(`${k}="${v}"`))) sum += Number(m[3])
  }
  return sum
}

/** Awaits `p` and returns the AgencyError it rejected with; fails if it resolved or threw something else. */
export async function rejection(p: Promise<unknown>): Promise<AgencyError> {
  const outcome = await p.then(
    value => ({ value }),
    (err: unknown) => ({ err })
  )
  if (!('err' in outcome)) throw new Error(`expected a rejection, got ${JSON.stringify(outcome.value)?.slice(0, 200)}`)
  if (!(outcome.err instanceof AgencyError)) throw new Error(`expected an AgencyError, got ${String(outcome.err)}`)
  return outcome.err
}

/**
 * Pids of processes whose working directory is under `dir`, this process
 * excluded. A SIGKILLed agentd cannot stop its harness (it runs in its own
 * process group in the daemon's workspace); a service manager would kill the
 * whole cgroup, and this is how the tests do the same.
 */
export function pidsWorkingUnder(dir: string): number[] {
  const out: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue
    try {
      const cwd = readlinkSync(`/proc/${name}/cwd`)
      if (cwd === dir || cwd.startsWith(dir + '/')) out.push(Number(name))
    } catch {
      /* gone, or not ours to read */
    }
  }
  return out
}

/** SIGKILLs every process working under `dir` (see pidsWorkingUnder); returns how many. */
export function killWorkingUnder(dir: string): number {
  const pids = pidsWorkingUnder(dir)
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      /* already gone */
    }
  }
  return pids.length
}

/** A small seeded PRNG (mulberry32), so that a failing run can be replayed from its seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
