// An agent held at the budget keeps its claims for the time agentd states
// (--budget-keep-leases), then gives them back with a hand-off note; raising
// the cap lets it start again. One real agentd with a `cmd:` harness whose runs
// claim a task; the budget is an agent-hours cap a single run passes (a `cmd:`
// run reports no tokens, only its run time).
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { AGENCY_BIN, Scratch, execFileP } from '../../helpers/agent-loop.js'
import { waitFor } from '../../helpers/wait-for.js'
import type { LocalDaemon } from '../../../src/swarm/local-daemon.js'
import { connectAgency, type Agency } from '../../../src/client/agency.js'
import type { AgencyClient } from '../../../src/gen/agency/v1/api.js'

const KEEP_MS = 3000
let scratch: Scratch
const clients: Agency[] = []

afterEach(async () => {
  for (const c of clients.splice(0)) c.close()
  await scratch?.cleanup()
})

async function agency(d: LocalDaemon, ...args: string[]): Promise<any> {
  const { stdout } = await execFileP(process.execPath, [AGENCY_BIN, ...args, '--addr', d.grpc, '--json'], { timeout: 60_000 })
  return JSON.parse(stdout)
}

describe('claims at the budget', () => {
  it('are kept for --budget-keep-leases from the first held start, then given back with a note; a raised cap starts the agent again', async () => {
    scratch = new Scratch()
    const d = await scratch.daemon('thrifty', {
      extraArgs: [
        '--settle-ms',
        '200',
        '--budget-keep-leases',
        `${KEEP_MS}ms`,
        '--harness',
        'cmd:until agency claim t1 >/dev/null 2>&1; do sleep 0.2; done; sleep 1.5'
      ]
    })
    const a = connectAgency(d.grpc)
    clients.push(a)
    await a.call((c: AgencyClient) => c.addTask, { id: 't1', title: 't1', description: '', deps: [], scope: ['t1/**'], priority: 0 })
    await waitFor(
      async () => {
        const t = (await a.call((c: AgencyClient) => c.getTask, { id: 't1' })).task
        return t?.holder === d.peerId && t
      },
      { what: 'the agent to claim t1', timeoutMs: 60_000 }
    )
    // one second of agent time: the first recorded run passes it
    expect((await agency(d, 'budget', 'set', '--hours', String(1 / 3600))).budget.hours).toBeGreaterThan(0)

    await waitFor(async () => (await a.call((c: AgencyClient) => c.getStatus, {})).harness?.state === 'held', {
      what: 'the budget to hold the harness',
      timeoutMs: 60_000
    })
    const released = await waitFor(
      async () => {
        const t = (await a.call((c: AgencyClient) => c.getTask, { id: 't1' })).task
        return t?.state === 'open' && t
      },
      { what: 't1 to be given back', timeoutMs: 60_000 }
    )
    expect(released.handoff).toContain(`the budget held this agent longer than the ${KEEP_MS / 1000} s its tasks are kept for`)

    // kept for the stated time: the release was written no sooner than KEEP_MS after the first held start
    // (the harness log's note is written just after the gate is asked, on the same clock, to the millisecond)
    const log = await readFile(join(d.dataDir, 'harness.log'), 'utf8')
    const heldAt = /\[([^\]]+)\] agentd: not starting a run: budget reached/.exec(log)
    expect(heldAt).not.toBeNull()
    const releases = (await agency(d, 'log', '--kind', 'release')) as Array<{ time: number | string }>
    expect(releases).toHaveLength(1)
    expect(Number(releases[0].time)).toBeGreaterThanOrEqual(Date.parse((heldAt as RegExpExecArray)[1]) + KEEP_MS - 1)

    // the cap removed: the agent starts again and takes its task back
    await agency(d, 'budget', 'set', '--hours', '0')
    await waitFor(
      async () => {
        const t = (await a.call((c: AgencyClient) => c.getTask, { id: 't1' })).task
        return t?.holder === d.peerId
      },
      { what: 'the agent to claim t1 again', timeoutMs: 60_000 }
    )
  }, 150_000)
})
