// `agency assist` on the command line, against a real agentd: nothing to
// assist is an answer (exit 4) that says why; bad input is one clear line
// naming the fix, and writes nothing to the log.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AGENCY_BIN, Scratch, execFileP } from '../../helpers/agent-loop.js'
import type { LocalDaemon } from '../../../src/swarm/local-daemon.js'
import { connectAgency } from '../../../src/client/agency.js'
import type { AgencyClient } from '../../../src/gen/agency/v1/api.js'
import { envWithoutAgency } from '../../helpers/agency-free-env.js'

const scratch = new Scratch()
let d: LocalDaemon

beforeAll(async () => {
  d = await scratch.daemon('assist-cli', { extraArgs: ['--settle-ms', '200', '--assist-after', '0'] })
})
afterAll(async () => {
  await scratch.cleanup()
})

async function agency(...args: string[]): Promise<string> {
  return (await execFileP(process.execPath, [AGENCY_BIN, '--addr', d.grpc, ...args], { env: envWithoutAgency(), timeout: 30_000 })).stdout
}

/** The CLI's failure: exit code and what it printed. */
async function failure(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    await agency(...args)
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string }
    return { code: e.code, stdout: e.stdout, stderr: e.stderr }
  }
  throw new Error(`agency ${args.join(' ')} succeeded`)
}

async function logSize(): Promise<number> {
  const client = connectAgency(d.grpc)
  try {
    return (await client.call((c: AgencyClient) => c.getStatus, {})).logEntries
  } finally {
    client.close()
  }
}

describe('agency assist', () => {
  it('answers NONE, with the reason, when no peer holds a task', async () => {
    const none = await failure('assist')
    expect(none.code).toBe(4)
    expect(none.stdout).toContain('nothing to assist now: no task is held by a live peer')
  })

  it('refuses bad input with the fix, changing nothing', async () => {
    await agency('task', 'add', 'solo', '--title', 'a task of its own')
    expect(await agency('claim', 'solo')).toContain('HELD solo@1')
    const before = await logSize()
    expect((await failure('assist', '--approach', 'do it twice')).stderr).toMatch(/you hold solo: only an agent that holds no task assists/)
    expect((await failure('assist', '--approach', '  ')).stderr).toContain('--approach needs the approach')
    expect((await failure('assist', '--stop', 'nothing')).stderr).toContain('you assist no task')
    expect((await failure('assist', '--stop', 'x', '--task', 'solo')).stderr).toContain('--stop ends your assist: give it alone')
    await agency('release', 'solo')
    const released = await logSize()
    expect(released).toBe(before + 1)
    expect((await failure('assist', '--task', 'nowhere', '--approach', 'x')).stderr).toContain('no task "nowhere"')
    expect((await failure('assist', '--task', 'solo', '--approach', 'x')).stderr).toContain('claim it instead (agency claim solo)')
    expect(await logSize()).toBe(released)
  })
})
