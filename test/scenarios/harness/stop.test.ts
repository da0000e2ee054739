// The daemon's harness service, end to end: agentd runs a `cmd:` harness in
// the agent's workspace with AGENCY_ADDR and AGENCY_AGENT_ID, appends its
// output to <dataDir>/harness.log, restarts it when it crashes (counted on
// /metrics), and `agency stop` ends it while the daemon keeps serving.
import { readFile, readlink } from 'node:fs/promises'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { AGENCY_BIN, Scratch, execFileP, isGone, metricValue } from '../../helpers/agent-loop.js'
import { waitFor } from '../../helpers/wait-for.js'
import type { LocalDaemon } from '../../../src/swarm/local-daemon.js'
import { connectAgency } from '../../../src/client/agency.js'
import type { AgencyClient, HarnessInfo } from '../../../src/gen/agency/v1/api.js'
import { HARNESS_MAX_BACKOFF_MS, HARNESS_MIN_BACKOFF_MS } from '../../../src/daemon/harness-service.js'
import { restartDelayMs } from '../../../src/harness/restart-backoff.js'
import { envWithoutAgency } from '../../helpers/agency-free-env.js'

let scratch: Scratch

afterEach(async () => {
  await scratch?.cleanup()
})

/** `agency <args> --addr <daemon> --json`, parsed; rejects with stderr on a non-zero exit. */
async function agency<T = any>(d: LocalDaemon, ...args: string[]): Promise<T> {
  const { stdout } = await execFileP(process.execPath, [AGENCY_BIN, ...args, '--addr', d.grpc, '--json'], {
    env: envWithoutAgency(),
    timeout: 30_000
  })
  return JSON.parse(stdout) as T
}

/** The peer id the daemon's gRPC API answers with: it still serves. */
async function peerIdServed(d: LocalDaemon): Promise<string | undefined> {
  const api = connectAgency(d.grpc)
  try {
    return (await api.call((c: AgencyClient) => c.getStatus, {})).self?.peerId
  } finally {
    api.close()
  }
}

async function harnessLog(d: LocalDaemon): Promise<string> {
  return await readFile(join(d.dataDir, 'harness.log'), 'utf8').catch(() => '')
}

const count = (text: string, re: RegExp): number => (text.match(new RegExp(re.source, 'g')) ?? []).length

/** The pid a `cmd:` harness printed into the harness log, once it has. */
async function printedPid(d: LocalDaemon, marker: string): Promise<number> {
  const m = await waitFor(async () => new RegExp(`${marker} (\\d+)`).exec(await harnessLog(d)), {
    what: 'the harness to print its pid into harness.log',
    timeoutMs: 60_000
  })
  return Number(m[1])
}

function environOf(pid: number): Map<string, string> {
  const raw = readFileSync(`/proc/${pid}/environ`, 'utf8')
  return new Map(
    raw
      .split('\0')
      .filter(kv => kv.includes('='))
      .map(kv => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)])
  )
}

describe('agentd --harness cmd:...', () => {
  it("runs the harness in the workspace with the agent's environment; `agency stop` ends it and the daemon keeps serving", async () => {
    scratch = new Scratch()
    // `exec` makes the printed shell pid the long-running program's pid.
    // --sandbox none: the test reads the harness's pid, cwd and environment from the host's /proc (a box has its own pids).
    const d = await scratch.daemon('stopper', { extraArgs: ['--sandbox', 'none', '--harness', 'cmd:echo harness-pid $$; exec sleep 1000'] })
    const pid = await printedPid(d, 'harness-pid')
    expect(isGone(pid)).toBe(false)
    // The shell prints its pid before it execs: on a quick machine the test reads it first.
    await waitFor(() => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] === 'sleep', {
      what: 'the harness shell to exec sleep',
      timeoutMs: 30_000
    })
    expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')).toEqual(['sleep', '1000', ''])
    const env = environOf(pid)
    expect(env.get('AGENCY_ADDR')).toBe(d.grpc)
    expect(env.get('AGENCY_AGENT_ID')).toBe(d.peerId)
    expect(env.get('AGENCY_AGENT_NAME')).toBe('stopper')
    // No repository: the workspace is <dataDir>/work.
    expect(await readlink(`/proc/${pid}/cwd`)).toBe(join(d.dataDir, 'work'))

    const stopped = await agency<{ stopped: boolean }>(d, 'stop')
    expect(stopped).toEqual({ stopped: true })
    // stop answers once the harness has exited.
    expect(isGone(pid)).toBe(true)

    // The daemon keeps serving, and knows there is nothing left to stop.
    expect(d.child.exitCode).toBeNull()
    expect(await peerIdServed(d)).toBe(d.peerId)
    expect(await agency<{ stopped: boolean }>(d, 'stop')).toEqual({ stopped: false })
    const log = await harnessLog(d)
    expect(count(log, /agentd: starting /)).toBe(1)
    expect(log).toMatch(/harness exited \(code null, signal SIGTERM\)/)
  }, 120_000)

  it('restarts a harness that crashes, counts the restarts on /metrics, logs each run; stop ends supervision between two runs', async () => {
    scratch = new Scratch()
    const d = await scratch.daemon('crasher', {
      extraArgs: ['--harness', 'cmd:echo "crash of $AGENCY_AGENT_ID"; exit 1', '--metrics', '127.0.0.1:0']
    })
    expect(d.metrics).toBeDefined()
    const metrics = d.metrics as string
    const api = connectAgency(d.grpc)
    const harness = async (): Promise<HarnessInfo | undefined> => (await api.call((c: AgencyClient) => c.getStatus, {})).harness
    try {
      // Backing off after its second crash, the restart due the second backoff
      // delay after it (a third crash would make it failing, with a long wait).
      await waitFor(
        async () => {
          const h = await harness()
          return h?.state === 'backing_off' && h.restarts === 1
        },
        { what: 'the backoff after the second crash', timeoutMs: 60_000 }
      )
      // Between two runs the harness is waiting for its restart: stop ends that too.
      expect((await api.call((c: AgencyClient) => c.stopHarness, {})).stopped).toBe(true)
      const log = await harnessLog(d)
      expect(count(log, new RegExp(`crash of ${d.peerId}`))).toBe(2)
      expect(count(log, /harness exited \(code 1, signal null\)/)).toBe(2)
      expect(count(log, /agentd: starting /)).toBe(2)
      expect(await metricValue(metrics, 'agentd_harness_restarts_total')).toBe(1)

      expect(await agency<{ stopped: boolean }>(d, 'stop')).toEqual({ stopped: false })
      // The restart stop cancelled was due this long after the second crash: nothing starts.
      await new Promise(resolve => setTimeout(resolve, restartDelayMs(2, HARNESS_MIN_BACKOFF_MS, HARNESS_MAX_BACKOFF_MS)))
      expect((await harness())?.state).toBe('stopped')
      expect(await metricValue(metrics, 'agentd_harness_restarts_total')).toBe(1)
      expect(count(await harnessLog(d), /agentd: starting /)).toBe(2)
    } finally {
      api.close()
    }
    expect(d.child.exitCode).toBeNull()
    expect(await peerIdServed(d)).toBe(d.peerId)
  }, 120_000)

  it('a daemon shutting down takes its harness down with it', async () => {
    scratch = new Scratch()
    const d = await scratch.daemon('leaver', { extraArgs: ['--sandbox', 'none', '--harness', 'cmd:echo leaver-pid $$; exec sleep 1000'] })
    const pid = await printedPid(d, 'leaver-pid')
    expect(isGone(pid)).toBe(false)
    const code = await d.stop('SIGTERM')
    // The signal too, should it ever exit by one (seen once on a loaded machine; the log says why).
    expect(
      { code, signal: d.child.signalCode },
      (await readFile(join(d.dataDir, '..', 'agentd.log'), 'utf8').catch(() => 'no agentd.log')).slice(-3000)
    ).toEqual({ code: 0, signal: null })
    await waitFor(() => isGone(pid), { what: 'the harness to be gone after agentd exited', timeoutMs: 10_000 })
  }, 120_000)
})
