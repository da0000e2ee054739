// Daemons inside the test process: many at once over the libp2p memory
// transport, or one over TCP beside real agentd processes. No gRPC server and
// no default process metrics (those are per process, not per daemon).
import { randomUUID } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Daemon } from '../../src/daemon/daemon.js'
import type { DaemonConfig } from '../../src/daemon/config.js'
import type { Event } from '../../src/gen/agency/v1/api.js'

export type InProcessOptions = Partial<Omit<DaemonConfig, 'dataDir'>>

/** A listen address on the memory transport, unique to this test run. */
export function memoryAddr(label = 'node'): string {
  return `/memory/agency-test-${label}-${randomUUID()}`
}

/** The daemons of one test file; `stopAll()` (in afterAll) stops them and removes their data dirs. */
export class InProcessDaemons {
  readonly daemons: Daemon[] = []
  private readonly dirs: string[] = []

  /** Starts a daemon on a fresh temp data dir; defaults suit tests (short heartbeat, memory listen address). */
  async start(options: InProcessOptions = {}): Promise<Daemon> {
    const dataDir = await mkdtemp(join(tmpdir(), 'agency-inproc-'))
    this.dirs.push(dataDir)
    const daemon = new Daemon({
      listen: [memoryAddr()],
      grpc: null,
      metrics: null,
      processMetrics: false,
      heartbeatMs: 500,
      liveTimeoutMs: 8000,
      dmRetryMs: 500,
      ...options,
      dataDir
    })
    await daemon.start()
    this.daemons.push(daemon)
    return daemon
  }

  async stopAll(): Promise<void> {
    await Promise.allSettled(
      this.daemons.splice(0).map(async d => {
        await d.stop()
      })
    )
    await Promise.all(
      this.dirs.splice(0).map(async dir => {
        await rm(dir, { recursive: true, force: true })
      })
    )
  }
}

/** Collects a daemon's events from now on; `stop()` unsubscribes. */
export function recordEvents(daemon: Daemon): { events: Event[]; stop: () => void } {
  const events: Event[] = []
  const stop = daemon.events.subscribe(e => {
    events.push(e)
  })
  return { events, stop }
}
