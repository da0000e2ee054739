// Shared by the agents-in-the-loop tests: where the built CLIs are, temp dirs,
// local agentd processes that are always stopped, a poll-until helper, and
// process checks. These tests run the compiled code (build first: npx tsc -p .).
import { execFile } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { startLocalDaemon, type LocalDaemon, type LocalDaemonOptions } from '../../src/swarm/local-daemon.js'

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url))
export const AGENCY_BIN = join(REPO_ROOT, 'dist/src/cli/agency.js')
export const AGENTD_BIN = join(REPO_ROOT, 'dist/src/cli/agentd.js')

export const execFileP = promisify(execFile)

export function assertBuilt(): void {
  for (const f of [AGENCY_BIN, AGENTD_BIN]) {
    if (!existsSync(f)) throw new Error(`${f} is missing: build first (npx tsc -p .)`)
  }
}

/** Temp dirs and daemons of one test file; `cleanup()` stops and removes them all. */
export class Scratch {
  private readonly dirs: string[] = []
  private readonly daemons: LocalDaemon[] = []
  private readonly onExit = (): void => {
    for (const d of this.daemons) {
      try {
        d.child.kill('SIGKILL')
      } catch {
        /* gone */
      }
    }
  }

  constructor() {
    process.once('exit', this.onExit)
  }

  async dir(prefix = 'agency-agents-'): Promise<string> {
    const d = await mkdtemp(join(tmpdir(), prefix))
    this.dirs.push(d)
    return d
  }

  /** A local agentd on loopback with a short heartbeat, in a fresh temp data dir. */
  async daemon(name: string, o: Partial<LocalDaemonOptions> = {}): Promise<LocalDaemon> {
    assertBuilt()
    const home = await this.dir(`agency-${name}-`)
    const logFile = o.logFile ?? join(home, 'agentd.log')
    let d: LocalDaemon
    try {
      d = await startLocalDaemon({
        name,
        dataDir: join(home, 'data'),
        logFile,
        ...o,
        extraArgs: ['--heartbeat-ms', '400', '--live-timeout-ms', '4000', ...(o.extraArgs ?? [])]
      })
    } catch (err) {
      // Say why: the daemon's stderr is in its log file.
      const log = await readFile(logFile, 'utf8').catch(() => '')
      throw new Error(`${(err as Error).message}\n${log.slice(-4000)}`, { cause: err })
    }
    this.daemons.push(d)
    return d
  }

  async cleanup(): Promise<void> {
    await Promise.all(
      this.daemons.splice(0).map(async d => {
        // SIGTERM for a clean shutdown (the harness is stopped with it); SIGKILL if it hangs.
        const kill = setTimeout(() => {
          d.child.kill('SIGKILL')
        }, 15_000)
        try {
          await d.stop('SIGTERM')
        } finally {
          clearTimeout(kill)
        }
      })
    )
    await Promise.all(
      this.dirs.splice(0).map(async d => {
        await rm(d, { recursive: true, force: true })
      })
    )
    process.off('exit', this.onExit)
  }
}

/** Dead, or a zombie nobody reaps (PID 1 in a container may not reap). */
export function isGone(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch {
    return true
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z') ?? false
  } catch {
    return true
  }
}

/** The value of an unlabelled metric on a Prometheus text page (NaN if absent). */
export async function metricValue(hostPort: string, name: string): Promise<number> {
  const res = await fetch(`http://${hostPort}/metrics`)
  if (!res.ok) throw new Error(`GET /metrics: ${res.status}`)
  const line = (await res.text()).split('\n').find(l => l.startsWith(`${name} `))
  return line == null ? NaN : Number(line.slice(name.length + 1))
}
