// Leases follow the agent: a harness whose runs keep failing gives its claims
// back with a hand-off note saying why and backs off long; one stopped with
// `agency stop` gives them back too; a run that hangs is killed after
// --harness-run-timeout. Real agentd processes with `cmd:` harnesses.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { Scratch } from '../../helpers/agent-loop.js'
import { waitFor } from '../../helpers/wait-for.js'
import { metricSum, metricsText } from '../../helpers/trust.js'
import type { LocalDaemon } from '../../../src/swarm/local-daemon.js'
import { connectAgency, type Agency } from '../../../src/client/agency.js'
import type { AgencyClient } from '../../../src/gen/agency/v1/api.js'

let scratch: Scratch
const clients: Agency[] = []

afterEach(async () => {
  for (const c of clients.splice(0)) c.close()
  await scratch?.cleanup()
})

function api(d: LocalDaemon): Agency {
  const c = connectAgency(d.grpc)
  clients.push(c)
  return c
}

async function harnessLog(d: LocalDaemon): Promise<string> {
  return await readFile(join(d.dataDir, 'harness.log'), 'utf8').catch(() => '')
}

async function metric(d: LocalDaemon, name: string, labels: Record<string, string> = {}): Promise<number> {
  return metricSum(await metricsText(d.metrics as string), name, labels)
}

async function addTask(a: Agency, id: string): Promise<void> {
  await a.call((c: AgencyClient) => c.addTask, { id, title: id, description: '', deps: [], scope: [`${id}/**`], priority: 0 })
}

describe('a harness and its claims', () => {
  it('three failed runs release the claims with a note saying why, and the harness backs off instead of restarting', async () => {
    scratch = new Scratch()
    // Each run claims the task once it exists (it is held from the first run on), then fails.
    const d = await scratch.daemon('failing', {
      extraArgs: [
        '--metrics',
        '127.0.0.1:0',
        '--settle-ms',
        '200',
        '--harness',
        'cmd:until agency claim t1 >/dev/null 2>&1; do sleep 0.2; done; echo quota used up >&2; exit 7'
      ]
    })
    const a = api(d)
    await addTask(a, 't1')
    const status = await waitFor(
      async () => {
        const s = await a.call((c: AgencyClient) => c.getStatus, {})
        return s.harness?.state === 'failing' ? s : undefined
      },
      { what: 'the harness to be failing', timeoutMs: 60_000 }
    )
    expect(status.harness).toMatchObject({ name: expect.stringContaining('cmd:'), recentFailures: 3 })
    expect(status.harness?.note).toContain('exited with code 7')
    const t = (await a.call((c: AgencyClient) => c.getTask, { id: 't1' })).task
    expect(t?.state).toBe('open')
    expect(t?.handoff).toContain('keeps failing')
    expect(t?.handoff).toContain('quota used up')
    expect(await metric(d, 'agentd_harness_failures_total')).toBeGreaterThanOrEqual(3)
    expect(await metric(d, 'agentd_harness_state', { state: 'failing' })).toBe(1)
    expect(await harnessLog(d)).toMatch(/next start in 600 s/)
  }, 120_000)

  it('agency stop gives the claims back; a run past --harness-run-timeout is killed and counted', async () => {
    scratch = new Scratch()
    const d = await scratch.daemon('hanging', {
      extraArgs: [
        '--metrics',
        '127.0.0.1:0',
        '--settle-ms',
        '200',
        '--harness-run-timeout',
        '3s',
        '--harness',
        'cmd:until agency claim t2 >/dev/null 2>&1; do sleep 0.2; done; exec sleep 1000'
      ]
    })
    const a = api(d)
    await addTask(a, 't2')
    await waitFor(async () => (await harnessLog(d)).includes('run timeout'), {
      what: 'the run to be killed for its length',
      timeoutMs: 60_000
    })
    expect(await metric(d, 'agentd_harness_run_timeouts_total')).toBeGreaterThanOrEqual(1)
    await waitFor(async () => (await a.call((c: AgencyClient) => c.getTask, { id: 't2' })).task?.holder === d.peerId, {
      what: 'the restarted run to hold t2 again',
      timeoutMs: 60_000
    })
    const stopped = await a.call((c: AgencyClient) => c.stopHarness, {})
    expect(stopped.stopped).toBe(true)
    const t = await waitFor(
      async () => {
        const task = (await a.call((c: AgencyClient) => c.getTask, { id: 't2' })).task
        return task?.state === 'open' ? task : undefined
      },
      { what: 't2 to be released' }
    )
    expect(t.handoff).toContain('agency stop')
    expect((await a.call((c: AgencyClient) => c.getStatus, {})).harness?.state).toBe('stopped')
  }, 120_000)
})
